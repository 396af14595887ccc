//go:build linux && arm64

// Command lumen-guest runs inside the emulated Pi (see package qemutest):
// the real hardware/rpi driver, the real renderer and the real gesture
// detector on the script in qemutest, printing what the board showed on
// the console for the host to compare with the simulator. It exits 1 if
// one of its own checks failed.
package main

import (
	"fmt"
	"os"
	"slices"
	"time"

	"github.com/stianeikeland/go-rpio/v4"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/hardware/input"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/hardware/rpi"
	"github.com/lumen-home/lumen/hardware/rpi/qemutest"
)

var failed bool

func say(format string, args ...any) {
	fmt.Printf(qemutest.Prefix+format+"\n", args...)
}

func check(ok bool, format string, args ...any) {
	verdict := "ok"
	if !ok {
		verdict, failed = "FAIL", true
	}
	say("check "+verdict+" "+format, args...)
}

func main() {
	err := run()
	check(err == nil, "run: %v", err)
	if failed {
		say("%s %s", qemutest.Verdict, qemutest.VerdictBad)
		os.Exit(1)
	}
	say("%s %s", qemutest.Verdict, qemutest.VerdictOK)
}

func run() error {
	cfg := qemutest.Config()
	button := cfg.Button.Pin
	pins := append(cfg.LED.Pins[:], button, qemutest.SpectatorPin, qemutest.InputPin)
	check(rpi.Available(), "rpi.Available on the emulated board")

	b, err := rpi.Open()
	if err != nil {
		return err
	}
	// Pins not in their reset state, for Close to put back: the green LED
	// pin and a pin the device never uses, both outputs driven high. The
	// button's level is the host's to set (QEMU models no pull-up).
	green := cfg.LED.Pins[1]
	for _, p := range []int{green, qemutest.SpectatorPin} {
		rpio.Pin(p).Output()
		rpio.Pin(p).High()
	}
	say(qemutest.LineIdle)
	idle := waitLevel(b, button, true, 10*time.Second)
	check(idle, "button BCM %d idles high", button)
	if !idle {
		return b.Close()
	}
	before := funcs(b, pins)

	d, err := b.Device(cfg)
	if err != nil {
		b.Close()
		return err
	}
	got := funcs(b, pins)
	check(slices.Equal(got[:4], []rpi.PinFunc{rpi.FuncOutput, rpi.FuncOutput, rpi.FuncOutput, rpi.FuncInput}),
		"device sets LED pins to outputs and the button to an input: %v", got[:4])
	check(lit(b, cfg) == "---", "the LED starts dark: %s", lit(b, cfg))

	if err := showStates(b, d, cfg); err != nil {
		b.Close()
		return err
	}
	gestures(d)
	if err := inputs(b, cfg); err != nil {
		b.Close()
		return err
	}

	check(d.Halt() == nil, "Halt")
	check(lit(b, cfg) == "---", "Halt darkens the LED: %s", lit(b, cfg))
	_, open := <-d.Edges()
	check(!open, "Halt closes Edges")
	check(b.Close() == nil, "Close")
	check(b.Close() == nil, "Close twice")

	b, err = rpi.Open()
	if err != nil {
		return fmt.Errorf("open again: %w", err)
	}
	after := funcs(b, pins)
	check(slices.Equal(after, before), "Close restores the pin modes: %v, before %v (BCM %v)", after, before, pins)
	for _, p := range []int{green, qemutest.SpectatorPin} {
		high, _ := b.Level(p)
		check(high, "BCM %d is driven high again after Close", p)
		rpio.Pin(p).Input()
	}
	return b.Close()
}

// showStates renders each state, shows it and reads the pins back.
func showStates(b *rpi.Board, d *rpi.Device, cfg rpi.Config) error {
	r, err := render.New(render.Options{})
	if err != nil {
		return err
	}
	defer r.Close()
	for _, st := range qemutest.States {
		now := time.Now()
		if err := r.SetState(st, now, 0, nil); err != nil {
			return fmt.Errorf("state %s: %w", st.Name, err)
		}
		f := r.Frame(now)
		if f.Err != nil {
			return fmt.Errorf("state %s: %w", st.Name, f.Err)
		}
		if err := d.Show(f.Out); err != nil {
			return fmt.Errorf("show %s: %w", st.Name, err)
		}
		l := qemutest.LEDLine{State: st.Name, Out: qemutest.Hex(f.Out[0]), Pins: lit(b, cfg)}
		say("%s", l)
		check(l.Pins == qemutest.Pattern(f.Out[0]), "%s: pins %s for %s", st.Name, l.Pins, l.Out)
	}
	return nil
}

// gestures announces it is ready, then turns the button's edges into
// gestures until the Timeline's edges have all come and nothing is
// pending, or a time limit.
func gestures(d *rpi.Device) {
	det, err := gesture.New(gesture.Config{})
	if err != nil {
		check(false, "gesture.New: %v", err)
		return
	}
	want := len(qemutest.Timeline())
	var first time.Time
	var edges int
	since := func(t time.Time) time.Duration {
		if first.IsZero() {
			return 0
		}
		return t.Sub(first)
	}
	report := func(gs []gesture.Gesture) {
		for _, g := range gs {
			say("%s", qemutest.GestureLine(g.Kind, since(g.At)))
		}
	}
	limit := time.After(30 * time.Second)
	timer := time.NewTimer(time.Hour)
	say(qemutest.LineReady)
	for {
		var settle <-chan time.Time
		at, pending := det.Deadline()
		if pending {
			timer.Reset(time.Until(at))
		} else if edges >= want {
			settle = time.After(300 * time.Millisecond) // any stray edge?
		}
		select {
		case e, ok := <-d.Edges():
			if !ok {
				check(false, "Edges closed early")
				return
			}
			if first.IsZero() {
				first = e.At
			}
			edges++
			say("%s", qemutest.EdgeLine(e.Down, since(e.At)))
			report(det.Edge(e))
		case now := <-timer.C:
			if pending {
				report(det.Tick(now))
			}
		case <-settle:
			check(edges == want, "the driver reported %d edges for the %d played", edges, want)
			return
		case <-limit:
			check(false, "only %d of %d edges in 30s", edges, want)
			report(det.Tick(time.Now()))
			return
		}
	}
}

func funcs(b *rpi.Board, pins []int) []rpi.PinFunc {
	out := make([]rpi.PinFunc, len(pins))
	for i, p := range pins {
		f, err := b.Func(p)
		if err != nil {
			check(false, "Func(%d): %v", p, err)
		}
		out[i] = f
	}
	return out
}

// lit reads the LED pins' levels back through go-rpio as a Pattern.
func lit(b *rpi.Board, cfg rpi.Config) string {
	var on [3]bool
	for i, p := range cfg.LED.Pins {
		high, err := b.Level(p)
		if err != nil {
			check(false, "Level(%d): %v", p, err)
		}
		on[i] = high != cfg.LED.ActiveLow
	}
	return qemutest.PatternOf(on)
}

func waitLevel(b *rpi.Board, pin int, high bool, limit time.Duration) bool {
	for end := time.Now().Add(limit); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if l, err := b.Level(pin); err == nil && l == high {
			return true
		}
	}
	return false
}

// inputs watches the input pin through the driver's Inputs, announces it
// is ready, and turns the pin's levels into debounced changes with the
// hardware actor's debouncer until the timeline's changes have come, or a
// time limit. The LED's and the button's pins are refused.
func inputs(b *rpi.Board, cfg rpi.Config) error {
	say(qemutest.LineInputIdle)
	low := waitLevel(b, qemutest.InputPin, false, 10*time.Second)
	check(low, "input BCM %d idles low", qemutest.InputPin)
	in, err := b.Inputs(cfg)
	if err != nil {
		return err
	}
	_, err = in.Watch(cfg.Button.Pin, hardware.PullUp)
	check(err != nil, "Watch refuses the button's pin: %v", err)
	_, err = in.Watch(cfg.LED.Pins[0], hardware.PullNone)
	check(err != nil, "Watch refuses the LED's pin: %v", err)
	high, err := in.Watch(qemutest.InputPin, hardware.PullDown)
	if err != nil {
		return err
	}
	check(!high, "the input's baseline is low")
	f, _ := b.Func(qemutest.InputPin)
	check(f == rpi.FuncInput, "Watch makes BCM %d an input: %v", qemutest.InputPin, f)
	det, err := input.New(qemutest.InputDebounce, high)
	if err != nil {
		return err
	}
	var first time.Time
	changes := 0
	report := func(cs []input.Change) {
		for _, c := range cs {
			if first.IsZero() {
				first = c.At
			}
			changes++
			say("%s", qemutest.InputLine(c, c.At.Sub(first)))
		}
	}
	limit := time.After(30 * time.Second)
	timer := time.NewTimer(time.Hour)
	say(qemutest.LineInputReady)
loop:
	for {
		var settle <-chan time.Time
		if at, pending := det.Deadline(); pending {
			timer.Reset(time.Until(at))
		} else if changes >= qemutest.InputChanges {
			settle = time.After(300 * time.Millisecond) // any stray change?
		}
		select {
		case l, ok := <-in.Levels():
			if !ok {
				check(false, "Levels closed early")
				break loop
			}
			report(det.Sample(l.High, l.At))
		case now := <-timer.C:
			report(det.Tick(now))
		case <-settle:
			break loop
		case <-limit:
			report(det.Tick(time.Now()))
			break loop
		}
	}
	check(changes == qemutest.InputChanges, "the input made %d debounced changes, want %d", changes, qemutest.InputChanges)
	check(in.Halt() == nil, "Inputs.Halt")
	_, open := <-in.Levels()
	check(!open, "Halt closes Levels")
	return nil
}
