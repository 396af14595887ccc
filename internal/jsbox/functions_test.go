package jsbox_test

import (
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/internal/jsbox"
)

func TestScan(t *testing.T) {
	tests := []struct {
		code     string
		names    string
		calls    map[string]int
		declared string
	}{
		{"return f(1, 2) + g()", "f g", map[string]int{"f": 2, "g": 0}, ""},
		{"return o.f(1) + o['g']", "o", map[string]int{}, ""},
		{"return {f: 1, g}", "g", map[string]int{}, ""},
		{"return f(...xs, 1) + f(1)", "f xs", map[string]int{"f": 1}, ""},
		{"const f = x => x; return f(1, 2, 3)", "f x", map[string]int{"f": 3}, "f x"},
		{"function h(a) { return a } try { h() } catch (e) { return e }", "a e h", map[string]int{"h": 0}, "a e h"},
		{"for (const k of ks) { if (`${k}` === 'x') return new C(k) }", "C k ks", map[string]int{}, "k"},
		{"return 'f(1)' + /g/.source // h()", "", map[string]int{}, ""},
	}
	for _, tt := range tests {
		refs, se := jsbox.CheckFunc(jsbox.Func{Name: "test", Code: tt.code})
		if se != nil {
			t.Fatalf("%s: %+v", tt.code, *se)
		}
		declared := slices.Sorted(maps.Keys(refs.Declared))
		if got := strings.Join(refs.Names, " "); got != tt.names || !reflect.DeepEqual(refs.Calls, tt.calls) || strings.Join(declared, " ") != tt.declared {
			t.Errorf("%s: names %q calls %v declared %v; want %q %v %q", tt.code, got, refs.Calls, declared, tt.names, tt.calls, tt.declared)
		}
	}
}

// A library's functions call one another, are frozen, and a position in
// the library is placed in the function's own code.
func TestLibrary(t *testing.T) {
	box, describe := newBox(t)
	lib, err := jsbox.NewLibrary(box.VM, []jsbox.Func{
		{Name: "a", Params: []string{"x"}, Code: "return b(x) + 1;"},
		{Name: "b", Params: []string{"x"}, Code: "if (x > 1) {\n  throw new Error('too big');\n}\nreturn x;"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := lib.Names(); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("names %v", got)
	}
	const head = "(function(x) {\"use strict\"; return (\n"
	p, err := goja.Compile("expr", jsbox.Link(head+"a(x) * 10\n);})", []string{"a"}), false)
	if err != nil {
		t.Fatal(err)
	}
	v, err := box.VM.RunProgram(p)
	if err != nil {
		t.Fatal(err)
	}
	factory, _ := goja.AssertFunction(v)
	fv, err := lib.Instantiate(factory)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := goja.AssertFunction(fv)
	if got, err := fn(goja.Undefined(), box.VM.ToValue(1)); err != nil || got.ToInteger() != 20 {
		t.Errorf("a(1) * 10 = %v, %v", got, err)
	}
	_, err = fn(goja.Undefined(), box.VM.ToValue(5))
	f := jsbox.Explain(err, describe, 100, "expr", jsbox.LibrarySrc)
	name, line := lib.Where(f.Line)
	if f.Src != jsbox.LibrarySrc || name != "b" || line != 2 || f.Col != 9 || f.Msg != "Error: too big" {
		t.Errorf("failure %+v placed in %s line %d", f, name, line)
	}
	if name, _ := lib.Where(1); name != "" {
		t.Errorf("the library's head is in function %s", name)
	}
}
