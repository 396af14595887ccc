package render

import (
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/dop251/goja"
	"github.com/dop251/goja/ast"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/jsbox"
	"github.com/lumen-home/lumen/messages"
)

// Each channel is compiled once, as a strict function of (frame, t, i, n)
// whose body starts on the wrapper's second line, so that a position in
// the wrapper is the user's position one line down. Each is compiled on
// its own, so it sees only its parameters and the frozen globals.
//
// A source that is not an expression is tried as a function body, whose
// return gives the value, so that "while (true) {}" compiles (and is cut
// by the time bound) and a longer computation can use statements.
const (
	chanHead = "(function(frame, t, i, n) {\"use strict\"; return (\n"
	chanTail = "\n);})"
	bodyHead = "(function(frame, t, i, n) {\"use strict\";\n"
	bodyTail = "\n})"
)

// frameJS makes the function that computes a whole frame from the
// channel functions (null for a numeric channel): one call from Go per
// frame, since goja resets its stack on every call from Go. Each pixel
// starts with pixel(i), which seeds random() for it; the channels are
// rounded and clamped into out (3 bytes a pixel, shared with Go), so that
// nothing is allocated to return them. A value that is not a number
// stops the frame with -(1 + channel·8 + kind), the pixel being the last
// one seeded.
const frameJS = `(function(R, G, B, out, pixel) {
"use strict";
const round = Math.round;
const kind = function(v) {
	if (v !== v) return 0;
	switch (typeof v) {
	case "undefined": return 1;
	case "string": return 2;
	case "boolean": return 3;
	case "object": return v === null ? 4 : 5;
	}
	return 6;
};
return function(frame, t, n) {
	for (let i = 0, o = 0; i < n; i++, o += 3) {
		pixel(i);
		let v;
		if (R !== null) {
			v = R(frame, t, i, n);
			if (typeof v !== "number") {
				if (typeof v === "object" && v !== null) v = v.r;
				if (typeof v !== "number") return -1 - kind(v);
			}
			if (v !== v) return -1;
			out[o] = v >= 255 ? 255 : v > 0 ? round(v) : 0;
		}
		if (G !== null) {
			v = G(frame, t, i, n);
			if (typeof v !== "number") {
				if (typeof v === "object" && v !== null) v = v.g;
				if (typeof v !== "number") return -9 - kind(v);
			}
			if (v !== v) return -9;
			out[o + 1] = v >= 255 ? 255 : v > 0 ? round(v) : 0;
		}
		if (B !== null) {
			v = B(frame, t, i, n);
			if (typeof v !== "number") {
				if (typeof v === "object" && v !== null) v = v.b;
				if (typeof v !== "number") return -17 - kind(v);
			}
			if (v !== v) return -17;
			out[o + 2] = v >= 255 ? 255 : v > 0 ? round(v) : 0;
		}
	}
	return 0;
};
})`

// kinds names what kind() in pixelJS returns.
var kinds = [...]string{"NaN", "undefined", "a string", "a boolean", "null", "an object", "a function"}

// mathJS makes Math's helpers global, for short expressions; the sandbox
// is then hardened (jsbox.Box.Harden): eval removed and everything
// reachable from the global object deep-frozen, so that no evaluation can
// leave state behind for a later one and a frame depends only on its
// state, seed, frame number, pixel and variables.
const mathJS = `(function() {
"use strict";
for (const n of ["sin", "cos", "abs", "min", "max", "floor"]) {
	Object.defineProperty(globalThis, n, {value: Math[n]});
}
})()`

// freezeJS deep-freezes a variable's parsed value, so that getData can
// hand out the same object on every call without an expression being able
// to keep state in it.
const freezeJS = `(function freeze(o) {
"use strict";
if (typeof o === "object" && o !== null && !Object.isFrozen(o)) {
	Object.freeze(o);
	for (const k of Object.keys(o)) freeze(o[k]);
}
return o;
})`

// maxCallDepth bounds recursion in expressions.
const maxCallDepth = 200

// maxMessage bounds the length of a thrown value's text in an error.
const maxMessage = 300

// maxPrograms bounds the cache of compiled states.
const maxPrograms = 64

var errTimeout = errors.New("render: out of time")

// program is one state's compiled channels.
type program struct {
	frame goja.Callable // (frame, t, n) → 0 or an error code
}

// rulesOnly are the host functions of rules that a color cannot call: a
// function that calls one throws when a state's expression calls it.
var rulesOnly = []string{"setData", "startTimer", "cancelTimer"}

// engine is the JavaScript runtime of a Renderer, made only when a state
// has an expression.
type engine struct {
	vm       *goja.Runtime
	mkFrame  goja.Callable
	describe goja.Callable
	parse    goja.Callable
	freeze   goja.Callable
	timeout  time.Duration

	progs map[[3]string]*program
	lib   *jsbox.Library  // the light's functions; nil: none
	fns   map[string]bool // their names

	rng    pixelRand
	now    time.Time // what Date sees: the frame's time
	seed   uint64    // the state's seed
	index  int       // the frame being computed
	pixel  int       // the pixel being computed
	out    []byte    // the channels computed, 3 a pixel, shared with JavaScript
	outJS  goja.Value
	seedJS goja.Value // pixel(i), for frameJS only
	vars   map[string]json.RawMessage
	got    map[string]goja.Value // vars already converted, until they change

	ints []goja.Value // 0..pixels, reused as n
	args [3]goja.Value

	mu      sync.Mutex // guards gen and running against the timer
	gen     uint64
	running bool
}

func newEngine(pixels int, timeout time.Duration) *engine {
	e := &engine{timeout: timeout, progs: map[[3]string]*program{}}
	box := jsbox.New("render", e.rng.Float64, jsbox.Clock(&e.now), maxCallDepth)
	vm := box.VM
	e.vm = vm
	box.Host("random", e.jsRandom)
	box.Host("hsv", e.jsHSV)
	box.Host("getData", e.jsGetData)
	box.Host("now", e.jsNow)
	for _, name := range rulesOnly {
		box.Host(name, func(goja.FunctionCall) goja.Value {
			panic(vm.NewTypeError(name + " cannot be called from a state's color expression (nor from a function it calls); only a rule's action can"))
		})
	}
	e.mkFrame = box.Func(frameJS)
	e.describe = box.Func(jsbox.DescribeJS)
	e.parse = box.Func(`JSON.parse`)
	e.freeze = box.Func(freezeJS)
	e.out = make([]byte, 3*pixels)
	u8, err := box.Func(`(function(b) { return new Uint8Array(b); })`)(goja.Undefined(), vm.ToValue(vm.NewArrayBuffer(e.out)))
	box.Must(err)
	e.outJS = u8
	box.Run(mathJS)
	box.Harden()
	e.seedJS = vm.ToValue(func(call goja.FunctionCall) goja.Value {
		e.pixel = int(call.Argument(0).ToInteger())
		e.rng.seed(e.seed, e.index, e.pixel)
		return goja.Undefined()
	})
	e.ints = make([]goja.Value, pixels+1)
	for i := range e.ints {
		e.ints[i] = vm.ToValue(i)
	}
	return e
}

// compile compiles the expression channels of exprs (empty: numeric);
// identical states share one compiled program.
func (e *engine) compile(exprs [3]string) (*program, error) {
	if p, ok := e.progs[exprs]; ok {
		return p, nil
	}
	var fns [5]goja.Value
	for c, src := range exprs {
		fns[c] = goja.Null()
		if src == "" {
			continue
		}
		f, err := e.compileChannel(channelNames[c], src)
		if err != nil {
			return nil, err
		}
		fns[c] = f
	}
	fns[3], fns[4] = e.outJS, e.seedJS
	v, err := e.mkFrame(goja.Undefined(), fns[:]...)
	if err != nil {
		panic(fmt.Sprintf("render: making a frame function: %v", err))
	}
	f, _ := goja.AssertFunction(v)
	p := &program{frame: f}
	if len(e.progs) >= maxPrograms {
		clear(e.progs)
	}
	e.progs[exprs] = p
	return p, nil
}

var channelNames = [3]string{"r", "g", "b"}

func (e *engine) compileChannel(name, src string) (goja.Value, error) {
	wrapped := chanHead + src + chanTail
	prog, err := jsbox.Parse(name, wrapped)
	if err == nil && !wellFormed(prog, true) {
		err = errNotExpression
	}
	if err != nil {
		wrapped = bodyHead + src + bodyTail
		body, berr := jsbox.Parse(name, wrapped)
		if berr != nil || !wellFormed(body, false) {
			if err == errNotExpression {
				return nil, fmt.Errorf("render: channel %s is not a single expression (it closes a bracket it did not open); fix the JavaScript expression", name)
			}
			return nil, syntaxError(name, src, err)
		}
		prog = body
	}
	uses := jsbox.Scan(jsbox.Wrapped(prog)).Uses(func(n string) bool { return e.fns[n] })
	if len(uses) > 0 {
		// Linked to the light's functions, which it names.
		if prog, err = jsbox.Parse(name, jsbox.Link(wrapped, uses)); err != nil {
			return nil, syntaxError(name, src, err)
		}
	}
	p, err := goja.CompileAST(prog, true)
	if err != nil {
		return nil, syntaxError(name, src, err)
	}
	v, err := e.vm.RunProgram(p) // makes the function; runs no user code
	if err != nil {
		return nil, fmt.Errorf("render: channel %s does not compile: %v", name, err)
	}
	if len(uses) > 0 {
		factory, _ := goja.AssertFunction(v)
		if v, err = e.lib.Instantiate(factory); err != nil {
			return nil, fmt.Errorf("render: channel %s: %v", name, err)
		}
	}
	return v, nil
}

// setFunctions compiles the light's functions for the channels compiled
// from now on, and forgets the programs compiled before.
func (e *engine) setFunctions(fns []messages.Function) error {
	js := make([]jsbox.Func, len(fns))
	names := make(map[string]bool, len(fns))
	for i, f := range fns {
		js[i] = jsbox.Func{Name: f.Name, Params: f.Params, Code: f.Code}
		names[f.Name] = true
	}
	lib, err := jsbox.NewLibrary(e.vm, js)
	if err != nil {
		return fmt.Errorf("render: %w", err)
	}
	e.lib, e.fns = lib, names
	clear(e.progs)
	return nil
}

var errNotExpression = errors.New("render: not an expression")

// wellFormed reports whether the source stayed inside its wrapper: one
// function literal, and for an expression a body of the directive and
// one return.
func wellFormed(prog *ast.Program, expr bool) bool {
	fl := jsbox.Wrapped(prog)
	return fl != nil && (!expr || jsbox.Returns(fl, 2))
}

// syntaxError maps a parser or compiler error to the user's source.
func syntaxError(name, src string, err error) error {
	s := jsbox.ParseError(src, err)
	where := ""
	switch {
	case s.AtEnd:
		where = " at the end"
	case s.Line > 0:
		where = fmt.Sprintf(" at line %d, column %d", s.Line, s.Col)
	}
	return fmt.Errorf("render: channel %s has a syntax error%s (%s); fix the JavaScript expression", name, where, s.Msg)
}

// evalError is an expression that failed while computing a frame.
type evalError struct {
	timeout bool
	msg     string
}

func (e *evalError) Error() string { return e.msg }

// Timeout reports whether the frame ran out of time, as net errors do.
func (e *evalError) Timeout() bool { return e.timeout }

// frame computes the pixels of dst with p, within the time bound. The
// numeric channels of dst are the caller's: base holds them, mask says
// which channels p computes.
func (e *engine) frame(p *program, frame int, t float64, at time.Time, seed uint64, base hardware.RGB, mask [3]bool, dst []hardware.RGB) error {
	e.now, e.seed, e.index, e.pixel = at, seed, frame, 0
	e.args[0] = e.vm.ToValue(frame)
	e.args[1] = e.vm.ToValue(t)
	e.args[2] = e.ints[len(dst)]
	defer e.disarm(e.arm())
	v, err := p.frame(goja.Undefined(), e.args[:]...)
	if err != nil {
		return e.failure(err, frame, e.pixel)
	}
	if code := v.ToInteger(); code < 0 {
		code = -code - 1
		return notNumber(int(code/8), e.pixel, frame, int(code%8))
	}
	for i := range dst {
		px, o := base, e.out[3*i:3*i+3]
		if mask[0] {
			px.R = o[0]
		}
		if mask[1] {
			px.G = o[1]
		}
		if mask[2] {
			px.B = o[2]
		}
		dst[i] = px
	}
	return nil
}

// notNumber is the error of channel c giving kinds[kind] at a pixel.
func notNumber(c, pixel, frame, kind int) error {
	return &evalError{msg: fmt.Sprintf("render: channel %s at pixel %d of frame %d gave %s, not a number; make the expression give a number from 0 to 255 (or hsv(…))", channelNames[c], pixel, frame, kinds[kind])}
}

// arm starts the frame's time bound: one timer per frame, which
// interrupts the runtime only if this same frame is still running.
func (e *engine) arm() *time.Timer {
	e.mu.Lock()
	e.gen++
	gen := e.gen
	e.running = true
	e.mu.Unlock()
	return time.AfterFunc(e.timeout, func() {
		e.mu.Lock()
		if e.running && e.gen == gen {
			e.vm.Interrupt(errTimeout)
		}
		e.mu.Unlock()
	})
}

// disarm ends the frame's time bound and drops an interrupt that came too
// late to stop it, so that the next frame runs.
func (e *engine) disarm(t *time.Timer) {
	t.Stop()
	e.mu.Lock()
	e.running = false
	e.gen++
	e.vm.ClearInterrupt()
	e.mu.Unlock()
}

// failure describes an evaluation that did not complete; it runs before
// the time bound is disarmed.
func (e *engine) failure(err error, frame, pixel int) error {
	f := jsbox.Explain(err, e.describe, maxMessage, "r", "g", "b", jsbox.LibrarySrc)
	if f.Timeout {
		return e.timedOut(frame)
	}
	msg, where := f.Msg, "an expression"
	switch fn, line := e.lib.Where(f.Line); {
	case f.Src == jsbox.LibrarySrc && fn != "":
		msg += fmt.Sprintf(" (in function %s, line %d, column %d)", fn, line, f.Col)
	case f.Src != "" && f.Src != jsbox.LibrarySrc:
		where = "channel " + f.Src
		if f.Line > 0 {
			msg += fmt.Sprintf(" (line %d, column %d)", f.Line, f.Col)
		}
	}
	return &evalError{msg: fmt.Sprintf("render: %s at pixel %d of frame %d failed: %s", where, pixel, frame, msg)}
}

func (e *engine) timedOut(frame int) error { return timeoutError(e.timeout, frame) }

// stoppedError is the error of a state stopped after n frames in a row,
// the last being frame last, ran past their budget.
func stoppedError(timeout time.Duration, n, last int) error {
	frames := fmt.Sprintf("frame %d", last)
	if n > 1 {
		frames = fmt.Sprintf("%d frames in a row, up to frame %d", n, last)
	}
	return &evalError{timeout: true, msg: fmt.Sprintf("render: the expressions ran out of time (over %v) on %s, so the state is stopped and the LED dimmed; make them simpler (they run for every pixel of every frame)", timeout, frames)}
}

func timeoutError(timeout time.Duration, frame int) error {
	return &evalError{timeout: true, msg: fmt.Sprintf("render: the expressions timed out (over %v) computing frame %d; make them simpler, they run for every pixel of every frame", timeout, frame)}
}

// setVars replaces the variables getData sees.
func (e *engine) setVars(vars map[string]json.RawMessage) {
	e.vars = vars
	clear(e.got)
}

// ---- host functions ----

func (e *engine) jsRandom(goja.FunctionCall) goja.Value {
	return e.vm.ToValue(e.rng.Float64())
}

// jsNow is the frame's time in milliseconds since the epoch, as now() is
// an input's time in rules.
func (e *engine) jsNow(goja.FunctionCall) goja.Value {
	return e.vm.ToValue(e.now.UnixMilli())
}

func (e *engine) jsHSV(call goja.FunctionCall) goja.Value {
	c := &hsvColor{vm: e.vm}
	c.r, c.g, c.b = hsv(call.Argument(0).ToFloat(), call.Argument(1).ToFloat(), call.Argument(2).ToFloat())
	return e.vm.NewDynamicObject(c)
}

// hsvColor is what hsv() returns: a read-only object {r, g, b} backed by Go,
// much cheaper to make than an ordinary object, and converting only the
// component that is read.
type hsvColor struct {
	vm      *goja.Runtime
	r, g, b float64
}

func (c *hsvColor) Get(key string) goja.Value {
	switch key {
	case "r":
		return c.vm.ToValue(c.r)
	case "g":
		return c.vm.ToValue(c.g)
	case "b":
		return c.vm.ToValue(c.b)
	}
	return nil
}

func (c *hsvColor) Set(string, goja.Value) bool { return false }
func (c *hsvColor) Has(key string) bool         { return key == "r" || key == "g" || key == "b" }
func (c *hsvColor) Delete(key string) bool      { return !c.Has(key) }
func (c *hsvColor) Keys() []string              { return []string{"r", "g", "b"} }

func (e *engine) jsGetData(call goja.FunctionCall) goja.Value {
	a := call.Argument(0)
	if !goja.IsString(a) {
		panic(e.vm.NewTypeError("getData needs a variable name (a string)"))
	}
	k := a.String()
	if v, ok := e.got[k]; ok {
		return v
	}
	raw, ok := e.vars[k]
	if !ok {
		return goja.Undefined()
	}
	v, err := e.parse(goja.Undefined(), e.vm.ToValue(string(raw)))
	if err != nil {
		panic(e.vm.NewTypeError(fmt.Sprintf("getData(%q): the variable is not valid JSON", k)))
	}
	if v, err = e.freeze(goja.Undefined(), v); err != nil {
		panic(err)
	}
	if e.got == nil {
		e.got = map[string]goja.Value{}
	}
	e.got[k] = v
	return v
}
