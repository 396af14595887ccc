package jsbox

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"
)

// A light's custom functions are compiled together, once, into a library:
// one program whose result is a frozen object of frozen functions, each a
// constant binding of the program, so that they call one another by name
// and no evaluation can rebind or change one for a later evaluation. An
// expression that names some of them is compiled as a factory (Link) that
// takes the library and binds those names as constants around the
// expression's own wrapper; an expression that names none is compiled as
// before, fast paths included.

// LibrarySrc is the file name of the library's program: the name the
// frames of a function's code have in a stack, for Explain and Where.
const LibrarySrc = "functions"

// libraryVar names the library inside a factory. User names cannot
// collide with it: a JavaScript name of a function has no $.
const libraryVar = "$lumen"

// Func is one custom function as the sandbox compiles it.
type Func struct {
	Name   string
	Params []string
	Code   string
}

func funcHead(f Func) string {
	return "function " + f.Name + "(" + strings.Join(f.Params, ", ") + ") {\n"
}

// CheckFunc parses and compiles f's code as the body of a strict function
// of its params, as the library has it, without running any of it, and
// returns what the code names. A syntax error is placed in the code.
func CheckFunc(f Func) (Refs, *Syntax) {
	src := "(function " + f.Name + "(" + strings.Join(f.Params, ", ") + ") {\"use strict\";\n" + f.Code + "\n})"
	prog, err := Parse(LibrarySrc, src)
	if err == nil {
		_, err = goja.CompileAST(prog, true)
	}
	if err != nil {
		s := ParseError(f.Code, err)
		return Refs{}, &s
	}
	fl := Wrapped(prog)
	if fl == nil {
		return Refs{}, &Syntax{Msg: "it closes a brace it did not open"}
	}
	return Scan(fl), nil
}

// Library is a set of functions compiled together in one runtime.
type Library struct {
	obj   goja.Value // the frozen object of the functions, by name
	names []string   // in definition order
	funcs []libFunc
}

type libFunc struct {
	name  string
	first int // the line (as Explain counts) of the code's first line
	lines int
}

// NewLibrary compiles fns, each checked by CheckFunc, into one program
// and runs it, which makes the functions and runs none of their code. It
// returns nil for no functions.
func NewLibrary(vm *goja.Runtime, fns []Func) (*Library, error) {
	if len(fns) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("(function() {\"use strict\";\n")
	lib := &Library{}
	line := 2 // of the program, from 1
	for _, f := range fns {
		// A named function expression: inside it, its own name cannot
		// be rebound either.
		fmt.Fprintf(&b, "const %s = %s", f.Name, funcHead(f))
		n := strings.Count(f.Code, "\n") + 1
		lib.funcs = append(lib.funcs, libFunc{name: f.Name, first: line, lines: n})
		b.WriteString(f.Code)
		b.WriteString("\n};\n")
		line += n + 2
		lib.names = append(lib.names, f.Name)
	}
	b.WriteString("const " + libraryVar + " = {" + strings.Join(lib.names, ", ") + "};\n")
	b.WriteString("for (const k in " + libraryVar + ") { Object.freeze(" + libraryVar + "[k].prototype); Object.freeze(" + libraryVar + "[k]); }\n")
	b.WriteString("return Object.freeze(" + libraryVar + ");\n})()")
	prog, err := goja.Compile(LibrarySrc, b.String(), true)
	if err != nil {
		return nil, fmt.Errorf("jsbox: compiling the functions: %w", err)
	}
	v, err := vm.RunProgram(prog)
	if err != nil {
		return nil, fmt.Errorf("jsbox: making the functions: %w", err)
	}
	lib.obj = v
	return lib, nil
}

// Names returns the functions' names, in definition order.
func (l *Library) Names() []string {
	if l == nil {
		return nil
	}
	return l.names
}

// Where places a line of the library's program, as Explain gives it for
// the source LibrarySrc, in a function's code: the function's name and
// the line in its code, or "" if the line is in no function's code.
func (l *Library) Where(line int) (string, int) {
	if l == nil {
		return "", 0
	}
	for _, f := range l.funcs {
		if line >= f.first && line < f.first+f.lines {
			return f.name, line - f.first + 1
		}
	}
	return "", 0
}

// Link returns the source of a factory around wrapped, a user's source
// inside its wrapper (whose head is one line): called with a library, the
// factory returns the wrapper's function with uses bound as constants to
// the library's functions. The head stays one line, so positions in the
// user's source are as in wrapped.
func Link(wrapped string, uses []string) string {
	var b strings.Builder
	b.WriteString("(function(" + libraryVar + ") {\"use strict\"; const ")
	for i, n := range uses {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(n + " = " + libraryVar + "." + n)
	}
	b.WriteString("; return ")
	b.WriteString(wrapped)
	b.WriteString(";})")
	return b.String()
}

// Instantiate calls factory, made from Link's source, with the library,
// and returns the function it makes. It runs no user code.
func (l *Library) Instantiate(factory goja.Callable) (goja.Value, error) {
	v, err := factory(goja.Undefined(), l.obj)
	if err != nil {
		return nil, fmt.Errorf("jsbox: linking: %w", err)
	}
	if _, ok := goja.AssertFunction(v); !ok {
		return nil, fmt.Errorf("jsbox: linking: not a function")
	}
	return v, nil
}

// Refs is what a source names: the identifiers it refers to, the largest
// number of arguments each identifier is called with directly (f(a, b);
// a spread argument is not counted), and the names it declares itself.
type Refs struct {
	Names    []string // sorted, each once
	Calls    map[string]int
	Declared map[string]bool
}

// Uses returns the names among names that the source refers to, sorted.
func (r Refs) Uses(names func(string) bool) []string {
	var out []string
	for _, n := range r.Names {
		if names(n) {
			out = append(out, n)
		}
	}
	return out
}

// Scan lists what the body of fl names. Property names (o.x, {x: 1}) are
// not references; a shorthand property ({x}) is. A name declared anywhere
// in the body is listed as referred to as well when it is used, which
// errs on the side of "refers to".
func Scan(fl *ast.FunctionLiteral) Refs {
	s := &scanner{names: map[string]bool{}, calls: map[string]int{}, declared: map[string]bool{}}
	s.walk(reflect.ValueOf(fl.Body))
	r := Refs{Calls: s.calls, Declared: s.declared}
	for n := range s.names {
		r.Names = append(r.Names, n)
	}
	slices.Sort(r.Names)
	return r
}

type scanner struct {
	names    map[string]bool
	calls    map[string]int
	declared map[string]bool
}

// walk visits every node below v by reflection: the AST has dozens of
// node types and no walker of its own, and a reference missed here would
// be a function an expression cannot call.
func (s *scanner) walk(v reflect.Value) {
	switch v.Kind() {
	case reflect.Interface:
		if !v.IsNil() {
			s.walk(v.Elem())
		}
	case reflect.Pointer:
		if v.IsNil() || !v.CanInterface() {
			return
		}
		switch n := v.Interface().(type) {
		case *ast.Identifier:
			s.names[string(n.Name)] = true
			return
		case *ast.PropertyShort:
			s.names[string(n.Name.Name)] = true
			if n.Initializer != nil {
				s.walk(reflect.ValueOf(n.Initializer))
			}
			return
		case *ast.DotExpression:
			s.walk(reflect.ValueOf(n.Left)) // the property is no reference
			return
		case *ast.CallExpression:
			if id, ok := n.Callee.(*ast.Identifier); ok {
				args := 0
				for _, a := range n.ArgumentList {
					if _, spread := a.(*ast.SpreadElement); !spread {
						args++
					}
				}
				s.calls[string(id.Name)] = max(s.calls[string(id.Name)], args)
			}
		case *ast.Binding:
			if id, ok := n.Target.(*ast.Identifier); ok {
				s.declared[string(id.Name)] = true
			}
		case *ast.FunctionLiteral:
			if n.Name != nil {
				s.declared[string(n.Name.Name)] = true
			}
		case *ast.ClassLiteral:
			if n.Name != nil {
				s.declared[string(n.Name.Name)] = true
			}
		case *ast.CatchStatement:
			if id, ok := n.Parameter.(*ast.Identifier); ok {
				s.declared[string(id.Name)] = true
			}
		case *ast.ForDeclaration:
			if id, ok := n.Target.(*ast.Identifier); ok {
				s.declared[string(id.Name)] = true
			}
		}
		s.walk(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			s.walk(v.Field(i))
		}
	case reflect.Slice:
		for i := range v.Len() {
			s.walk(v.Index(i))
		}
	}
}
