package render

import (
	"math"
	"math/bits"

	"github.com/dop251/goja/ast"
)

// The functions the fast path compiles: Math's functions and constants,
// the global helpers, random() and hsv().

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
