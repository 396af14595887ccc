// Package jsbox is the sandbox that lumen's pure packages run user
// JavaScript in with goja: the light machine's conditions and actions and
// the renderer's animation channels. Both need the same guarantees, which
// replay and reproducible frames rest on, so they are set up here once:
//
//   - time and randomness come only from the caller (no wall clock, no
//     global random source), so that a result depends on inputs only;
//   - recursion is bounded, so that a runaway expression ends in a
//     RangeError instead of unbounded memory;
//   - no source map is ever loaded, so that a source cannot make goja read
//     a file;
//   - eval is removed and everything reachable from the global object is
//     frozen, so that no evaluation can leave state behind for a later one.
//
// It also holds what both do with a user's source and its failures: the
// check that a source stayed inside the function it is wrapped in, the
// mapping of a syntax error back to the user's lines, and the description
// of an evaluation that threw or ran out of time; and the light's custom
// functions, compiled together into a library that the expressions which
// name them are linked to (functions.go).
//
// What is specific to one package (the wrappers, the host functions, the
// time bound, the wording of errors) stays in that package. Like its
// users, jsbox is pure: no I/O.
package jsbox

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
	"github.com/dop251/goja/parser"

	"github.com/lumen-home/lumen/internal/clip"
)

// Box sets up one sandboxed runtime. Its helpers panic on error, since a
// failure while setting up (before any user code) is a bug in lumen, not
// in a user's source; the panic names the package that set it up.
type Box struct {
	VM     *goja.Runtime
	prefix string       // "machine", "render": starts every panic's text
	hosts  []goja.Value // the names of the host functions, for Harden
}

// New makes a runtime whose Math.random is rand and whose Date is now,
// with calls nested at most maxCallDepth deep and source maps disabled.
// prefix names the caller in the panics of the Box's helpers.
func New(prefix string, rand goja.RandSource, now goja.Now, maxCallDepth int) *Box {
	vm := goja.New()
	vm.SetRandSource(rand)
	vm.SetTimeSource(now)
	vm.SetMaxCallStackSize(maxCallDepth)
	vm.SetParserOptions(parser.WithDisableSourceMaps)
	return &Box{VM: vm, prefix: prefix}
}

// Must panics if err, an error while setting up, is not nil.
func (b *Box) Must(err error) {
	if err != nil {
		panic(fmt.Sprintf("%s: setting up JavaScript: %v", b.prefix, err))
	}
}

// Host makes fn, a function written in Go, the global name; Harden
// gives it that name as a function too.
func (b *Box) Host(name string, fn func(goja.FunctionCall) goja.Value) {
	b.Must(b.VM.Set(name, fn))
	b.hosts = append(b.hosts, b.VM.ToValue(name))
}

// Func runs src, lumen's own JavaScript that evaluates to a function, and
// returns that function, callable from Go.
func (b *Box) Func(src string) goja.Callable {
	v, err := b.VM.RunString(src)
	b.Must(err)
	f, ok := goja.AssertFunction(v)
	if !ok {
		panic(b.prefix + ": not a function: " + src)
	}
	return f
}

// Run runs src, lumen's own JavaScript, for its effect.
func (b *Box) Run(src string) {
	_, err := b.VM.RunString(src)
	b.Must(err)
}

// Harden closes the sandbox once the globals are in place: it gives the
// host functions their names (as seen in stacks and String(f)), removes
// eval (the one way for an expression to declare a global binding) and
// deep-freezes everything reachable from the global object, so that no
// evaluation can leave state behind for a later one. Nothing may be added
// to the globals after it.
func (b *Box) Harden() {
	_, err := b.Func(hardenJS)(goja.Undefined(), b.hosts...)
	b.Must(err)
}

const hardenJS = `(function(...names) {
"use strict";
delete globalThis.eval;
for (const n of names) {
	Object.defineProperty(globalThis[n], "name", {value: n});
}
const seen = new Set();
const todo = [globalThis];
while (todo.length > 0) {
	const o = todo.pop();
	if ((typeof o !== "object" && typeof o !== "function") || o === null || seen.has(o)) continue;
	seen.add(o);
	Object.freeze(o);
	todo.push(Object.getPrototypeOf(o));
	for (const k of Reflect.ownKeys(o)) {
		const d = Reflect.getOwnPropertyDescriptor(o, k);
		if (d === undefined) continue;
		if ("value" in d) todo.push(d.value); else todo.push(d.get, d.set);
	}
}
})`

// DescribeJS is a function that turns a thrown value into text. Make it
// with Box.Func and call it within the evaluation's time bound: a thrown
// object's toString is user code.
const DescribeJS = `(function(e) {
"use strict";
try { return String(e); } catch (x) { return "a value that cannot be printed"; }
})`

// Parse parses src, a user's source inside its wrapper, as file name
// (the name goja gives its positions and stack frames), without source
// maps.
func Parse(name, src string) (*ast.Program, error) {
	return parser.ParseFile(nil, name, src, 0, parser.WithDisableSourceMaps)
}

// Wrapped returns the function literal that prog, a user's source inside
// a wrapper "(function(…) {…})", consists of, or nil if the source broke
// out of the wrapper (it closed a bracket it did not open and went on).
func Wrapped(prog *ast.Program) *ast.FunctionLiteral {
	if len(prog.Body) != 1 {
		return nil
	}
	st, ok := prog.Body[0].(*ast.ExpressionStatement)
	if !ok {
		return nil
	}
	fl, ok := st.Expression.(*ast.FunctionLiteral)
	if !ok || fl.Body == nil {
		return nil
	}
	return fl
}

// Returns reports whether the body of fl is exactly n statements, the
// last a return: a wrapped expression, "return (\n…\n);", preceded by
// n-1 directives, and nothing the user added.
func Returns(fl *ast.FunctionLiteral, n int) bool {
	if len(fl.Body.List) != n {
		return false
	}
	_, ok := fl.Body.List[n-1].(*ast.ReturnStatement)
	return ok
}

// EndsEarly is the message of a syntax error past the user's source.
const EndsEarly = "it ends before it is complete: check that every bracket, parenthesis and quote it opens is closed, and that no operator is left without its operand"

// Syntax is a parse or compile error placed in the user's source.
type Syntax struct {
	Line, Col int  // from 1; 0 when the error has no position
	AtEnd     bool // the error is past the user's last line (in the wrapper's tail)
	Msg       string
}

// ParseError places err, from parsing or compiling src inside a wrapper
// whose head is one line, in src: a position in the head is taken as
// src's start, one in the tail as its end.
func ParseError(src string, err error) Syntax {
	var (
		line, col int
		msg       = err.Error()
		list      parser.ErrorList
		one       *parser.Error
		cse       *goja.CompilerSyntaxError
		cre       *goja.CompilerReferenceError
	)
	switch {
	case errors.As(err, &list) && len(list) > 0:
		line, col, msg = list[0].Position.Line, list[0].Position.Column, list[0].Message
	case errors.As(err, &one):
		line, col, msg = one.Position.Line, one.Position.Column, one.Message
	case errors.As(err, &cse):
		msg = cse.Message
		if cse.File != nil {
			p := cse.File.Position(cse.Offset)
			line, col = p.Line, p.Column
		}
	case errors.As(err, &cre):
		msg = cre.Message
		if cre.File != nil {
			p := cre.File.Position(cre.Offset)
			line, col = p.Line, p.Column
		}
	}
	s := Syntax{Msg: msg}
	if line == 0 {
		return s
	}
	line-- // the wrapper's first line
	switch lines := strings.Count(src, "\n") + 1; {
	case line < 1:
		s.Line, s.Col = 1, 1
	case line > lines:
		// What the parser met there is the wrapper's, not a character
		// the user wrote: say what is wrong with the source instead.
		s.AtEnd, s.Msg = true, EndsEarly
	default:
		s.Line, s.Col = line, col
	}
	return s
}

// Failure is what an evaluation that returned an error amounts to.
type Failure struct {
	// Timeout: the runtime was interrupted, by the caller's time bound
	// (the only interrupt lumen uses). The other fields are then empty.
	Timeout bool
	// Thrown: the evaluation threw, or overflowed the stack; Msg is the
	// thrown value's text ("an error" when there is none). Otherwise Msg
	// is err's own text.
	Thrown bool
	Msg    string // at most maxMsg bytes, and an ellipsis if cut
	// Src is the name of the innermost stack frame in one of the sources
	// asked for, "" if none; Line and Col are its position in the user's
	// source (a one-line wrapper head taken off), 0 when unknown.
	Src       string
	Line, Col int
}

// Explain describes err, returned by a call into the runtime, with
// describe (made from DescribeJS); call it before the time bound ends,
// since describing runs user code. srcs are the file names (as given to
// Parse) of the user's sources, to find where in them it failed.
func Explain(err error, describe goja.Callable, maxMsg int, srcs ...string) Failure {
	var intr *goja.InterruptedError
	if errors.As(err, &intr) {
		return Failure{Timeout: true}
	}
	f := Failure{Thrown: true, Msg: "an error"}
	var stack []goja.StackFrame
	var so *goja.StackOverflowError
	var ex *goja.Exception
	switch {
	case errors.As(err, &so):
		f.Msg = "RangeError: maximum call stack size exceeded"
		stack = so.Stack()
	case errors.As(err, &ex):
		stack = ex.Stack()
		if ex.Value() != nil {
			s, err := describe(goja.Undefined(), ex.Value())
			if errors.As(err, &intr) {
				return Failure{Timeout: true}
			}
			if err == nil {
				f.Msg = s.String()
			}
		}
	default:
		f.Thrown, f.Msg = false, err.Error()
	}
	f.Msg = clip.To(f.Msg, maxMsg, "…") // a thrown value's text is the user's, of any length
	for i := range stack {
		if n := stack[i].SrcName(); slices.Contains(srcs, n) {
			f.Src = n
			if p := stack[i].Position(); p.Line > 1 {
				f.Line, f.Col = p.Line-1, p.Column
			}
			break
		}
	}
	return f
}

// Clock returns a time source for New that reads *t: the caller sets *t
// to the time an evaluation should see before running it.
func Clock(t *time.Time) goja.Now {
	return func() time.Time { return *t }
}
