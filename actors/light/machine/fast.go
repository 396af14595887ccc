package machine

import (
	"math"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/token"

	"github.com/lumen-home/lumen/messages"
)

// fastExpr evaluates a very common expression shape without entering
// goja, with exactly the result goja would give. When the variables at
// hand fall outside what it handles, it says so and the expression runs
// in goja as usual.
//
// Why this is exact: getData, setData and undefined are bindings of the
// frozen global object that nothing can shadow (an expression is one
// strict function of (state, transition), and eval is gone); their
// arguments here are literals, so no user code runs; primitives are
// compared with goja's own Equals/StrictEquals, numbers with IEEE
// comparison and arithmetic as ECMAScript defines them; and the result
// goes through the same conversion to a stored value as setData.
type fastExpr interface {
	test(c *core) (result, handled bool) // a condition
	run(c *core) (handled bool)          // an action: its effects go to c.tx
}

// fastPath recognizes, for a condition,
//
//	getData('<name>') <op> <literal>
//
// with op one of === !== == != < <= > >= (relational ones with a number
// literal), and for an action a sequence of
//
//	setData('<name>', <literal> | undefined | getData('<name>') ± <number>)
func fastPath(c *core, kind exprKind, prog *ast.Program) fastExpr {
	fl := prog.Body[0].(*ast.ExpressionStatement).Expression.(*ast.FunctionLiteral)
	body := fl.Body.List[1:] // after "use strict"
	switch kind {
	case kindCondition:
		ret, ok := body[0].(*ast.ReturnStatement)
		if !ok {
			return nil
		}
		return fastCondition(c, ret.Argument)
	case kindAction:
		return fastAction(c, body)
	}
	return nil
}

type fastCond struct {
	name string
	op   token.Token
	lit  goja.Value
	num  float64 // lit as a number, for relational operators
}

func fastCondition(c *core, e ast.Expression) fastExpr {
	b, ok := e.(*ast.BinaryExpression)
	if !ok {
		return nil
	}
	name, ok := getDataCall(b.Left)
	if !ok {
		return nil
	}
	lit, isNum, ok := literal(c, b.Right)
	if !ok {
		return nil
	}
	switch b.Operator {
	case token.STRICT_EQUAL, token.STRICT_NOT_EQUAL, token.EQUAL, token.NOT_EQUAL:
	case token.LESS, token.LESS_OR_EQUAL, token.GREATER, token.GREATER_OR_EQUAL:
		if !isNum {
			return nil
		}
	default:
		return nil
	}
	return &fastCond{name: name, op: b.Operator, lit: lit, num: lit.ToFloat()}
}

func (f *fastCond) test(c *core) (bool, bool) {
	v := c.lookupVar(f.name)
	var val goja.Value
	switch {
	case v == nil:
		val = goja.Undefined()
	case v.prim != nil:
		val = v.prim
	default:
		// A fresh object: never strictly equal to a primitive; the other
		// operators convert it, which goja does.
		switch f.op {
		case token.STRICT_EQUAL:
			return false, true
		case token.STRICT_NOT_EQUAL:
			return true, true
		}
		return false, false
	}
	switch f.op {
	case token.STRICT_EQUAL:
		return val.StrictEquals(f.lit), true
	case token.STRICT_NOT_EQUAL:
		return !val.StrictEquals(f.lit), true
	case token.EQUAL:
		return val.Equals(f.lit), true
	case token.NOT_EQUAL:
		return !val.Equals(f.lit), true
	}
	var x float64
	switch {
	case goja.IsNumber(val):
		x = val.ToFloat()
	case goja.IsUndefined(val):
		x = math.NaN()
	case goja.IsNull(val), val == c.jsFalse:
		x = 0
	case val == c.jsTrue:
		x = 1
	default: // a string: goja converts it
		return false, false
	}
	switch f.op {
	case token.LESS:
		return x < f.num, true
	case token.LESS_OR_EQUAL:
		return x <= f.num, true
	case token.GREATER:
		return x > f.num, true
	default: // GREATER_OR_EQUAL
		return x >= f.num, true
	}
}

func (f *fastCond) run(*core) bool { return false }

// fastSet is one setData call of a fast action.
type fastSet struct {
	name  string
	val   *value // a literal; nil: unset (unless arith)
	arith bool   // getData(src) op num
	src   string
	minus bool
	num   float64
	// overLimit: the name or the literal is over the limits (an action
	// written before them); once they apply, goja runs it and throws.
	overLimit bool
}

type fastAct []fastSet

func fastAction(c *core, body []ast.Statement) fastExpr {
	var out fastAct
	for _, st := range body {
		if _, ok := st.(*ast.EmptyStatement); ok {
			continue
		}
		es, ok := st.(*ast.ExpressionStatement)
		if !ok {
			return nil
		}
		call, ok := es.Expression.(*ast.CallExpression)
		if !ok || !isIdent(call.Callee, "setData") || len(call.ArgumentList) != 2 {
			return nil
		}
		name, ok := stringLit(call.ArgumentList[0])
		if !ok {
			return nil
		}
		set := fastSet{name: name}
		arg := call.ArgumentList[1]
		if lit, _, ok := literal(c, arg); ok {
			if !goja.IsUndefined(lit) {
				set.val = c.fromJS(lit, name)
			}
		} else if b, ok := arg.(*ast.BinaryExpression); ok && (b.Operator == token.PLUS || b.Operator == token.MINUS) {
			src, ok := getDataCall(b.Left)
			if !ok {
				return nil
			}
			lit, isNum, ok := literal(c, b.Right)
			if !ok || !isNum {
				return nil
			}
			set.arith, set.src, set.minus, set.num = true, src, b.Operator == token.MINUS, lit.ToFloat()
		} else {
			return nil
		}
		set.overLimit = messages.CheckName("variable", name) != nil || set.val != nil && messages.CheckValue(name, set.val.raw) != nil
		out = append(out, set)
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func (fastAct) test(*core) (bool, bool) { return false, false }

func (a fastAct) run(c *core) bool {
	if c.limited() {
		for i := range a {
			if a[i].overLimit {
				return false
			}
		}
	}
	for i := range a {
		s := &a[i]
		if !s.arith {
			c.tx.setVar(s.name, s.val)
			continue
		}
		v := c.lookupVar(s.src)
		if v == nil || v.prim == nil || !goja.IsNumber(v.prim) {
			return false // undefined - 1, 'a' + 1 …: goja does it
		}
		x := v.prim.ToFloat()
		if s.minus {
			x -= s.num
		} else {
			x += s.num
		}
		c.tx.setVar(s.name, c.fromJS(c.vm.ToValue(x), s.name))
	}
	return true
}

func isIdent(e ast.Expression, name string) bool {
	id, ok := e.(*ast.Identifier)
	return ok && id.Name.String() == name
}

// getDataCall matches getData('<name>').
func getDataCall(e ast.Expression) (string, bool) {
	call, ok := e.(*ast.CallExpression)
	if !ok || !isIdent(call.Callee, "getData") || len(call.ArgumentList) != 1 {
		return "", false
	}
	return stringLit(call.ArgumentList[0])
}

// stringLit matches a non-empty ASCII string literal.
func stringLit(e ast.Expression) (string, bool) {
	s, ok := e.(*ast.StringLiteral)
	if !ok {
		return "", false
	}
	v := s.Value.String()
	if v == "" {
		return "", false
	}
	for i := 0; i < len(v); i++ {
		if v[i] >= 0x80 {
			return "", false
		}
	}
	return v, true
}

// literal matches a number (optionally negated), an ASCII string, true,
// false, null or undefined, and returns its JS value.
func literal(c *core, e ast.Expression) (v goja.Value, isNum, ok bool) {
	neg := false
	if u, ok := e.(*ast.UnaryExpression); ok && u.Operator == token.MINUS && !u.Postfix {
		neg, e = true, u.Operand
		if _, ok := e.(*ast.NumberLiteral); !ok {
			return nil, false, false
		}
	}
	switch l := e.(type) {
	case *ast.NumberLiteral:
		var f float64
		switch n := l.Value.(type) {
		case int64:
			f = float64(n)
		case float64:
			f = n
		default:
			return nil, false, false
		}
		if neg {
			f = -f
		}
		return c.vm.ToValue(f), true, true
	case *ast.StringLiteral:
		s := l.Value.String()
		for i := 0; i < len(s); i++ {
			if s[i] >= 0x80 {
				return nil, false, false
			}
		}
		return c.vm.ToValue(s), false, true
	case *ast.BooleanLiteral:
		return c.vm.ToValue(l.Value), false, true
	case *ast.NullLiteral:
		return goja.Null(), false, true
	case *ast.Identifier:
		if l.Name.String() == "undefined" {
			return goja.Undefined(), false, true
		}
	}
	return nil, false, false
}
