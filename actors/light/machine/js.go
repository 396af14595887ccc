package machine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"

	"github.com/lumen-home/lumen/internal/jsbox"
)

// exprKind says how an expression is wrapped and what it may do.
type exprKind uint8

const (
	kindCondition exprKind = iota // an expression; read-only
	kindAction                    // statements; may setData and start timers
	kindChannel                   // a color channel, only syntax-checked here
)

func (k exprKind) String() string {
	switch k {
	case kindCondition:
		return "condition"
	case kindAction:
		return "action"
	}
	return "channel"
}

// Every expression is compiled once, as a strict-mode function of
// (state, transition) whose body starts on the wrapper's second line, so
// a position in the wrapper is the user's position one line down.
const (
	condHead   = "(function(state, transition) {\"use strict\"; return (\n"
	condTail   = "\n);})"
	actionHead = "(function(state, transition) {\"use strict\";\n"
	actionTail = "\n})"
	chanHead   = "(function() { return (\n"
	chanTail   = "\n);})"
)

// maxCallDepth bounds recursion in expressions (a RangeError-like
// exception instead of unbounded memory).
const maxCallDepth = 200

// maxTimerMs bounds startTimer's delay: about 31 years.
const maxTimerMs = 1e12

// maxMessage bounds the length of an exception message in an error output.
const maxMessage = 300

type exprKey struct {
	kind exprKind
	src  string
}

// linkKey names the factory of an expression linked to functions: the
// expression and the functions it names.
type linkKey struct {
	exprKey
	uses string
}

// expr is one compiled expression.
type expr struct {
	kind exprKind
	src  string
	fn   goja.Callable
	fast fastExpr   // a provably equivalent shortcut, or nil
	refs jsbox.Refs // what the source names

	// Linked to the light's functions (compile): the expression compiled
	// alone, and the factory fn was made by. nil otherwise.
	base    *expr
	factory goja.Callable
	lkey    linkKey
}

// syntaxError is a compile error at a position of the user's source.
type syntaxError struct {
	line, col int
	atEnd     bool
	msg       string
}

func (e *syntaxError) String() string {
	if e.atEnd {
		return fmt.Sprintf("at the end (%s)", e.msg)
	}
	if e.line == 0 {
		return fmt.Sprintf("(%s)", e.msg)
	}
	return fmt.Sprintf("at line %d, column %d (%s)", e.line, e.col, e.msg)
}

// value is a variable's value: canonical JSON (what JSON.stringify
// writes) and, for primitives, the JS value getData returns as is.
// Objects and arrays are parsed again on every getData, so that no script
// can change a stored value through a reference.
type value struct {
	raw  json.RawMessage
	prim goja.Value
	str  goja.Value // raw as a JS string, for JSON.parse; made on demand
}

func (v *value) equal(w *value) bool {
	if v == nil || w == nil {
		return v == w
	}
	return bytes.Equal(v.raw, w.raw)
}

// initJS sets up the runtime of c: host functions, deterministic time and
// randomness, no source-map loading, no eval, frozen built-ins.
func (c *core) initJS() {
	box := jsbox.New("machine", c.rng.Float64, jsbox.Clock(&c.now), maxCallDepth)
	vm := box.VM
	c.vm = vm
	box.Host("getData", c.jsGetData)
	box.Host("setData", c.jsSetData)
	box.Host("random", c.jsRandom)
	box.Host("now", c.jsNow)
	box.Host("startTimer", c.jsStartTimer)
	box.Host("cancelTimer", c.jsCancelTimer)
	c.initControl(box.Host)
	c.jsParse = box.Func(`JSON.parse`)
	c.jsStringify = box.Func(`JSON.stringify`)
	c.jsDescribe = box.Func(jsbox.DescribeJS)
	c.jsTypeof = box.Func(`(function(v) { return typeof v; })`)
	// No evaluation can leave state behind for a later one: an
	// expression's result depends only on the machine's state and the
	// input, which is what makes replay exact.
	box.Harden()
	c.jsTrue, c.jsFalse, c.jsNull, c.jsZero = vm.ToValue(true), vm.ToValue(false), goja.Null(), vm.ToValue(0)
	c.exprs = make(map[exprKey]*expr)
	c.factories = make(map[linkKey]goja.Callable)
}

// wrapper returns the head and tail src is compiled between.
func (k exprKind) wrapper() (head, tail string) {
	switch k {
	case kindCondition:
		return condHead, condTail
	case kindAction:
		return actionHead, actionTail
	}
	return chanHead, chanTail
}

// compile checks and compiles src once, for the functions fs: an
// expression that names none of them is compiled alone (identical sources
// share one compiled function), one that names some is linked to their
// library. A color channel is only checked.
func (c *core) compile(kind exprKind, src string, fs *funcs) (*expr, *syntaxError) {
	e, se := c.compileAlone(kind, src)
	if se != nil || kind == kindChannel {
		return e, se
	}
	uses := e.refs.Uses(fs.has)
	if len(uses) == 0 {
		return e, nil
	}
	return c.link(e, uses, fs)
}

// link makes base call the functions uses of fs: a factory compiled once
// per source and functions named, called with the library.
func (c *core) link(base *expr, uses []string, fs *funcs) (*expr, *syntaxError) {
	key := linkKey{exprKey{base.kind, base.src}, strings.Join(uses, " ")}
	factory := c.factories[key]
	if factory == nil {
		head, tail := base.kind.wrapper()
		p, err := goja.Compile(base.kind.String(), jsbox.Link(head+base.src+tail, uses), false)
		if err != nil {
			return nil, parseError(base.src, err)
		}
		v, err := c.vm.RunProgram(p) // makes the factory; runs no user code
		if err != nil {
			return nil, &syntaxError{msg: err.Error()}
		}
		f, ok := goja.AssertFunction(v)
		if !ok {
			return nil, &syntaxError{msg: "it does not compile to a function"}
		}
		factory = f
		c.factories[key] = f
	}
	v, err := fs.lib.Instantiate(factory)
	if err != nil {
		return nil, &syntaxError{msg: err.Error()}
	}
	fn, _ := goja.AssertFunction(v) // Instantiate checked it
	return &expr{kind: base.kind, src: base.src, fn: fn, refs: base.refs, base: base, factory: factory, lkey: key}, nil
}

// compileAlone compiles src on its own, once.
func (c *core) compileAlone(kind exprKind, src string) (*expr, *syntaxError) {
	key := exprKey{kind, src}
	if e, ok := c.exprs[key]; ok {
		return e, nil
	}
	head, tail := kind.wrapper()
	name := kind.String()
	prog, err := jsbox.Parse(name, head+src+tail)
	if err != nil {
		return nil, parseError(src, err)
	}
	if !wellFormed(kind, prog) {
		msg := "it closes a bracket or brace it did not open"
		if kind == kindCondition {
			msg = "it is not a single expression: it closes a bracket it did not open, or adds statements"
		}
		return nil, &syntaxError{msg: msg}
	}
	e := &expr{kind: kind, src: src, refs: jsbox.Scan(jsbox.Wrapped(prog))}
	if kind == kindChannel {
		return e, nil
	}
	p, err := goja.CompileAST(prog, false)
	if err != nil {
		return nil, parseError(src, err)
	}
	v, err := c.vm.RunProgram(p) // makes the function object; runs no user code
	if err != nil {
		return nil, &syntaxError{msg: err.Error()}
	}
	f, ok := goja.AssertFunction(v)
	if !ok {
		return nil, &syntaxError{msg: "it does not compile to a function"}
	}
	e.fn = f
	e.fast = fastPath(c, kind, prog)
	c.exprs[key] = e
	return e, nil
}

// wellFormed reports whether the source stayed inside its wrapper: one
// function literal at the top, and for a condition a body of exactly the
// directive and the return.
func wellFormed(kind exprKind, prog *ast.Program) bool {
	fl := jsbox.Wrapped(prog)
	switch {
	case fl == nil:
		return false
	case kind == kindAction:
		return true
	case kind == kindCondition:
		return jsbox.Returns(fl, 2) // after the "use strict" directive
	}
	return jsbox.Returns(fl, 1)
}

// parseError maps a parser or compiler error to the user's source.
func parseError(src string, err error) *syntaxError {
	s := jsbox.ParseError(src, err)
	return &syntaxError{line: s.Line, col: s.Col, atEnd: s.AtEnd, msg: s.Msg}
}

// failure is a rule's evaluation that did not complete.
type failure struct {
	timeout bool
	msg     string // the thrown value, for an exception
	fn      string // the custom function it threw in, "" for the rule's own source
	line    int    // 0 when unknown
	col     int
}

// where says where an exception was thrown, for an error sentence:
// " in function f at line 2, column 9", or "" when nothing is known.
func (f *failure) where() string {
	where := ""
	if f.line > 0 {
		where = fmt.Sprintf(" at line %d, column %d", f.line, f.col)
	}
	if f.fn != "" {
		where = " in function " + f.fn + where
	}
	return where
}

// call runs fn within the time limit. An exception is described inside
// the limit too, since a thrown object's toString is user code.
func (c *core) call(e *expr, state, transition goja.Value) (goja.Value, *failure) {
	c.args[0], c.args[1] = state, transition
	c.wd.begin()
	v, err := e.fn(goja.Undefined(), c.args[:]...)
	var f *failure
	if err != nil {
		f = c.failure(err)
	}
	c.wd.end()
	return v, f
}

func (c *core) failure(err error) *failure {
	x := jsbox.Explain(err, c.jsDescribe, maxMessage, "condition", "action", jsbox.LibrarySrc)
	if x.Timeout {
		return &failure{timeout: true}
	}
	f := &failure{msg: x.Msg, line: x.Line, col: x.Col}
	if x.Src == jsbox.LibrarySrc {
		if f.fn, f.line = c.fns.lib.Where(x.Line); f.fn == "" {
			f.line, f.col = 0, 0
		}
	}
	if !x.Thrown {
		f.msg = "an error"
	}
	return f
}

// ---- host functions ----

func (c *core) argName(call goja.FunctionCall, fn string) string {
	a := call.Argument(0)
	if !goja.IsString(a) {
		panic(c.vm.NewTypeError(fn + " needs a name (a string) as its first argument"))
	}
	s := a.String()
	if s == "" {
		panic(c.vm.NewTypeError(fn + " needs a non-empty name"))
	}
	return s
}

func (c *core) needAction(fn string) {
	if !c.inAction {
		panic(c.vm.NewTypeError(fn + " can only be called in a rule's action, not in its condition"))
	}
}

func (c *core) jsGetData(call goja.FunctionCall) goja.Value {
	v := c.lookupVar(c.argName(call, "getData"))
	if v == nil {
		return goja.Undefined()
	}
	return c.toJS(v)
}

// toJS returns the JS value of v: a primitive as is, an object freshly
// parsed (a copy).
func (c *core) toJS(v *value) goja.Value {
	if v.prim != nil {
		return v.prim
	}
	if v.str == nil {
		v.str = c.vm.ToValue(string(v.raw))
	}
	r, err := c.jsParse(goja.Undefined(), v.str)
	if err != nil {
		panic(err)
	}
	return r
}

func (c *core) lookupVar(name string) *value {
	v := c.vars[name]
	if c.inAction {
		for i := range c.tx.vars {
			if c.tx.vars[i].name == name {
				v = c.tx.vars[i].v
				break
			}
		}
	}
	if c.trace != nil {
		c.read(name, v)
	}
	return v
}

func (c *core) jsSetData(call goja.FunctionCall) goja.Value {
	c.needAction("setData")
	name := c.argName(call, "setData")
	a := call.Argument(1)
	var v *value
	if !goja.IsUndefined(a) {
		v = c.fromJS(a, name)
	}
	if r := c.checkVar(name, v); r != nil {
		c.limitError("setData", r)
	}
	c.tx.setVar(name, v)
	return goja.Undefined()
}

// fromJS converts a JS value to a stored value, as JSON.stringify would.
func (c *core) fromJS(a goja.Value, name string) *value {
	switch {
	case goja.IsNumber(a):
		f := a.ToFloat()
		switch {
		case math.IsNaN(f) || math.IsInf(f, 0):
			return &value{raw: json.RawMessage("null"), prim: c.jsNull}
		case f == 0:
			// -0 is stored as 0, and read back as 0 after a restore too.
			return &value{raw: json.RawMessage("0"), prim: c.jsZero}
		}
		return &value{raw: appendNumber(nil, f), prim: a}
	case a == c.jsTrue:
		return &value{raw: json.RawMessage("true"), prim: a}
	case a == c.jsFalse:
		return &value{raw: json.RawMessage("false"), prim: a}
	case goja.IsNull(a):
		return &value{raw: json.RawMessage("null"), prim: a}
	}
	s, err := c.jsStringify(goja.Undefined(), a)
	if err != nil {
		panic(err)
	}
	if goja.IsUndefined(s) {
		t, _ := c.jsTypeof(goja.Undefined(), a)
		panic(c.vm.NewTypeError(fmt.Sprintf("setData(%q, …): a %s cannot be stored; store JSON data (numbers, strings, booleans, null, arrays, objects) or undefined to unset", name, t)))
	}
	v := &value{raw: json.RawMessage(s.String())}
	if goja.IsString(a) && !bytes.Contains(v.raw, []byte(`\u`)) {
		v.prim = a
	} else if b := v.raw; len(b) > 0 && b[0] != '{' && b[0] != '[' {
		// A primitive from toJSON, or a string with escapes (a lone
		// surrogate does not survive JSON): keep what JSON.parse gives, as
		// a restored machine would.
		p, err := c.jsParse(goja.Undefined(), s)
		if err != nil {
			panic(err)
		}
		v.prim = p
	}
	return v
}

// parseValue canonicalizes JSON given from outside (var inputs, apply,
// snapshots): JSON.stringify(JSON.parse(raw)), the same bytes setData
// writes for the same value.
func (c *core) parseValue(raw json.RawMessage) (*value, error) {
	p, err := c.jsParse(goja.Undefined(), c.vm.ToValue(string(raw)))
	if err != nil {
		return nil, fmt.Errorf("not valid JSON: %v", err)
	}
	if !isObject(p) {
		return c.fromJS(p, ""), nil
	}
	s, err := c.jsStringify(goja.Undefined(), p)
	if err != nil {
		return nil, fmt.Errorf("cannot be stored: %v", err)
	}
	return &value{raw: json.RawMessage(s.String())}, nil
}

func isObject(v goja.Value) bool {
	_, ok := v.(*goja.Object)
	return ok
}

func (c *core) jsRandom(goja.FunctionCall) goja.Value {
	return c.vm.ToValue(c.rng.Float64())
}

func (c *core) jsNow(goja.FunctionCall) goja.Value {
	if c.nowJS == nil {
		c.nowJS = c.vm.ToValue(c.now.UnixMilli())
	}
	return c.nowJS
}

func (c *core) jsStartTimer(call goja.FunctionCall) goja.Value {
	c.needAction("startTimer")
	name := c.argName(call, "startTimer")
	if r := c.checkName("timer", name); r != nil {
		c.limitError("startTimer", r)
	}
	a := call.Argument(1)
	if !goja.IsNumber(a) {
		panic(c.vm.NewTypeError("startTimer(" + strconv.Quote(name) + ", ms): the delay must be a number of milliseconds"))
	}
	ms := a.ToFloat()
	if math.IsNaN(ms) || ms < 0 || ms > maxTimerMs {
		panic(c.vm.NewTypeError(fmt.Sprintf("startTimer(%q, ms): the delay must be between 0 and %.0f milliseconds", name, float64(maxTimerMs))))
	}
	c.tx.startTimer(c, name, c.now.Add(time.Duration(math.Round(ms*float64(time.Millisecond)))))
	return goja.Undefined()
}

func (c *core) jsCancelTimer(call goja.FunctionCall) goja.Value {
	c.needAction("cancelTimer")
	name := c.argName(call, "cancelTimer")
	if c.tx.cancelTimer(c, name) {
		return c.jsTrue
	}
	return c.jsFalse
}

// appendNumber writes f the way JavaScript (and so JSON.stringify) does:
// shortest round-trip digits, exponent form below 1e-6 and from 1e21.
func appendNumber(b []byte, f float64) []byte {
	if f == 0 {
		return append(b, '0') // -0 too
	}
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.AppendInt(b, int64(f), 10)
	}
	abs := math.Abs(f)
	fmtc := byte('f')
	if abs < 1e-6 || abs >= 1e21 {
		fmtc = 'e'
	}
	n := len(b)
	b = strconv.AppendFloat(b, f, fmtc, -1, 64)
	if fmtc == 'e' {
		// 1e-07 → 1e-7, like JavaScript.
		m := len(b)
		if m-n >= 4 && b[m-4] == 'e' && b[m-3] == '-' && b[m-2] == '0' {
			b[m-2] = b[m-1]
			b = b[:m-1]
		}
	}
	return b
}
