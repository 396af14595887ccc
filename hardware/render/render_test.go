package render_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var t0 = time.Date(2025, 3, 1, 20, 0, 0, 0, time.UTC)

var errColor = hardware.RGB{R: 255, G: 0, B: 128}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func speed(n int) *int { return &n }

// rgb makes a state from numbers (float64) and expressions (string).
func rgb(name string, r, g, b any, sp *int) messages.State {
	ch := func(v any) messages.Channel {
		switch v := v.(type) {
		case string:
			return messages.Expr(v)
		case int:
			return messages.Num(float64(v))
		case float64:
			return messages.Num(v)
		}
		panic(fmt.Sprintf("channel %v", v))
	}
	return messages.State{Name: name, R: ch(r), G: ch(g), B: ch(b), Speed: sp}
}

// newRenderer returns a renderer with a generous time bound, so that the
// tests pass under -race on a slow machine; the timeout test sets its own.
func newRenderer(t *testing.T, o render.Options) *render.Renderer {
	t.Helper()
	if o.EvalTimeout == 0 {
		o.EvalTimeout = 2 * time.Second
	}
	r, err := render.New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

func hex(px []hardware.RGB) string {
	var b strings.Builder
	for i, c := range px {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%02x%02x%02x", c.R, c.G, c.B)
	}
	return b.String()
}

func line(at time.Duration, f render.Frame) string {
	return fmt.Sprintf("+%v N=%d raw=[%s] out=[%s] err=%v\n", at, f.N, hex(f.Raw), hex(f.Out), f.Err)
}

// golden compares got with testdata/name.golden, or rewrites it with
// -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from the golden file:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// step sets a state at an offset from t0.
type step struct {
	at   time.Duration
	st   messages.State
	seed uint64
	vars map[string]json.RawMessage
}

func TestGoldenFrames(t *testing.T) {
	tests := []struct {
		name   string
		opts   render.Options
		steps  []step
		frames []time.Duration
	}{{
		name:   "static_numeric",
		opts:   render.Options{Gamma: 1},
		steps:  []step{{st: rgb("orange", 255, 128.4, 0, nil)}},
		frames: []time.Duration{0, ms(500), time.Hour},
	}, {
		name:   "static_numeric_clamped",
		opts:   render.Options{Gamma: 1},
		steps:  []step{{st: rgb("odd", 300, -5, 127.5, nil)}},
		frames: []time.Duration{0},
	}, {
		name:   "static_random",
		opts:   render.Options{Pixels: 3, Gamma: 1},
		steps:  []step{{st: rgb("confetti", "random()*255", "random()*255", "random()*255", nil), seed: 7}},
		frames: []time.Duration{0, ms(100), ms(5000)},
	}, {
		name:   "animated",
		opts:   render.Options{Gamma: 1},
		steps:  []step{{st: rgb("pulse", "frame*20", "sin(t*3)*127+128", "random()*255", speed(100)), seed: 3}},
		frames: []time.Duration{0, ms(100), ms(200), ms(300), ms(400), ms(500), ms(600), ms(700), ms(800), ms(900)},
	}, {
		name:   "animated_late_timer",
		opts:   render.Options{Gamma: 1},
		steps:  []step{{st: rgb("ramp", "frame*20", 0, "t*100", speed(100))}},
		frames: []time.Duration{ms(0), ms(99), ms(130), ms(250), ms(710)},
	}, {
		name:   "per_pixel",
		opts:   render.Options{Pixels: 8, Gamma: 1},
		steps:  []step{{st: rgb("gradient", "i*255/(n-1)", "hsv(i*360/n,1,1)", "(i%2)*255", nil)}},
		frames: []time.Duration{0},
	}, {
		name:   "hsv_all_channels",
		opts:   render.Options{Pixels: 6, Gamma: 1},
		steps:  []step{{st: rgb("rainbow", "hsv(i*60+t*60,1,1)", "hsv(i*60+t*60,1,1)", "hsv(i*60+t*60,1,1)", speed(500))}},
		frames: []time.Duration{0, ms(500), ms(1000)},
	}, {
		name: "fade",
		opts: render.Options{Gamma: 1, FadeMs: 200},
		steps: []step{
			{st: rgb("red", 255, 0, 0, nil)},
			{at: time.Second, st: rgb("blue", 0, 0, 255, nil)},
		},
		frames: []time.Duration{0, ms(1000), ms(1050), ms(1100), ms(1150), ms(1200), ms(1250)},
	}, {
		name: "fade_interrupted",
		opts: render.Options{Gamma: 1, FadeMs: 100},
		steps: []step{
			{st: rgb("white", 255, 255, 255, nil)},
			{at: ms(100), st: rgb("off", 0, 0, 0, nil)},
			{at: ms(150), st: rgb("green", 0, 255, 0, nil)},
		},
		frames: []time.Duration{0, ms(100), ms(150), ms(200), ms(250)},
	}, {
		name:   "gamma_brightness",
		opts:   render.Options{Pixels: 4, Gamma: 2.2, Brightness: 0.5},
		steps:  []step{{st: rgb("grey", "i*85", "i*85", "255-i*85", nil)}},
		frames: []time.Duration{0},
	}, {
		name:   "getdata",
		opts:   render.Options{Gamma: 1},
		steps:  []step{{st: rgb("level", "getData('level')", "getData('rgb').g", "getData('missing') === undefined ? 7 : 0", nil), vars: map[string]json.RawMessage{"level": json.RawMessage("42"), "rgb": json.RawMessage(`{"g": 99}`)}}},
		frames: []time.Duration{0},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(t, tt.opts)
			var b strings.Builder
			next := 0
			for _, at := range tt.frames {
				for next < len(tt.steps) && tt.steps[next].at <= at {
					s := tt.steps[next]
					if err := r.SetState(s.st, t0.Add(s.at), s.seed, s.vars); err != nil {
						t.Fatal(err)
					}
					fmt.Fprintf(&b, "+%v set %s\n", s.at, s.st.Name)
					next++
				}
				b.WriteString(line(at, r.Frame(t0.Add(at))))
			}
			golden(t, tt.name, b.String())
		})
	}
}

func TestRandomPerClick(t *testing.T) {
	r := newRenderer(t, render.Options{Gamma: 1})
	st := rgb("random", "random()*255", "random()*255", "random()*255", nil)
	color := func(seed uint64) hardware.RGB {
		if err := r.SetState(st, t0, seed, nil); err != nil {
			t.Fatal(err)
		}
		return r.Frame(t0.Add(time.Minute)).Raw[0]
	}
	a, b, a2 := color(10), color(11), color(10)
	if a == b {
		t.Errorf("seeds 10 and 11 give the same color %v", a)
	}
	if a != a2 {
		t.Errorf("seed 10 gives %v then %v", a, a2)
	}
}

func TestRandomDoesNotDependOnPixelCount(t *testing.T) {
	st := rgb("sparkle", "random()*255", "random()*255", 0, speed(50))
	short, err := render.Preview(st, nil, render.Options{Pixels: 2}, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	long, err := render.Preview(st, nil, render.Options{Pixels: 10}, 3, 5)
	if err != nil {
		t.Fatal(err)
	}
	for k := range short {
		if hex(short[k]) != hex(long[k][:2]) {
			t.Errorf("frame %d: %s with 2 pixels, %s with 10", k, hex(short[k]), hex(long[k][:2]))
		}
	}
	if hex(short[0]) == hex(short[1]) {
		t.Errorf("frames 0 and 1 are both %s: random() should change with the frame", hex(short[0]))
	}
}

func TestSetVars(t *testing.T) {
	r := newRenderer(t, render.Options{Gamma: 1})
	anim := rgb("meter", "getData('v')", 0, 0, speed(100))
	if err := r.SetState(anim, t0, 1, map[string]json.RawMessage{"v": json.RawMessage("10")}); err != nil {
		t.Fatal(err)
	}
	if got := r.Frame(t0).Raw[0].R; got != 10 {
		t.Errorf("r = %d, want 10", got)
	}
	r.SetVars(map[string]json.RawMessage{"v": json.RawMessage("20")})
	if got := r.Frame(t0.Add(ms(10))).Raw[0].R; got != 20 {
		t.Errorf("after SetVars, within the same frame: r = %d, want 20", got)
	}
	if got := r.Frame(t0.Add(ms(100))).Raw[0].R; got != 20 {
		t.Errorf("next frame: r = %d, want 20", got)
	}

	static := rgb("once", "getData('v')", 0, 0, nil)
	if err := r.SetState(static, t0, 1, map[string]json.RawMessage{"v": json.RawMessage("30")}); err != nil {
		t.Fatal(err)
	}
	r.SetVars(map[string]json.RawMessage{"v": json.RawMessage("40")})
	if got := r.Frame(t0).Raw[0].R; got != 30 {
		t.Errorf("static state after SetVars: r = %d, want 30 (evaluated once, at SetState)", got)
	}
}

func TestCorrectAndDuty(t *testing.T) {
	correct := []struct {
		name              string
		given             hardware.RGB
		gamma, brightness float64
		want              hardware.RGB
	}{
		{"identity", hardware.RGB{R: 0, G: 128, B: 255}, 1, 1, hardware.RGB{R: 0, G: 128, B: 255}},
		{"gamma 2.2", hardware.RGB{R: 0, G: 128, B: 255}, 2.2, 1, hardware.RGB{R: 0, G: 56, B: 255}},
		{"gamma 2.2 low", hardware.RGB{R: 16, G: 32, B: 64}, 2.2, 1, hardware.RGB{R: 1, G: 3, B: 12}},
		{"brightness half", hardware.RGB{R: 255, G: 100, B: 1}, 1, 0.5, hardware.RGB{R: 128, G: 50, B: 1}},
		{"both", hardware.RGB{R: 255, G: 128, B: 0}, 2.2, 0.5, hardware.RGB{R: 128, G: 28, B: 0}},
		{"brightness clamped", hardware.RGB{R: 200}, 1, 3, hardware.RGB{R: 200}},
		{"brightness zero", hardware.RGB{R: 255, G: 255, B: 255}, 2.2, 0, hardware.RGB{}},
		{"bad gamma is none", hardware.RGB{R: 100}, -1, 1, hardware.RGB{R: 100}},
	}
	for _, tt := range correct {
		t.Run("Correct/"+tt.name, func(t *testing.T) {
			if got := render.Correct(tt.given, tt.gamma, tt.brightness); got != tt.want {
				t.Errorf("Correct(%v, %v, %v) = %v, want %v", tt.given, tt.gamma, tt.brightness, got, tt.want)
			}
		})
	}
	duty := []struct {
		v     uint8
		cycle uint32
		want  uint32
	}{
		{0, 1000, 0}, {255, 1000, 1000}, {128, 1000, 502}, {1, 1000, 4}, {1, 100, 0},
		{2, 100, 1}, {255, 1, 1}, {127, 1, 0}, {128, 1, 1}, {255, 0, 0}, {255, 4_000_000_000, 4_000_000_000},
	}
	for _, tt := range duty {
		t.Run(fmt.Sprintf("Duty/%d_of_%d", tt.v, tt.cycle), func(t *testing.T) {
			if got := render.Duty(tt.v, tt.cycle); got != tt.want {
				t.Errorf("Duty(%d, %d) = %d, want %d", tt.v, tt.cycle, got, tt.want)
			}
		})
	}
}

func TestOutIsCorrectedRaw(t *testing.T) {
	o := render.Options{Pixels: 5, Gamma: 1.8, Brightness: 0.7}
	r := newRenderer(t, o)
	if err := r.SetState(rgb("mix", "i*60", "255-i*50", "hsv(i*70,1,1)", speed(20)), t0, 9, nil); err != nil {
		t.Fatal(err)
	}
	for k := range 5 {
		f := r.Frame(t0.Add(ms(20 * k)))
		for i := range f.Raw {
			if want := render.Correct(f.Raw[i], o.Gamma, o.Brightness); f.Out[i] != want {
				t.Errorf("frame %d pixel %d: out %v, want Correct(%v) = %v", k, i, f.Out[i], f.Raw[i], want)
			}
		}
	}
}

func TestPreviewPNG(t *testing.T) {
	st := rgb("chase", "((i + frame) % 4) * 80", "hsv(frame*90,1,1)", "random()*255", speed(40))
	opts := render.Options{Pixels: 4}
	frames, err := render.Preview(st, nil, opts, 5, 12)
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 5 {
		t.Fatalf("%d frames, want 5", len(frames))
	}
	// The same frames as a renderer shows at k·speed.
	r := newRenderer(t, opts)
	if err := r.SetState(st, t0, 12, nil); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for k, want := range frames {
		got := r.Frame(t0.Add(ms(40 * k))).Raw
		if hex(got) != hex(want) {
			t.Errorf("frame %d: renderer %s, preview %s", k, hex(got), hex(want))
		}
		fmt.Fprintf(&b, "%d: %s\n", k, hex(want))
	}
	golden(t, "preview", b.String())

	const cell = 3
	var buf bytes.Buffer
	if err := render.PNG(&buf, frames, cell); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := img.Bounds().Size(); got.X != 4*cell || got.Y != 5*cell {
		t.Fatalf("image is %v, want %dx%d", got, 4*cell, 5*cell)
	}
	for y, f := range frames {
		for x, c := range f {
			for _, d := range [][2]int{{0, 0}, {cell - 1, cell - 1}, {1, 2}} {
				r, g, b, a := img.At(x*cell+d[0], y*cell+d[1]).RGBA()
				got := hardware.RGB{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8)}
				if got != c || a != 0xffff {
					t.Errorf("cell (%d,%d) at %v: %v alpha %d, want %v opaque", x, y, d, got, a, c)
				}
			}
		}
	}
}

func TestPreviewStatic(t *testing.T) {
	frames, err := render.Preview(rgb("teal", 0, 128, 128, nil), nil, render.Options{Pixels: 2}, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for k, f := range frames {
		if hex(f) != "008080 008080" {
			t.Errorf("frame %d: %s", k, hex(f))
		}
	}
}

func TestPreviewAndPNGErrors(t *testing.T) {
	frames, err := render.Preview(rgb("bad", "nope", 0, 0, nil), nil, render.Options{}, 2, 0)
	if err == nil || !strings.Contains(err.Error(), "nope is not defined") {
		t.Errorf("Preview of a failing state: error %v", err)
	}
	if len(frames) != 2 || frames[0][0] != errColor || frames[1][0] != errColor {
		t.Errorf("Preview of a failing state: frames %v, want two frames of the error color", frames)
	}
	if _, err := render.Preview(rgb("x", 1, 1, 1, nil), nil, render.Options{Pixels: -1}, 2, 0); err == nil {
		t.Error("Preview with bad options: no error")
	}
	if _, err := render.Preview(rgb("x", 1, 1, 1, nil), nil, render.Options{}, -1, 0); err == nil {
		t.Error("Preview of -1 frames: no error")
	}
	for _, tt := range []struct {
		name   string
		frames [][]hardware.RGB
		cell   int
	}{
		{"no frames", nil, 4},
		{"empty frames", [][]hardware.RGB{{}, {}}, 4},
		{"zero cell", [][]hardware.RGB{{{R: 1}}}, 0},
		{"too large", [][]hardware.RGB{make([]hardware.RGB, 1024)}, 1 << 12},
	} {
		if err := render.PNG(&bytes.Buffer{}, tt.frames, tt.cell); err == nil {
			t.Errorf("PNG %s: no error", tt.name)
		}
	}
}

func TestANSI(t *testing.T) {
	tests := []struct {
		name  string
		given []hardware.RGB
		want  string
	}{
		{"empty", nil, ""},
		{"one", []hardware.RGB{{R: 255, G: 0, B: 128}}, "\x1b[48;2;255;0;128m  \x1b[0m"},
		{"two", []hardware.RGB{{R: 1, G: 2, B: 3}, {}}, "\x1b[48;2;1;2;3m  \x1b[0m\x1b[48;2;0;0;0m  \x1b[0m"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := render.ANSI(tt.given); got != tt.want {
				t.Errorf("ANSI(%v) = %q, want %q", tt.given, got, tt.want)
			}
		})
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name  string
		given messages.State
		want  string
	}{
		{"unexpected token", rgb("s", 0, "1 + * 2", 0, nil), "channel g has a syntax error at line 1, column 5"},
		{"second line", rgb("s", "1 +\n2 +\n)", 0, 0, nil), "channel r has a syntax error at line 3, column 1"},
		{"unfinished", rgb("s", 0, 0, "sin(", nil), "channel b has a syntax error at the end"},
		{"escapes its wrapper", rgb("s", "1); (2", 0, 0, nil), "channel r is not a single expression"},
		{"bad assignment", rgb("s", 0, "1 = 2", 0, nil), "channel g has a syntax error at line 1, column 1"},
		{"animated", rgb("s", "frame +", 0, 0, speed(50)), "channel r has a syntax error at the end"},
		{"zero speed", rgb("s", 1, 2, 3, speed(0)), "speed is 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(t, render.Options{Pixels: 2})
			err := r.SetState(tt.given, t0, 0, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "render: ") {
				t.Fatalf("SetState error %v, want one containing %q", err, tt.want)
			}
			f := r.Frame(t0)
			if f.Err != nil {
				t.Errorf("Frame reports %v again; SetState already did", f.Err)
			}
			if hex(f.Raw) != hex([]hardware.RGB{errColor, errColor}) {
				t.Errorf("raw %s, want the error color", hex(f.Raw))
			}
			if _, ok := r.Next(t0); ok {
				t.Error("a broken state asks for more frames")
			}
		})
	}
}

func TestRuntimeErrorReportedOnce(t *testing.T) {
	tests := []struct {
		name string
		expr string
		want string
	}{
		{"reference", "nope * 2", "channel g at pixel 0 of frame 0 failed: ReferenceError: nope is not defined (line 1, column 1)"},
		{"undefined", "getData('unset')", "channel g at pixel 0 of frame 0 gave undefined"},
		{"string", "'12'", "gave a string"},
		{"NaN", "0/0", "gave NaN"},
		{"object without g", "({r: 1})", "gave undefined"},
		{"boolean", "i > 100", "gave a boolean"},
		{"thrown", "(() => { throw new Error('boom') })()", "Error: boom"},
		{"bad getData", "getData(3)", "getData needs a variable name"},
		{"second pixel", "i === 1 ? undefined : 5", "channel g at pixel 1 of frame 0 gave undefined"},
		{"frozen helpers", "(sin = 1)", "TypeError"},
		{"frozen Math", "(Math.PI = 3)", "TypeError"},
		{"frozen global", "(globalThis.x = 1)", "object is not extensible"},
		{"no eval", "eval('1')", "eval is not defined"},
		{"no require", "require('fs')", "require is not defined"},
		{"no console", "console.log(1)", "console is not defined"},
		{"frozen variables", "(getData('o').x = 5)", "TypeError"},
		{"frozen hsv result", "(hsv(0,1,1).g = 5)", "TypeError"},
		{"recursion", "(function f() { return f() })()", "maximum call stack size exceeded"},
	}
	vars := map[string]json.RawMessage{"o": json.RawMessage(`{"x": 1}`)}
	for _, tt := range tests {
		for _, animated := range []bool{false, true} {
			name := tt.name + "/static"
			var sp *int
			if animated {
				name, sp = tt.name+"/animated", speed(10)
			}
			t.Run(name, func(t *testing.T) {
				r := newRenderer(t, render.Options{Pixels: 2})
				if err := r.SetState(rgb("s", 10, tt.expr, 20, sp), t0, 0, vars); err != nil {
					t.Fatalf("SetState: %v", err)
				}
				for k := range 3 {
					f := r.Frame(t0.Add(ms(10 * k)))
					if k == 0 && (f.Err == nil || !strings.Contains(f.Err.Error(), tt.want)) {
						t.Errorf("first frame: error %v, want one containing %q", f.Err, tt.want)
					}
					if k > 0 && f.Err != nil {
						t.Errorf("frame %d reports %v again", k, f.Err)
					}
					if hex(f.Raw) != hex([]hardware.RGB{errColor, errColor}) {
						t.Errorf("frame %d: raw %s, want the error color", k, hex(f.Raw))
					}
				}
				// The next state reports its own error.
				if err := r.SetState(rgb("s2", 0, tt.expr, 0, sp), t0, 0, vars); err != nil {
					t.Fatal(err)
				}
				if f := r.Frame(t0); f.Err == nil {
					t.Error("the next failing state reports no error")
				}
			})
		}
	}
}

// A frame that runs past its budget shows the error color; StopAfter
// of them in a row (a static state's one evaluation) stop the state: it
// shows the stopped color, is evaluated no more (no frame is due), and
// reports one error; one late frame alone is not reported. The runtime
// works again for the next state.
func TestTimeoutStopsTheState(t *testing.T) {
	stopped := "400020 400020 400020"
	tests := []struct {
		name    string
		given   messages.State
		stopsAt int // the frame at which it is stopped; -1: never
	}{
		{"statement", rgb("spin", "while(true){}", 0, 0, speed(10)), render.StopAfter - 1},
		{"expression", rgb("spin", 0, "(() => { for (;;) {} })()", 0, speed(10)), render.StopAfter - 1},
		{"first frame only", rgb("spin", "if (frame === 0) { while (true) {} } return 200;", 0, 0, speed(10)), -1},
		{"every other frame", rgb("spin", "if (frame % 2 === 0) { while (true) {} } return 200;", 0, 0, speed(10)), -1},
		{"static", rgb("spin", 0, 0, "(() => { while (true) {} })()", nil), 0},
		{"in toString of a thrown value", rgb("spin", "(() => { throw {toString() { while (true) {} }} })()", 0, 0, speed(10)), render.StopAfter - 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(t, render.Options{Pixels: 3, EvalTimeout: 30 * time.Millisecond})
			if err := r.SetState(tt.given, t0, 0, nil); err != nil {
				t.Fatal(err)
			}
			errs := 0
			for k := range 2 * render.StopAfter {
				at := t0.Add(ms(10 * k))
				start := time.Now()
				f := r.Frame(at)
				if d := time.Since(start); d > 5*time.Second {
					t.Fatalf("frame %d took %v", k, d)
				}
				if f.Err != nil {
					errs++
					var to interface{ Timeout() bool }
					if k != tt.stopsAt || !errors.As(f.Err, &to) || !to.Timeout() || !strings.Contains(f.Err.Error(), "stopped") {
						t.Errorf("frame %d: error %v", k, f.Err)
					}
				}
				switch {
				case tt.stopsAt >= 0 && k >= tt.stopsAt:
					if hex(f.Raw) != stopped {
						t.Errorf("frame %d: raw %s, want the stopped color %s", k, hex(f.Raw), stopped)
					}
					if _, due := r.Next(at); due {
						t.Errorf("frame %d: a stopped state still has frames due", k)
					}
				case tt.stopsAt < 0 && k%2 == 1 && hex(f.Raw) != "c80000 c80000 c80000":
					t.Errorf("frame %d: raw %s, want it to work again", k, hex(f.Raw))
				case k < tt.stopsAt && f.Raw[0] != errColor:
					t.Errorf("frame %d: raw %s, want the error color", k, hex(f.Raw))
				}
			}
			if want := min(tt.stopsAt+1, 1); errs != want {
				t.Errorf("%d errors, want %d", errs, want)
			}
			// The runtime works again for the next state.
			if err := r.SetState(rgb("ok", "i*10", 1, 2, speed(10)), t0, 0, nil); err != nil {
				t.Fatal(err)
			}
			if f := r.Frame(t0); f.Err != nil || hex(f.Raw) != "000102 0a0102 140102" {
				t.Errorf("after a timeout: %s, %v", hex(f.Raw), f.Err)
			}
			// The same state, set again, is evaluated again.
			if err := r.SetState(tt.given, t0, 0, nil); err != nil {
				t.Fatal(err)
			}
			if f := r.Frame(t0); tt.stopsAt == 0 && hex(f.Raw) != stopped || tt.stopsAt != 0 && f.Raw[0] != errColor {
				t.Errorf("set again: raw %s", hex(f.Raw))
			}
		})
	}
}

func TestNext(t *testing.T) {
	type probe struct {
		frame  time.Duration // render a frame at this offset first (-1: none)
		now    time.Duration
		want   time.Duration
		wantOK bool
	}
	tests := []struct {
		name   string
		opts   render.Options
		steps  []step
		probes []probe
	}{{
		name:  "static",
		steps: []step{{st: rgb("red", 255, 0, 0, nil)}},
		probes: []probe{
			{frame: -1, now: 0, want: 0, wantOK: true}, // not shown yet
			{frame: 0, now: 0},
			{frame: -1, now: time.Hour},
		},
	}, {
		name:  "static expression",
		steps: []step{{st: rgb("dice", "random()*255", 0, 0, nil)}},
		probes: []probe{
			{frame: 0, now: 0},
		},
	}, {
		name:  "numbers with a speed do not animate",
		steps: []step{{st: rgb("red", 255, 0, 0, speed(50))}},
		probes: []probe{
			{frame: 0, now: 0},
		},
	}, {
		name:  "animated",
		steps: []step{{st: rgb("pulse", "frame", 0, 0, speed(50))}},
		probes: []probe{
			{frame: 0, now: 0, want: ms(50), wantOK: true},
			{frame: ms(50), now: ms(50), want: ms(100), wantOK: true},
			{frame: ms(130), now: ms(130), want: ms(150), wantOK: true}, // on the grid
			{frame: -1, now: ms(149), want: ms(150), wantOK: true},
		},
	}, {
		name: "fading",
		opts: render.Options{FadeMs: 40},
		steps: []step{
			{st: rgb("red", 255, 0, 0, nil)},
			{at: ms(1000), st: rgb("blue", 0, 0, 255, nil)},
		},
		probes: []probe{
			{frame: 0, now: 0},
			{frame: ms(1000), now: ms(1000), want: ms(1000) + time.Second/30, wantOK: true}, // 30 a second
			{frame: ms(1033), now: ms(1033), want: ms(1040), wantOK: true},                  // the fade's end
			{frame: -1, now: ms(1045), want: ms(1045), wantOK: true},                        // its last frame is still due
			{frame: ms(1045), now: ms(1045)},
		},
	}, {
		name: "fading into an animation",
		opts: render.Options{FadeMs: 100},
		steps: []step{
			{st: rgb("red", 255, 0, 0, nil)},
			{at: ms(1000), st: rgb("pulse", "frame", 0, 0, speed(10))},
		},
		probes: []probe{
			{frame: 0, now: 0},
			{frame: ms(1000), now: ms(1000), want: ms(1010), wantOK: true},
			{frame: ms(1095), now: ms(1095), want: ms(1100), wantOK: true},
			{frame: ms(1100), now: ms(1100), want: ms(1110), wantOK: true},
		},
	}, {
		name: "slow animation while fading",
		opts: render.Options{FadeMs: 100},
		steps: []step{
			{st: rgb("red", 255, 0, 0, nil)},
			{at: ms(1000), st: rgb("pulse", "frame", 0, 0, speed(1000))},
		},
		probes: []probe{
			{frame: 0, now: 0},
			{frame: ms(1000), now: ms(1000), want: ms(1000) + time.Second/30, wantOK: true},
			{frame: ms(1100), now: ms(1100), want: ms(2000), wantOK: true},
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newRenderer(t, tt.opts)
			if _, ok := r.Next(t0); ok {
				t.Error("Next before any state: true")
			}
			next := 0
			for _, p := range tt.probes {
				for next < len(tt.steps) && tt.steps[next].at <= p.now {
					if err := r.SetState(tt.steps[next].st, t0.Add(tt.steps[next].at), 0, nil); err != nil {
						t.Fatal(err)
					}
					next++
				}
				if p.frame >= 0 {
					r.Frame(t0.Add(p.frame))
				}
				got, ok := r.Next(t0.Add(p.now))
				if ok != p.wantOK || (ok && !got.Equal(t0.Add(p.want))) {
					t.Errorf("Next(+%v) = +%v, %v; want +%v, %v", p.now, got.Sub(t0), ok, p.want, p.wantOK)
				}
			}
		})
	}
}

func TestOptions(t *testing.T) {
	tests := []struct {
		name  string
		given render.Options
		want  string // "" for valid
	}{
		{"zero is the defaults", render.Options{}, ""},
		{"a strip", render.Options{Pixels: 1024, Gamma: 5, Brightness: 0.01, FadeMs: 300, EvalTimeout: time.Second}, ""},
		{"negative pixels", render.Options{Pixels: -1}, "pixels is -1"},
		{"too many pixels", render.Options{Pixels: 1025}, "pixels is 1025"},
		{"negative gamma", render.Options{Gamma: -2.2}, "gamma is -2.2"},
		{"gamma too high", render.Options{Gamma: 5.5}, "gamma is 5.5"},
		{"brightness above 1", render.Options{Brightness: 1.5}, "brightness is 1.5"},
		{"negative brightness", render.Options{Brightness: -0.1}, "brightness is -0.1"},
		{"negative fade", render.Options{FadeMs: -10}, "fade is -10 ms"},
		{"negative timeout", render.Options{EvalTimeout: -time.Second}, "timeout is -1s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, err := render.New(tt.given)
			if tt.want == "" {
				if err != nil {
					t.Fatalf("New: %v", err)
				}
				r.Close()
				r.Close() // idempotent
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), "render: ") {
				t.Errorf("New error %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	r := newRenderer(t, render.Options{})
	if err := r.SetState(rgb("bad", "nope", 0, 0, nil), t0, 0, nil); err != nil {
		t.Fatal(err)
	}
	f := r.Frame(t0)
	if len(f.Raw) != 1 || f.Raw[0] != errColor {
		t.Errorf("raw %v, want one pixel of the default error color", f.Raw)
	}
	if want := render.Correct(errColor, 2.2, 1); f.Out[0] != want {
		t.Errorf("out %v, want %v (gamma 2.2, full brightness)", f.Out[0], want)
	}
	if f := newRenderer(t, render.Options{Pixels: 3}).Frame(t0); hex(f.Raw) != "000000 000000 000000" || f.Err != nil {
		t.Errorf("before any state: %s %v, want black", hex(f.Raw), f.Err)
	}
}

// A numeric state costs no JavaScript: no runtime is even made, which a
// handful of allocations shows (a goja runtime takes thousands).
func TestNumericStateCostsNoJavaScript(t *testing.T) {
	st := rgb("red", 255, 0, 0, nil)
	allocs := testing.AllocsPerRun(20, func() {
		r, err := render.New(render.Options{Pixels: 60})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.SetState(st, t0, 1, nil); err != nil {
			t.Fatal(err)
		}
		r.Frame(t0)
		r.Close()
	})
	if allocs > 20 {
		t.Errorf("%v allocations for a numeric state: it must not start JavaScript", allocs)
	}
}

// The caller may keep a frame's slices: the next frame does not change
// them.
func TestFramesAreNotReused(t *testing.T) {
	r := newRenderer(t, render.Options{Pixels: 2, FadeMs: 100})
	if err := r.SetState(rgb("count", "frame", 0, 0, speed(10)), t0, 0, nil); err != nil {
		t.Fatal(err)
	}
	a := r.Frame(t0)
	raw, out := hex(a.Raw), hex(a.Out)
	r.Frame(t0.Add(ms(10)))
	if hex(a.Raw) != raw || hex(a.Out) != out {
		t.Errorf("frame 0 changed from %s/%s to %s/%s", raw, out, hex(a.Raw), hex(a.Out))
	}
}
