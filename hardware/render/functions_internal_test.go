package render

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Every global of the renderer's JavaScript is a name no function can
// take.
func TestFunctionNamesAreNotGlobals(t *testing.T) {
	e := newEngine(1, 0)
	v, err := e.vm.RunString(`Object.getOwnPropertyNames(globalThis)`)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	if err := e.vm.ExportTo(v, &names); err != nil || len(names) < 20 {
		t.Fatalf("globals %v: %v", names, err)
	}
	for _, n := range names {
		if !messages.ReservedName(n) {
			t.Errorf("global %s is not a reserved function name", n)
		}
	}
}

// A state whose expressions call no function stays on the fast path
// when the light has functions; one that calls one runs in goja.
func TestFunctionsKeepTheFastPath(t *testing.T) {
	r, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.SetFunctions([]messages.Function{{Name: "level", Code: "return 1;"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		expr string
		fast bool
	}{{"sin(frame) * 100 + 100", true}, {"level() + sin(frame)", false}} {
		speed := 10
		st := messages.State{Name: "s", R: messages.Expr(tt.expr), Speed: &speed}
		if err := r.SetState(st, time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC), 0, nil); err != nil {
			t.Fatal(err)
		}
		if (r.fast != nil) != tt.fast || (r.prog != nil) == tt.fast {
			t.Errorf("%s: fast %v, goja %v", tt.expr, r.fast != nil, r.prog != nil)
		}
	}
}
