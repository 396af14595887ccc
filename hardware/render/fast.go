package render

import (
	"math"
	"math/bits"
	"time"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/jsbox"
)

// The fast path. Most animations are arithmetic on frame, t, i and n with
// a few helpers; JavaScript boxes every number such an expression makes,
// which for a strip at 60 fps is most of what the daemon spends. So a
// state whose expression channels all stay within that arithmetic is
// compiled, at SetState, into a tree of Go closures over float64 that
// allocates nothing, and only other states start goja.
//
// The subset, parsed with goja's own parser from the same wrapper as
// compileChannel (so it is the same expression):
//
//   - number literals (not the legacy octal ones strict mode rejects),
//     frame, t, i, n, NaN, Infinity;
//   - unary - + ! ~, binary + - * / % ** & | ^ << >> >>>, the comparisons
//     < <= > >= == != === !==, && and ||, c ? a : b, parentheses;
//   - calls of sin, cos, abs, min, max, floor, random, and of Math's
//     functions but hypot (Math.sign only of a number), and Math's
//     constants;
//   - hsv(h, s, v) as a whole channel (or a branch of a channel's c ? a : b),
//     taking the channel's component, and hsv(h, s, v).r, .g, .b anywhere.
//
// Each operation computes what goja computes, down to the sign of a zero
// (goja multiplies integers as integers, so 0 * -2 is +0 there) and the
// rounding of an integer power; the channels of a pixel run in order r, g,
// b on the pixel's one random stream, each argument and operand left to
// right, so random() gives the same numbers. A state with any other
// channel (getData, strings, statements, other names) runs entirely in
// goja, so that the two never have to share a pixel's random stream.
// Errors are goja's too: NaN stops the frame with the same message, and
// a frame that runs past EvalTimeout times out.

// maxFastNodes bounds the size of a channel on the fast path (a larger
// one runs in goja), so that the fast path too stays within EvalTimeout
// for all but the longest strips.
const maxFastNodes = 256

// maxSafeInt is the largest integer goja keeps as an integer.
const maxSafeInt = 1 << 53

// env is what a compiled channel reads: the variables and the pixel's
// random stream.
type env struct {
	frame, t, i, n float64
	rng            pixelRand
}

type (
	numFn  func(*env) float64
	boolFn func(*env) bool
)

// fastProgram is a state's expression channels compiled to Go (nil: a
// numeric channel). It is not safe for concurrent use, like the Renderer
// that owns it.
type fastProgram struct {
	ch     [3]numFn
	random bool // some channel calls random(): seed each pixel's stream
	env    env
}

// compileFast compiles the expression channels of exprs (empty: numeric)
// for the fast path, or returns nil when one of them needs JavaScript.
func compileFast(exprs [3]string) *fastProgram {
	p := &fastProgram{}
	some := false
	for c, src := range exprs {
		if src == "" {
			continue
		}
		e := parseExpression(channelNames[c], src)
		if e == nil {
			return nil
		}
		fc := &fastCompiler{}
		f, ok := fc.channel(e, c)
		if !ok || fc.nodes > maxFastNodes {
			return nil
		}
		p.ch[c], p.random, some = f, p.random || fc.random, true
	}
	if !some {
		return nil
	}
	return p
}

// parseExpression parses src as compileChannel does first, and returns
// the expression it returns, or nil if it is not a single expression (a
// syntax error, or a function body).
func parseExpression(name, src string) ast.Expression {
	prog, err := jsbox.Parse(name, chanHead+src+chanTail)
	if err != nil || !wellFormed(prog, true) {
		return nil
	}
	fl := prog.Body[0].(*ast.ExpressionStatement).Expression.(*ast.FunctionLiteral)
	return fl.Body.List[1].(*ast.ReturnStatement).Argument
}

// frame computes the pixels of dst like engine.frame, within timeout
// (checked every 64 pixels: only a long strip with large expressions
// comes near it).
func (p *fastProgram) frame(frame int, t float64, seed uint64, base hardware.RGB, dst []hardware.RGB, timeout time.Duration) error {
	e := &p.env
	e.frame, e.t, e.n = float64(frame), t, float64(len(dst))
	var start time.Time
	if len(dst) >= 64 {
		start = time.Now()
	}
	for i := range dst {
		if i&63 == 63 && time.Since(start) > timeout {
			return timeoutError(timeout, frame)
		}
		e.i = float64(i)
		if p.random {
			e.rng.seed(seed, frame, i)
		}
		px := base
		for c, f := range p.ch {
			if f == nil {
				continue
			}
			v := f(e)
			if v != v {
				return notNumber(c, i, frame, 0)
			}
			switch c {
			case 0:
				px.R = jsChannel(v)
			case 1:
				px.G = jsChannel(v)
			default:
				px.B = jsChannel(v)
			}
		}
		dst[i] = px
	}
	return nil
}

// jsChannel is frameJS's v >= 255 ? 255 : v > 0 ? Math.round(v) : 0.
func jsChannel(v float64) uint8 {
	switch {
	case v >= 255:
		return 255
	case v > 0:
		return uint8(jsRound(v))
	}
	return 0
}

// ---- compiling ----

// The static types of an expression, as a set: what it may give.
const (
	tNum = 1 << iota
	tBool
	tColor // what hsv() gives
)

type fastCompiler struct {
	nodes  int
	random bool
}

// channel compiles the whole expression of channel ch: a number, or a
// color of which the channel takes its component.
func (c *fastCompiler) channel(e ast.Expression, ch int) (numFn, bool) {
	switch x := e.(type) {
	case *ast.CallExpression:
		if isName(x.Callee, "hsv") {
			c.nodes++
			return c.hsv(x, ch)
		}
	case *ast.ConditionalExpression:
		c.nodes++
		test, ok1 := c.bool(x.Test)
		a, ok2 := c.channel(x.Consequent, ch)
		b, ok3 := c.channel(x.Alternate, ch)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		return cond(test, a, b), true
	}
	if typeOf(e) != tNum {
		return nil, false // a boolean, or a color where it cannot be taken apart: goja says what is wrong
	}
	return c.num(e)
}

// typeOf is what e may give, for an expression that compiles.
func typeOf(e ast.Expression) int {
	switch x := e.(type) {
	case *ast.UnaryExpression:
		if x.Operator == token.NOT {
			return tBool
		}
		return tNum
	case *ast.BinaryExpression:
		switch x.Operator {
		case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL,
			token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL:
			return tBool
		case token.LOGICAL_AND, token.LOGICAL_OR:
			return typeOf(x.Left) | typeOf(x.Right)
		}
		return tNum
	case *ast.ConditionalExpression:
		return typeOf(x.Consequent) | typeOf(x.Alternate)
	case *ast.CallExpression:
		if isName(x.Callee, "hsv") {
			return tColor
		}
		return tNum
	case *ast.NumberLiteral, *ast.Identifier, *ast.DotExpression:
		return tNum
	}
	return 0
}

func isName(e ast.Expression, name string) bool {
	id, ok := e.(*ast.Identifier)
	return ok && string(id.Name) == name
}

// constant reports whether e depends on nothing: no variable and no
// random(), so that it can be computed once.
func constant(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.NumberLiteral:
		return true
	case *ast.Identifier:
		return x.Name == "NaN" || x.Name == "Infinity"
	case *ast.UnaryExpression:
		return constant(x.Operand)
	case *ast.BinaryExpression:
		return constant(x.Left) && constant(x.Right)
	case *ast.ConditionalExpression:
		return constant(x.Test) && constant(x.Consequent) && constant(x.Alternate)
	case *ast.DotExpression:
		return isName(x.Left, "Math") || constant(x.Left)
	case *ast.CallExpression:
		for _, a := range x.ArgumentList {
			if !constant(a) {
				return false
			}
		}
		switch callee := x.Callee.(type) {
		case *ast.Identifier:
			return callee.Name != "random"
		case *ast.DotExpression:
			return callee.Identifier.Name != "random"
		}
	}
	return false
}

// pure reports whether evaluating e has no effect: it does not call
// random(). A pure expression whose value is not used need not run.
func pure(e ast.Expression) bool {
	switch x := e.(type) {
	case *ast.UnaryExpression:
		return pure(x.Operand)
	case *ast.BinaryExpression:
		return pure(x.Left) && pure(x.Right)
	case *ast.ConditionalExpression:
		return pure(x.Test) && pure(x.Consequent) && pure(x.Alternate)
	case *ast.DotExpression:
		return pure(x.Left)
	case *ast.CallExpression:
		for _, a := range x.ArgumentList {
			if !pure(a) {
				return false
			}
		}
		switch callee := x.Callee.(type) {
		case *ast.Identifier:
			return callee.Name != "random"
		case *ast.DotExpression:
			return callee.Identifier.Name != "random"
		}
	}
	return true
}

func konst(v float64) numFn { return func(*env) float64 { return v } }

// num compiles e for its value as a number (a boolean counts as 0 or 1,
// as arithmetic takes it).
func (c *fastCompiler) num(e ast.Expression) (numFn, bool) {
	c.nodes++
	if c.nodes > maxFastNodes {
		return nil, false
	}
	f, ok := c.num1(e)
	if ok && constant(e) {
		f = konst(f(&env{}))
	}
	return f, ok
}

func (c *fastCompiler) num1(e ast.Expression) (numFn, bool) {
	switch x := e.(type) {
	case *ast.NumberLiteral:
		if l := x.Literal; len(l) > 1 && l[0] == '0' && l[1] >= '0' && l[1] <= '9' {
			return nil, false // legacy octal: a syntax error in strict mode
		}
		switch v := x.Value.(type) {
		case int64:
			return konst(float64(v)), true
		case float64:
			return konst(v), true
		}
		return nil, false // a BigInt
	case *ast.Identifier:
		switch x.Name {
		case "frame":
			return func(e *env) float64 { return e.frame }, true
		case "t":
			return func(e *env) float64 { return e.t }, true
		case "i":
			return func(e *env) float64 { return e.i }, true
		case "n":
			return func(e *env) float64 { return e.n }, true
		case "NaN":
			return konst(math.NaN()), true
		case "Infinity":
			return konst(math.Inf(1)), true
		}
	case *ast.UnaryExpression:
		return c.unary(x)
	case *ast.BinaryExpression:
		return c.binary(x)
	case *ast.ConditionalExpression:
		test, ok1 := c.bool(x.Test)
		a, ok2 := c.num(x.Consequent)
		b, ok3 := c.num(x.Alternate)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		return cond(test, a, b), true
	case *ast.CallExpression:
		return c.call(x)
	case *ast.DotExpression:
		return c.member(x)
	}
	return nil, false
}

func cond(test boolFn, a, b numFn) numFn {
	return func(e *env) float64 {
		if test(e) {
			return a(e)
		}
		return b(e)
	}
}

func (c *fastCompiler) unary(x *ast.UnaryExpression) (numFn, bool) {
	if x.Postfix {
		return nil, false
	}
	switch x.Operator {
	case token.NOT:
		b, ok := c.bool(x)
		if !ok {
			return nil, false
		}
		return boolNum(b), true
	case token.MINUS, token.PLUS, token.BITWISE_NOT:
	default:
		return nil, false
	}
	a, ok := c.num(x.Operand)
	if !ok {
		return nil, false
	}
	switch x.Operator {
	case token.MINUS:
		return func(e *env) float64 { return -a(e) }, true
	case token.BITWISE_NOT:
		return func(e *env) float64 { return float64(^toInt32(a(e))) }, true
	}
	return a, true // unary +
}

func boolNum(b boolFn) numFn {
	return func(e *env) float64 {
		if b(e) {
			return 1
		}
		return 0
	}
}

func truthy(v float64) bool { return v == v && v != 0 }

func (c *fastCompiler) binary(x *ast.BinaryExpression) (numFn, bool) {
	switch x.Operator {
	case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL,
		token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL:
		b, ok := c.bool(x)
		if !ok {
			return nil, false
		}
		return boolNum(b), true
	}
	l, ok1 := c.num(x.Left)
	r, ok2 := c.num(x.Right)
	if !ok1 || !ok2 {
		return nil, false
	}
	switch x.Operator {
	case token.LOGICAL_AND: // as a number: the left one if it is falsy
		return func(e *env) float64 {
			if v := l(e); !truthy(v) {
				return v
			}
			return r(e)
		}, true
	case token.LOGICAL_OR:
		return func(e *env) float64 {
			if v := l(e); truthy(v) {
				return v
			}
			return r(e)
		}, true
	}
	op := arith(x.Operator)
	if op == nil {
		return nil, false
	}
	return arithFn(x.Operator, op, l, r, x.Left, x.Right), true
}

// arith is a binary operator of numbers, as goja computes it.
func arith(op token.Token) func(a, b float64) float64 {
	switch op {
	case token.PLUS:
		return func(a, b float64) float64 { return a + b }
	case token.MINUS:
		return func(a, b float64) float64 { return a - b }
	case token.MULTIPLY:
		return jsMul
	case token.SLASH:
		return func(a, b float64) float64 { return a / b }
	case token.REMAINDER:
		return math.Mod
	case token.EXPONENT:
		return jsPow
	case token.AND:
		return func(a, b float64) float64 { return float64(toInt32(a) & toInt32(b)) }
	case token.OR:
		return func(a, b float64) float64 { return float64(toInt32(a) | toInt32(b)) }
	case token.EXCLUSIVE_OR:
		return func(a, b float64) float64 { return float64(toInt32(a) ^ toInt32(b)) }
	case token.SHIFT_LEFT:
		return func(a, b float64) float64 { return float64(toInt32(a) << (toUint32(b) & 31)) }
	case token.SHIFT_RIGHT:
		return func(a, b float64) float64 { return float64(toInt32(a) >> (toUint32(b) & 31)) }
	case token.UNSIGNED_SHIFT_RIGHT:
		return func(a, b float64) float64 { return float64(toUint32(a) >> (toUint32(b) & 31)) }
	}
	return nil
}

// arithFn applies op to l and r, with the common shapes (a variable or a
// constant on one side, + - * /) spelled out so that a frame makes fewer
// calls. Each closure does one operation, so that nothing is fused into
// a multiply-add that goja would round twice.
func arithFn(tok token.Token, op func(a, b float64) float64, l, r numFn, le, re ast.Expression) numFn {
	if constant(re) {
		k := r(nil)
		switch tok {
		case token.PLUS:
			return func(e *env) float64 { return l(e) + k }
		case token.MINUS:
			return func(e *env) float64 { return l(e) - k }
		case token.MULTIPLY:
			return func(e *env) float64 { return jsMul(l(e), k) }
		case token.SLASH:
			return func(e *env) float64 { return l(e) / k }
		}
		return func(e *env) float64 { return op(l(e), k) }
	}
	if constant(le) {
		k := l(nil)
		switch tok {
		case token.PLUS:
			return func(e *env) float64 { return k + r(e) }
		case token.MINUS:
			return func(e *env) float64 { return k - r(e) }
		case token.MULTIPLY:
			return func(e *env) float64 { return jsMul(k, r(e)) }
		}
		return func(e *env) float64 { return op(k, r(e)) }
	}
	switch tok {
	case token.PLUS:
		return func(e *env) float64 {
			a := l(e)
			return a + r(e)
		}
	case token.MINUS:
		return func(e *env) float64 {
			a := l(e)
			return a - r(e)
		}
	case token.MULTIPLY:
		return func(e *env) float64 {
			a := l(e)
			return jsMul(a, r(e))
		}
	}
	return func(e *env) float64 {
		a := l(e)
		return op(a, r(e))
	}
}

// bool compiles e for its truth, as a condition takes it.
func (c *fastCompiler) bool(e ast.Expression) (boolFn, bool) {
	c.nodes++
	if c.nodes > maxFastNodes {
		return nil, false
	}
	switch x := e.(type) {
	case *ast.UnaryExpression:
		if x.Operator == token.NOT && !x.Postfix {
			b, ok := c.bool(x.Operand)
			if !ok {
				return nil, false
			}
			return func(e *env) bool { return !b(e) }, true
		}
	case *ast.BinaryExpression:
		switch x.Operator {
		case token.LOGICAL_AND, token.LOGICAL_OR:
			l, ok1 := c.bool(x.Left)
			r, ok2 := c.bool(x.Right)
			if !ok1 || !ok2 {
				return nil, false
			}
			if x.Operator == token.LOGICAL_AND {
				return func(e *env) bool { return l(e) && r(e) }, true
			}
			return func(e *env) bool { return l(e) || r(e) }, true
		case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL,
			token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL:
			return c.compare(x)
		}
	case *ast.ConditionalExpression:
		test, ok1 := c.bool(x.Test)
		a, ok2 := c.bool(x.Consequent)
		b, ok3 := c.bool(x.Alternate)
		if !ok1 || !ok2 || !ok3 {
			return nil, false
		}
		return func(e *env) bool {
			if test(e) {
				return a(e)
			}
			return b(e)
		}, true
	}
	if typeOf(e) != tNum {
		return nil, false
	}
	n, ok := c.num(e)
	if !ok {
		return nil, false
	}
	return func(e *env) bool { return truthy(n(e)) }, true
}

// compare compiles a comparison. Equality needs both sides of one type (a
// boolean is never === a number); order compares booleans as 0 and 1.
func (c *fastCompiler) compare(x *ast.BinaryExpression) (boolFn, bool) {
	switch x.Operator {
	case token.EQUAL, token.NOT_EQUAL, token.STRICT_EQUAL, token.STRICT_NOT_EQUAL:
		if tl, tr := typeOf(x.Left), typeOf(x.Right); tl != tr || (tl != tNum && tl != tBool) {
			return nil, false
		}
	default:
		if typeOf(x.Left)&^(tNum|tBool) != 0 || typeOf(x.Right)&^(tNum|tBool) != 0 {
			return nil, false
		}
	}
	l, ok1 := c.num(x.Left)
	r, ok2 := c.num(x.Right)
	if !ok1 || !ok2 {
		return nil, false
	}
	switch x.Operator {
	case token.LESS:
		return func(e *env) bool {
			a := l(e)
			return a < r(e)
		}, true
	case token.LESS_OR_EQUAL:
		return func(e *env) bool {
			a := l(e)
			return a <= r(e)
		}, true
	case token.GREATER:
		return func(e *env) bool {
			a := l(e)
			return a > r(e)
		}, true
	case token.GREATER_OR_EQUAL:
		return func(e *env) bool {
			a := l(e)
			return a >= r(e)
		}, true
	case token.EQUAL, token.STRICT_EQUAL:
		return func(e *env) bool {
			a := l(e)
			return a == r(e)
		}, true
	}
	return func(e *env) bool {
		a := l(e)
		return a != r(e)
	}, true
}

// member compiles Math's constants and hsv(…).r, .g, .b.
func (c *fastCompiler) member(x *ast.DotExpression) (numFn, bool) {
	name := string(x.Identifier.Name)
	if isName(x.Left, "Math") {
		if v, ok := mathConstants[name]; ok {
			return konst(v), true
		}
		return nil, false
	}
	call, ok := x.Left.(*ast.CallExpression)
	if !ok || !isName(call.Callee, "hsv") {
		return nil, false
	}
	for ch, n := range channelNames {
		if name == n {
			c.nodes++
			return c.hsv(call, ch)
		}
	}
	return nil, false
}

var mathConstants = map[string]float64{
	"E": math.E, "LN10": math.Ln10, "LN2": math.Ln2, "LOG10E": math.Log10E, "LOG2E": math.Log2E,
	"PI": math.Pi, "SQRT1_2": math.Sqrt2 / 2, "SQRT2": math.Sqrt2,
}

// math1 are Math's functions of one number.
var math1 = map[string]func(float64) float64{
	"abs": math.Abs, "acos": math.Acos, "acosh": math.Acosh, "asin": math.Asin, "asinh": math.Asinh,
	"atan": math.Atan, "atanh": math.Atanh, "cbrt": math.Cbrt, "ceil": math.Ceil, "cos": math.Cos,
	"cosh": math.Cosh, "exp": math.Exp, "expm1": math.Expm1, "floor": math.Floor, "log": math.Log,
	"log1p": math.Log1p, "log10": math.Log10, "log2": math.Log2, "sin": math.Sin, "sinh": math.Sinh,
	"sqrt": math.Sqrt, "tan": math.Tan, "tanh": math.Tanh, "trunc": math.Trunc,
	"fround": func(x float64) float64 { return float64(float32(x)) },
	"round":  jsRound,
	"sign":   jsSign,
	"clz32":  func(x float64) float64 { return float64(bits.LeadingZeros32(toUint32(x))) },
}

// math2 are Math's functions of two numbers.
var math2 = map[string]func(a, b float64) float64{
	"atan2": math.Atan2,
	"pow":   jsPow,
	"imul":  func(a, b float64) float64 { return float64(int32(toUint32(a) * toUint32(b))) },
}

// globals are the helpers mathJS makes global: Math's.
var globals = map[string]bool{"sin": true, "cos": true, "abs": true, "min": true, "max": true, "floor": true}

func (c *fastCompiler) call(x *ast.CallExpression) (numFn, bool) {
	var name string
	switch callee := x.Callee.(type) {
	case *ast.Identifier:
		name = string(callee.Name)
		if !globals[name] && name != "random" {
			return nil, false
		}
	case *ast.DotExpression:
		if !isName(callee.Left, "Math") {
			return nil, false
		}
		name = string(callee.Identifier.Name)
	default:
		return nil, false
	}
	args := make([]numFn, len(x.ArgumentList))
	for k, a := range x.ArgumentList {
		f, ok := c.num(a)
		if !ok {
			return nil, false
		}
		args[k] = f
	}
	switch name {
	case "random":
		c.random = true
		rest := effects(args, x.ArgumentList)
		return func(e *env) float64 {
			for _, f := range rest {
				f(e)
			}
			return e.rng.Float64()
		}, true
	case "min", "max":
		return minMax(name == "max", args), true
	}
	if f, ok := math1[name]; ok {
		if name == "sign" && (len(args) == 0 || typeOf(x.ArgumentList[0]) != tNum) {
			return nil, false // goja's Math.sign gives back the undefined or false it is given, for NaN or 0
		}
		a := arg(args, 0)
		rest := effects(args[min(1, len(args)):], x.ArgumentList[min(1, len(args)):])
		if len(rest) == 0 {
			return func(e *env) float64 { return f(a(e)) }, true
		}
		return func(e *env) float64 {
			v := a(e)
			for _, f := range rest {
				f(e)
			}
			return f(v)
		}, true
	}
	if f, ok := math2[name]; ok {
		a, b := arg(args, 0), arg(args, 1)
		rest := effects(args[min(2, len(args)):], x.ArgumentList[min(2, len(args)):])
		return func(e *env) float64 {
			u := a(e)
			v := b(e)
			for _, f := range rest {
				f(e)
			}
			return f(u, v)
		}, true
	}
	return nil, false
}

// arg is argument k, or NaN (undefined as a number) when it is missing.
func arg(args []numFn, k int) numFn {
	if k < len(args) {
		return args[k]
	}
	return konst(math.NaN())
}

// effects are the arguments a function ignores that must still run,
// since they call random().
func effects(args []numFn, src []ast.Expression) []numFn {
	var out []numFn
	for k, a := range args {
		if !pure(src[k]) {
			out = append(out, a)
		}
	}
	return out
}

// minMax is Math.min or Math.max: every argument is evaluated; NaN if any
// is NaN (which math.Max would not give next to an infinity); Infinity or
// -Infinity with none.
func minMax(isMax bool, args []numFn) numFn {
	pick := math.Min
	if isMax {
		pick = math.Max
	}
	if len(args) == 2 { // the usual case, without the loop
		a, b := args[0], args[1]
		return func(e *env) float64 {
			u := a(e)
			v := b(e)
			if u != u || v != v {
				return math.NaN()
			}
			return pick(u, v)
		}
	}
	empty := math.Inf(1)
	if isMax {
		empty = math.Inf(-1)
	}
	return func(e *env) float64 {
		res := empty
		for _, a := range args {
			v := a(e)
			switch {
			case res != res:
			case v != v:
				res = v
			default:
				res = pick(res, v)
			}
		}
		return res
	}
}

// hsv compiles the component ch of hsv(…).
func (c *fastCompiler) hsv(x *ast.CallExpression, ch int) (numFn, bool) {
	args := make([]numFn, len(x.ArgumentList))
	for k, a := range x.ArgumentList {
		f, ok := c.num(a)
		if !ok {
			return nil, false
		}
		args[k] = f
	}
	h, s, v := arg(args, 0), arg(args, 1), arg(args, 2)
	rest := effects(args[min(3, len(args)):], x.ArgumentList[min(3, len(args)):])
	return func(e *env) float64 {
		hv := h(e)
		sv := s(e)
		vv := v(e)
		for _, f := range rest {
			f(e)
		}
		r, g, b := hsv(hv, sv, vv)
		switch ch {
		case 0:
			return r
		case 1:
			return g
		}
		return b
	}, true
}

// ---- numbers as goja computes them ----

// gojaInt reports whether goja holds v as an integer (valueInt) rather
// than a float: every number is normalized so, and only its integer
// arithmetic differs from IEEE 754's.
func gojaInt(v float64) bool {
	return v == math.Trunc(v) && v >= -maxSafeInt && v <= maxSafeInt && (v != 0 || !math.Signbit(v))
}

// jsMul is goja's a * b: two integers multiply as integers, so a zero
// product is +0 unless it is 0 * -1 (where goja gives -0 like JS).
func jsMul(a, b float64) float64 {
	p := float64(a * b)
	if p == 0 && a != -1 && b != -1 && gojaInt(a) && gojaInt(b) {
		return 0
	}
	return p
}

// jsPow is goja's Math.pow and **: exact for integers whose power fits
// in 64 bits, NaN for 1 ** ±Infinity and 1 ** NaN, else math.Pow.
func jsPow(x, y float64) float64 {
	if gojaInt(x) && gojaInt(y) && y >= 0 {
		if y == 0 {
			return 1
		}
		if x == 0 {
			return 0
		}
		if p, ok := intPow(int64(x), int64(y)); ok {
			return float64(p)
		}
	}
	if math.Abs(x) == 1 && math.IsInf(y, 0) {
		return math.NaN()
	}
	if x == 1 && math.IsNaN(y) {
		return math.NaN()
	}
	return math.Pow(x, y)
}

// intPow is x**y for y >= 0, and false if it does not fit in an int64
// (short of its most negative value, a power of two that math.Pow gives
// exactly anyway).
func intPow(x, y int64) (int64, bool) {
	neg := x < 0 && y&1 == 1
	b := uint64(x)
	if x < 0 {
		b = uint64(-x)
	}
	r := uint64(1)
	for y > 0 {
		if y&1 == 1 {
			hi, lo := bits.Mul64(r, b)
			if hi != 0 {
				return 0, false
			}
			r = lo
		}
		y >>= 1
		if y > 0 {
			hi, lo := bits.Mul64(b, b)
			if hi != 0 {
				return 0, false
			}
			b = lo
		}
	}
	if r > math.MaxInt64 {
		return 0, false
	}
	if neg {
		return -int64(r), true
	}
	return int64(r), true
}

// jsRound is Math.round: halves go up, -0 and NaN stay.
func jsRound(f float64) float64 {
	if f != f || f == 0 {
		return f
	}
	t := math.Trunc(f)
	if f >= 0 {
		if f-t >= 0.5 {
			return t + 1
		}
	} else if t-f > 0.5 {
		return t - 1
	}
	return t
}

// jsSign is Math.sign: ±0 and NaN stay.
func jsSign(f float64) float64 {
	switch {
	case f > 0:
		return 1
	case f < 0:
		return -1
	}
	return f
}

// toInt32 and toUint32 are goja's conversions for the bitwise operators.
func toInt32(f float64) int32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return int32(int64(f))
}

func toUint32(f float64) uint32 {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0
	}
	return uint32(int64(f))
}
