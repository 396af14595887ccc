package render

import (
	"math"

	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"
)

// The fast path's compiler: an expression's syntax tree, parsed by goja,
// becomes a tree of Go closures over float64 (see fast.go for the subset),
// or is refused so that the state runs in goja. The functions it knows
// (Math's, min, max, random, hsv) are in fastcall.go.

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
