package qemutest

import (
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

// Result is what a run of the script showed: per state the frame and the
// lit channels, and the gestures the button's edges made.
type Result struct {
	LEDs     []LEDLine
	Gestures []string
	Inputs   []string // the kinds of the input pin's debounced changes
}

// Simulate runs the script through the simulator path: the renderer's
// frame for each state shown on a hardware/sim device and read back as
// lit channels (>= 128, as an LED without PWM shows it), and the Timeline
// injected into the sim device on a scripted clock, its edges fed to the
// same gesture detector the light uses, ticked at its deadlines.
func Simulate() (Result, error) {
	var res Result
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	clk := clocktest.New(now)
	dev := sim.New(1, clk)
	r, err := render.New(render.Options{})
	if err != nil {
		return res, err
	}
	defer r.Close()
	for _, st := range States {
		if err := r.SetState(st, now, 0, nil); err != nil {
			return res, fmt.Errorf("state %s: %w", st.Name, err)
		}
		f := r.Frame(now)
		if f.Err != nil {
			return res, fmt.Errorf("state %s: %w", st.Name, f.Err)
		}
		if err := dev.Show(f.Out); err != nil {
			return res, err
		}
		shown := dev.Shown()[0]
		res.LEDs = append(res.LEDs, LEDLine{State: st.Name, Out: Hex(f.Out[0]), Pins: Pattern(shown)})
	}

	det, err := gesture.New(gesture.Config{})
	if err != nil {
		return res, err
	}
	take := func(gs []gesture.Gesture) {
		for _, g := range gs {
			res.Gestures = append(res.Gestures, g.Kind)
		}
	}
	tickUntil := func(t time.Time) {
		for {
			at, ok := det.Deadline()
			if !ok || at.After(t) {
				return
			}
			take(det.Tick(at))
		}
	}
	for _, e := range Timeline() {
		tickUntil(t0.Add(e.At))
		now = t0.Add(e.At)
		clk.Set(now)
		if err := dev.Inject(e.Down); err != nil {
			return res, err
		}
		take(det.Edge(<-dev.Edges()))
	}
	tickUntil(now.Add(time.Hour))
	if res.Inputs, err = SimulateInput(); err != nil {
		return res, err
	}
	return res, dev.Halt()
}

// Compare lists how got (the emulated board) differs from want (the
// simulator): the lit channels of each state and the gestures in order.
// The shown frames are compared too, since both ran the same renderer.
func Compare(got, want Result) []string {
	var diffs []string
	for i := range max(len(got.LEDs), len(want.LEDs)) {
		var g, w LEDLine
		if i < len(got.LEDs) {
			g = got.LEDs[i]
		}
		if i < len(want.LEDs) {
			w = want.LEDs[i]
		}
		if g != w {
			diffs = append(diffs, fmt.Sprintf("state %d: board showed %+v, sim %+v", i, g, w))
		}
	}
	if fmt.Sprint(got.Gestures) != fmt.Sprint(want.Gestures) {
		diffs = append(diffs, fmt.Sprintf("gestures: board %v, sim %v", got.Gestures, want.Gestures))
	}
	if fmt.Sprint(got.Inputs) != fmt.Sprint(want.Inputs) {
		diffs = append(diffs, fmt.Sprintf("input pin BCM %d: board %v, sim %v", InputPin, got.Inputs, want.Inputs))
	}
	return diffs
}
