package jsbox_test

import (
	"errors"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/internal/jsbox"
)

func newBox(t *testing.T) (*jsbox.Box, goja.Callable) {
	t.Helper()
	var now time.Time
	box := jsbox.New("test", func() float64 { return 0.5 }, jsbox.Clock(&now), 20)
	box.Host("f", func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	describe := box.Func(jsbox.DescribeJS)
	box.Harden()
	return box, describe
}

func TestHarden(t *testing.T) {
	box, _ := newBox(t)
	for src, want := range map[string]string{
		`typeof eval`:                 "undefined",
		`f.name`:                      "f",
		`Object.isFrozen(Math)`:       "true",
		`Object.isFrozen(globalThis)`: "true",
		`Math.random()`:               "0.5",
	} {
		v, err := box.VM.RunString(src)
		if err != nil || v.String() != want {
			t.Errorf("%s = %v, %v; want %s", src, v, err, want)
		}
	}
}

func TestExplain(t *testing.T) {
	box, describe := newBox(t)
	src := "(function() {\nthrow new Error('x'.repeat(10));\n})"
	prog, err := jsbox.Parse("user", src)
	if err != nil {
		t.Fatal(err)
	}
	if jsbox.Wrapped(prog) == nil {
		t.Fatal("not wrapped")
	}
	p, _ := goja.CompileAST(prog, true)
	v, _ := box.VM.RunProgram(p)
	fn, _ := goja.AssertFunction(v)
	_, err = fn(goja.Undefined())
	f := jsbox.Explain(err, describe, 9, "user")
	if !f.Thrown || f.Msg != "Error: xx…" || f.Src != "user" || f.Line != 1 {
		t.Errorf("Explain = %+v", f)
	}
	f = jsbox.Explain(errors.New("other"), describe, 100)
	if f.Thrown || f.Msg != "other" || f.Timeout {
		t.Errorf("Explain = %+v", f)
	}
	box.VM.Interrupt("stop")
	_, err = box.VM.RunString("1")
	box.VM.ClearInterrupt()
	if f := jsbox.Explain(err, describe, 100); !f.Timeout {
		t.Errorf("Explain = %+v", f)
	}
}

func TestParseError(t *testing.T) {
	for src, want := range map[string]jsbox.Syntax{
		"1 +":  {AtEnd: true},
		"a b":  {Line: 1, Col: 3},
		"1\n}": {Line: 2, Col: 1},
		// Past the end, the parser meets the wrapper's ) or ;, which the
		// user never wrote: the message says so without them.
		"(frame * 2": {AtEnd: true},
		"sin(frame":  {AtEnd: true},
	} {
		_, err := jsbox.Parse("x", "(function() { return (\n"+src+"\n);})")
		if err == nil {
			t.Fatalf("%q parsed", src)
		}
		got := jsbox.ParseError(src, err)
		if got.Msg == "" {
			t.Errorf("%q: no message", src)
		}
		if got.AtEnd && got.Msg != jsbox.EndsEarly {
			t.Errorf("%q: at the end, message %q", src, got.Msg)
		}
		got.Msg = ""
		if got != want {
			t.Errorf("ParseError(%q) = %+v, want %+v", src, got, want)
		}
	}
}
