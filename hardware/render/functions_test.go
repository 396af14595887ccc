package render_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

var colorFunctions = []messages.Function{
	{Name: "level", Params: []string{"f"}, Code: "return (f * 10) % 256;"},
	{Name: "sparkle", Code: "return random() * 255;"},
	{Name: "ramp", Params: []string{"f", "k"}, Code: "return level(f) / k;"},
	{Name: "clock", Code: "return now() % 1000 / 4;"},
	{Name: "remember", Code: "setData('x', 1);\nreturn 0;"},
	{Name: "boom", Params: []string{"f"}, Code: "if (f > 1) {\n  throw new Error('too far: ' + f);\n}\nreturn 0;"},
}

// A state's colors call the light's functions as a rule's expressions
// do, with the same random() numbers as the same code written inline.
func TestFunctionsInColors(t *testing.T) {
	r := newRenderer(t, render.Options{Pixels: 3})
	if err := r.SetFunctions(colorFunctions); err != nil {
		t.Fatal(err)
	}
	inline := newRenderer(t, render.Options{Pixels: 3})
	for _, tt := range []struct{ called, inline messages.State }{
		{rgb("a", "level(frame)", "ramp(frame, 2)", 7, speed(10)), rgb("a", "(frame * 10) % 256", "(frame * 10) % 256 / 2", 7, speed(10))},
		{rgb("b", "sparkle()", "sparkle() + i", "clock()", speed(10)), rgb("b", "random() * 255", "random() * 255 + i", "Date.now() % 1000 / 4", speed(10))},
	} {
		if err := r.SetState(tt.called, t0, 9, nil); err != nil {
			t.Fatal(err)
		}
		if err := inline.SetState(tt.inline, t0, 9, nil); err != nil {
			t.Fatal(err)
		}
		for k := range 5 {
			at := t0.Add(ms(10*k + 3))
			a, b := r.Frame(at), inline.Frame(at)
			if a.Err != nil || b.Err != nil || hex(a.Raw) != hex(b.Raw) {
				t.Errorf("%s frame %d: %s (%v), inline %s (%v)", tt.called.Name, k, hex(a.Raw), a.Err, hex(b.Raw), b.Err)
			}
		}
	}
}

func TestFunctionFailuresInColors(t *testing.T) {
	tests := []struct {
		name, expr, want string
	}{
		{"a function that sets data", "remember()", "TypeError: setData cannot be called from a state's color expression (nor from a function it calls); only a rule's action can (in function remember, line 1, column 8)"},
		{"setData itself", "setData('x', 1)", "TypeError: setData cannot be called from a state's color expression"},
		{"a throw in a function", "boom(frame)", "Error: too far: 2 (in function boom, line 2, column 9)"},
		{"too deep", "(function f() { return ramp(frame, 1) + f() })()", "maximum call stack size exceeded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(t, render.Options{})
			if err := r.SetFunctions(colorFunctions); err != nil {
				t.Fatal(err)
			}
			if err := r.SetState(rgb("s", tt.expr, 0, 0, speed(10)), t0, 0, nil); err != nil {
				t.Fatal(err)
			}
			var err error
			for k := range 3 {
				if f := r.Frame(t0.Add(ms(10 * k))); f.Err != nil {
					err = f.Err
				}
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

// New functions apply to the states set after them; a channel naming a
// function that is gone fails as any unknown name does.
func TestSetFunctionsChanges(t *testing.T) {
	r := newRenderer(t, render.Options{})
	fns := []messages.Function{{Name: "level", Code: "return 10;"}}
	st := rgb("s", "level()", 0, 0, nil)
	for _, step := range []struct {
		fns  []messages.Function
		want string
		err  string
	}{
		{fns, "0a0000", ""},
		{[]messages.Function{{Name: "level", Code: "return 20;"}}, "140000", ""},
		{nil, "ff0080", "level is not defined"},
	} {
		if err := r.SetFunctions(step.fns); err != nil {
			t.Fatal(err)
		}
		if err := r.SetState(st, t0, 0, nil); err != nil {
			t.Fatal(err)
		}
		f := r.Frame(t0)
		if hex(f.Raw) != step.want || (step.err == "") != (f.Err == nil) || f.Err != nil && !strings.Contains(f.Err.Error(), step.err) {
			t.Errorf("functions %v: %s (%v), want %s (%s)", step.fns, hex(f.Raw), f.Err, step.want, step.err)
		}
	}
	if err := r.SetFunctions([]messages.Function{{Name: "bad", Code: "return ("}}); err == nil {
		t.Error("functions that do not compile were taken")
	}
}

func TestPreviewWithFunctions(t *testing.T) {
	frames, err := render.Preview(rgb("s", "level(frame)", 0, 0, speed(50)), colorFunctions, render.Options{}, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, f := range frames {
		got = append(got, hex(f))
	}
	if strings.Join(got, " ") != "000000 0a0000 140000" {
		t.Errorf("frames %v", got)
	}
}
