// Package render turns the light's current state into LED frames. It is
// pure: time comes from the arguments, random() from a seed, and the only
// goroutine is the timer that bounds a frame's JavaScript.
//
// A state's channels are numbers or JavaScript expressions evaluated per
// pixel with frame (the frame number since the state was entered), t
// (that frame's time in seconds), i (the pixel) and n (the pixel count),
// and the helpers random(), sin, cos, abs, min, max, floor, hsv(h, s, v)
// (an object {r, g, b}), getData(k), now() (the frame's time in ms),
// Math, and the light's custom functions (SetFunctions), which see the
// same; setData, startTimer and cancelTimer throw (only a rule's action
// may call them). A channel that gives an object takes its own
// component, so all three can be "hsv(t*60,1,1)".
// A source that is not an expression is taken as a function body whose
// return gives the value. Results are rounded and clamped to 0..255;
// anything else (NaN, undefined, a string, an exception) shows ErrorColor
// for that frame and is reported once per state.
//
// A frame's budget is EvalTimeout. A frame that runs past it shows
// ErrorColor; StopAfter such frames in a row (or a static state's one
// evaluation) stop the state: it is evaluated no more, shows the stopped
// color (ErrorColor at a quarter of its level: dim, safe for a strip's
// power, still visibly an error) until it is set again, and that is its
// one error. So an expression that never finishes costs a few frames of
// CPU, not a core for as long as it is shown; a frame that is late once
// (a loaded machine) is not reported.
//
// Everything global is frozen and eval is removed, so a frame depends
// only on the state, the seed, the frame, the pixel and the variables:
// a replay shows the same colors.
//
// A state whose expressions are plain arithmetic on frame, t, i and n
// with the helpers above but getData (see fast.go) runs without
// JavaScript, as Go closures that allocate nothing, with the same results
// (and the same random numbers) as JavaScript gives.
//
// Each frame has Raw colors (what a person means by "the color") and Out
// colors (after the cross-fade, gamma and the brightness cap), which the
// driver shows.
package render

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/messages"
)

// maxPixels bounds Options.Pixels: a long strip, and a bound on the work
// of one frame.
const maxPixels = 1024

// maxSpeedMs bounds a frame period (a day), so that it cannot overflow a
// time.Duration.
const maxSpeedMs = 24 * 60 * 60 * 1000

// StopAfter is how many frames in a row may run past their budget
// (Options.EvalTimeout) before the state is stopped.
const StopAfter = 3

// Options configures a Renderer. The zero value of each field means its
// default, so a config file may leave any of them out.
type Options struct {
	Pixels      int           // pixels per frame (1 for an RGB LED); default 1
	Gamma       float64       // gamma correction exponent applied to Out; default 2.2; 1 = none
	Brightness  float64       // global brightness cap 0..1 applied to Out; default 1 (0 also means 1)
	FadeMs      int           // default fade between consecutive states, in ms (SetFade sets one of its own); default 0 (cut)
	ErrorColor  hardware.RGB  // Raw color of a frame whose expressions fail (Out corrects it like any color); default {255, 0, 128}
	EvalTimeout time.Duration // bound on evaluating one whole frame; default 20ms
}

func (o Options) withDefaults() Options {
	if o.Pixels == 0 {
		o.Pixels = 1
	}
	if o.Gamma == 0 {
		o.Gamma = 2.2
	}
	if o.Brightness == 0 {
		o.Brightness = 1
	}
	if o.ErrorColor == (hardware.RGB{}) {
		o.ErrorColor = hardware.RGB{R: 255, G: 0, B: 128}
	}
	if o.EvalTimeout == 0 {
		o.EvalTimeout = 20 * time.Millisecond
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Pixels < 1 || o.Pixels > maxPixels:
		return fmt.Errorf("render: pixels is %d; give 1 for an RGB LED or the strip's length, at most %d", o.Pixels, maxPixels)
	case !(o.Gamma > 0 && o.Gamma <= 5):
		return fmt.Errorf("render: gamma is %v; give an exponent above 0 and at most 5 (2.2 suits most LEDs, 1 is none)", o.Gamma)
	case !(o.Brightness >= 0 && o.Brightness <= 1):
		return fmt.Errorf("render: brightness is %v; give a cap from 0 to 1", o.Brightness)
	case o.FadeMs < 0:
		return fmt.Errorf("render: fade is %d ms; give 0 for a cut or a positive duration", o.FadeMs)
	case o.EvalTimeout < 0:
		return fmt.Errorf("render: the evaluation timeout is %v; give a positive duration", o.EvalTimeout)
	}
	return nil
}

// Renderer renders one light's states. It is not safe for concurrent use:
// one actor owns it.
type Renderer struct {
	opts Options
	lut  *lut
	js   *engine             // made for the first expression state that needs JavaScript
	fns  []messages.Function // the light's custom functions

	jsOnly bool // tests: run every expression in JavaScript, never on the fast path
	dim    int  // the light's dimmer in percent, applied to Raw; 0: none (100)

	// the state being shown
	set      bool
	at       time.Time
	seed     uint64
	period   time.Duration // > 0: animated
	prog     *program      // nil: no expression in JavaScript
	fast     *fastProgram  // nil: no expression on the fast path
	base     hardware.RGB  // the numeric channels
	mask     [3]bool       // the expression channels
	vars     map[string]json.RawMessage
	static   []hardware.RGB // the frame of a static state
	pending  error          // a static state's evaluation error, for Frame
	reported bool           // the state's one error was given
	late     int            // frames in a row that ran past their budget
	framed   bool           // a frame of the state was rendered

	// the last animation frame computed, reused until the next is due
	cur    []hardware.RGB
	curN   int
	curErr error

	// fading (fade.go)
	from    []hardware.RGB // Raw-space colors the fade starts from; nil: no fade
	shown   []hardware.RGB // Raw-space colors of the last frame (after the fade)
	fadeAt  time.Time
	fadeDur time.Duration
}

// New returns a Renderer, or an error that says which option is wrong.
// It makes no JavaScript runtime until a state needs one.
func New(opts Options) (*Renderer, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Renderer{opts: opts, lut: newLUT(opts.Gamma, opts.Brightness)}, nil
}

// SetState starts showing st from time at. seed seeds random() (the
// caller passes the stream sequence of the input that caused the state,
// so "random color on each click" changes on every click yet is
// reproducible); vars are the light's variables for getData(k) (JSON
// values). It returns a compile error (with the channel and position) and
// then shows ErrorColor. A fade from the previously shown frame starts at
// at when FadeMs > 0. A static expression state is evaluated here, once;
// its evaluation error, if any, comes with the first Frame.
func (r *Renderer) SetState(st messages.State, at time.Time, seed uint64, vars map[string]json.RawMessage) error {
	r.from = nil
	if r.opts.FadeMs > 0 && r.shown != nil {
		r.SetFade(Fade{Start: at, Duration: time.Duration(r.opts.FadeMs) * time.Millisecond})
	}
	r.set, r.at, r.seed, r.vars = true, at, seed, maps.Clone(vars)
	r.period, r.prog, r.fast, r.base, r.mask = 0, nil, nil, hardware.RGB{}, [3]bool{}
	r.pending, r.reported, r.framed, r.late = nil, false, false, 0
	r.curN, r.curErr = -1, nil
	if err := r.setState(st); err != nil {
		// Shown as ErrorColor; the error was given here, once.
		r.reported, r.period, r.prog, r.fast = true, 0, nil, nil
		r.static = r.fill(r.static, r.opts.ErrorColor)
		return err
	}
	return nil
}

func (r *Renderer) setState(st messages.State) error {
	var exprs [3]string
	var nums [3]uint8
	for c, ch := range [3]messages.Channel{st.R, st.G, st.B} {
		if ch.IsExpr() {
			exprs[c], r.mask[c] = ch.Expr, true
			continue
		}
		if math.IsNaN(ch.Num) {
			return fmt.Errorf("render: channel %s is NaN; give a number from 0 to 255", channelNames[c])
		}
		nums[c] = channel(ch.Num)
	}
	r.base = hardware.RGB{R: nums[0], G: nums[1], B: nums[2]}
	if st.Speed != nil && *st.Speed <= 0 {
		return fmt.Errorf("render: speed is %d; give a positive frame period in milliseconds, or none for a static color", *st.Speed)
	}
	if r.mask == [3]bool{} {
		// Numbers only: no JavaScript, and nothing to animate.
		r.static = r.fill(r.static, r.base)
		return nil
	}
	if !r.jsOnly {
		r.fast = compileFast(exprs)
	}
	if r.fast == nil {
		if r.js == nil {
			js := newEngine(r.opts.Pixels, r.opts.EvalTimeout)
			if err := js.setFunctions(r.fns); err != nil {
				return err
			}
			r.js = js
		}
		r.js.setVars(r.vars)
		p, err := r.js.compile(exprs)
		if err != nil {
			return err
		}
		r.prog = p
	}
	if st.Speed != nil {
		r.period = time.Duration(min(*st.Speed, maxSpeedMs)) * time.Millisecond
		return nil
	}
	r.static = r.fill(r.static, hardware.RGB{})
	if err := r.eval(0, 0, r.static); err != nil {
		r.pending = err
		r.fill(r.static, r.opts.ErrorColor)
		if timedOut(err) {
			r.stop(1, 0)
		}
	}
	return nil
}

// timedOut reports whether err is a frame that ran past its budget.
func timedOut(err error) bool {
	e, ok := err.(*evalError)
	return ok && e.timeout
}

// stop stops evaluating the state after n frames in a row, the last
// being frame last, ran past their budget: from now on it shows the
// stopped color, and its error says so.
func (r *Renderer) stop(n, last int) {
	r.period, r.prog, r.fast = 0, nil, nil
	r.static = r.fill(r.static, r.stoppedColor())
	r.pending = stoppedError(r.opts.EvalTimeout, n, last)
}

// stoppedColor is ErrorColor at a quarter of its level.
func (r *Renderer) stoppedColor() hardware.RGB {
	q := func(v uint8) uint8 { return uint8((int(v) + 2) / 4) }
	c := r.opts.ErrorColor
	return hardware.RGB{R: q(c.R), G: q(c.G), B: q(c.B)}
}

// eval computes the expression channels of frame (at t seconds into the
// state) into dst, whose other channels it sets from base.
func (r *Renderer) eval(frame int, t time.Duration, dst []hardware.RGB) error {
	if r.fast != nil {
		return r.fast.frame(frame, t.Seconds(), r.seed, r.base, dst, r.opts.EvalTimeout)
	}
	return r.js.frame(r.prog, frame, t.Seconds(), r.at.Add(t), r.seed, r.base, r.mask, dst)
}

// fill sets buf to Pixels copies of c, reusing its memory.
func (r *Renderer) fill(buf []hardware.RGB, c hardware.RGB) []hardware.RGB {
	buf = buf[:0]
	for range r.opts.Pixels {
		buf = append(buf, c)
	}
	return buf
}

// SetFunctions gives the light's custom functions to the states set from
// now on: their expressions may call them by name. The state shown keeps
// the functions it was set with until it is set again. An error (the
// functions do not compile) leaves the functions as they were.
func (r *Renderer) SetFunctions(fns []messages.Function) error {
	if slices.EqualFunc(r.fns, fns, sameFunction) {
		return nil
	}
	fns = slices.Clone(fns)
	if r.js != nil {
		if err := r.js.setFunctions(fns); err != nil {
			return err
		}
	}
	r.fns = fns
	return nil
}

func sameFunction(a, b messages.Function) bool {
	return a.Name == b.Name && a.Code == b.Code && slices.Equal(a.Params, b.Params)
}

// SetVars replaces the variables without restarting the state (for
// animations that read getData). A static state keeps the colors it was
// entered with.
func (r *Renderer) SetVars(vars map[string]json.RawMessage) {
	r.vars = maps.Clone(vars)
	if r.js != nil {
		r.js.setVars(r.vars)
	}
	r.curN = -1 // recompute the animation frame with the new values
}

// Frame is one rendered frame.
type Frame struct {
	N   int            // frame number since the state was entered (0 first); 0 for a static state
	Raw []hardware.RGB // computed colors times the dimmer (SetBrightness), before gamma and the brightness cap
	Out []hardware.RGB // after fade, gamma and brightness: what the driver shows
	Err error          // non-nil only on the FIRST frame that fails with a given state: one error per state, not one per frame
}

// Frame renders the frame for now. An animated state shows frame
// floor((now-at)/Speed), computed for its nominal time, so that a late
// timer skips frames instead of slowing the animation down and the same
// frame always looks the same. Before any SetState the frame is black.
// The slices are new on each call: the caller may keep them.
func (r *Renderer) Frame(now time.Time) Frame {
	var f Frame
	var err error
	raw := make([]hardware.RGB, r.opts.Pixels)
	switch {
	case !r.set:
	case r.period > 0:
		f.N = r.index(now)
		if f.N != r.curN {
			r.cur = r.fill(r.cur, hardware.RGB{})
			t := time.Duration(f.N) * r.period
			r.curN = f.N
			r.curErr = r.eval(f.N, t, r.cur)
			if r.curErr != nil {
				r.fill(r.cur, r.opts.ErrorColor)
			}
			r.late++
			if !timedOut(r.curErr) {
				r.late = 0
			}
		}
		if r.late >= StopAfter {
			r.stop(r.late, f.N)
			copy(raw, r.static)
			err = r.pending
			break
		}
		copy(raw, r.cur)
		if err = r.curErr; timedOut(err) {
			err = nil // reported once the state is stopped
		}
	default:
		copy(raw, r.static)
		err = r.pending
	}
	if err != nil && !r.reported {
		f.Err, r.reported = err, true
	}
	if r.dim > 0 && r.dim < 100 {
		for i, c := range raw {
			raw[i] = hardware.RGB{R: dimmed(c.R, r.dim), G: dimmed(c.G, r.dim), B: dimmed(c.B, r.dim)}
		}
	}
	f.Raw = raw
	shown := raw
	if x, ok := r.fading(now); ok {
		shown = blend(make([]hardware.RGB, len(raw)), r.from, raw, x)
	}
	f.Out = make([]hardware.RGB, len(shown))
	for i, c := range shown {
		f.Out[i] = r.lut.apply(c)
	}
	r.shown = append(r.shown[:0], shown...)
	r.framed = r.set
	return f
}

// SetBrightness sets the light's dimmer, 1–100 percent: every frame's Raw
// colors are scaled by it, linearly, before the fade, gamma and the
// brightness cap. The state shown keeps its animation and its random
// colors; the next Frame shows the new level.
func (r *Renderer) SetBrightness(percent int) {
	r.dim = min(max(percent, 1), 100)
}

// dimmed is v at percent, rounded: 50% of 255 is 128.
func dimmed(v uint8, percent int) uint8 {
	return uint8((int(v)*percent + 50) / 100)
}

// index is the animation frame due at now.
func (r *Renderer) index(now time.Time) int {
	el := now.Sub(r.at)
	if el < 0 {
		return 0
	}
	return int(el / r.period)
}

// Next says when the next frame is due after now: every Speed ms while
// the state is animated (on the state's grid, at+k·Speed), 30 times a
// second while fading (and exactly at the fade's end); false when the
// state is static and no fade is running (nothing changes until the next
// SetState). A state not rendered yet is due at now.
func (r *Renderer) Next(now time.Time) (time.Time, bool) {
	if !r.set {
		return time.Time{}, false
	}
	if !r.framed {
		return now, true
	}
	var next time.Time
	ok := false
	if r.period > 0 {
		next, ok = r.at.Add(time.Duration(r.index(now)+1)*r.period), true
	}
	if r.from != nil {
		end := r.fadeEnd()
		f := now.Add(fadeTick)
		switch {
		case !now.Before(end):
			f = now // the fade's last frame is still to show
		case f.After(end):
			f = end
		}
		if !ok || f.Before(next) {
			next, ok = f, true
		}
	}
	return next, ok
}

// Close releases the JavaScript runtime. Nothing runs in the background
// between frames, so Close only frees memory; it is idempotent.
func (r *Renderer) Close() {
	r.js = nil
	r.set, r.prog, r.fast, r.period = false, nil, nil, 0
}
