package qemutest

import (
	"fmt"
	"strings"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/input"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

// The input-pin part of the script: after the button, the guest watches
// InputPin (a PIR sensor's line) through the driver's Inputs and the same
// debouncer the hardware actor uses, and the host drives the pin over
// qtest like the sensor would.

// InputPin is the watched input: free in Config (the LED is on 17, 27, 22,
// the button on 4).
const InputPin = 23

// InputDebounce is the debounce of the script's input pin: wider than a
// gpio source's default 20 ms, because the emulated board's polling can
// stall for tens of milliseconds, which could split the bounce below.
const InputDebounce = 100 * time.Millisecond

// Lines of the input part.
const (
	LineInputIdle  = "input-idle?" // the guest wants InputPin low before it watches it
	LineInputReady = "input-ready" // InputPin is watched: play InputTimeline now
)

// InputTimeline is the levels the host writes on InputPin once the guest is
// ready, as offsets from the first: two pulses, the second with a bounce
// inside the debounce window. The gaps are hundreds of milliseconds, far
// more than the emulated board's polling jitter; the bounce needs only to
// fall inside the window, and is absorbed whether or not the guest's
// polling sees it.
var InputTimeline = []TimedLevel{
	{High: true, At: 0},
	{High: false, At: 400 * time.Millisecond},
	{High: true, At: 900 * time.Millisecond},
	{High: false, At: 902 * time.Millisecond}, // a bounce
	{High: true, At: 904 * time.Millisecond},
	{High: false, At: 1400 * time.Millisecond},
}

// TimedLevel is a level of InputPin at an offset from the first.
type TimedLevel struct {
	High bool
	At   time.Duration
}

// InputChanges is how many debounced changes InputTimeline makes: the
// bounce is absorbed.
const InputChanges = 4

// InputLine is a debounced change of the input pin the guest saw, at an
// offset from the first.
func InputLine(c input.Change, at time.Duration) string {
	return fmt.Sprintf("input %s +%dms", c.Kind(), at.Milliseconds())
}

// ParseInput reads an InputLine: the edge's kind.
func ParseInput(s string) (kind string, ok bool) {
	if !strings.HasPrefix(s, "input ") || strings.HasPrefix(s, LineInputIdle) || strings.HasPrefix(s, LineInputReady) {
		return "", false
	}
	var ms int
	_, err := fmt.Sscanf(s, "input %s +%dms", &kind, &ms)
	return kind, err == nil
}

// SimulateInput runs InputTimeline through the simulator path: simulated
// input pins and the debouncer, on a scripted clock. It returns the kinds
// of the debounced changes.
func SimulateInput() ([]string, error) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := t0
	clk := clocktest.New(now)
	in := sim.NewInputs(Config().Reserved(), clk)
	defer in.Halt()
	high, err := in.Watch(InputPin, hardware.PullDown)
	if err != nil {
		return nil, err
	}
	det, err := input.New(InputDebounce, high)
	if err != nil {
		return nil, err
	}
	var out []string
	take := func(cs []input.Change) {
		for _, c := range cs {
			out = append(out, c.Kind())
		}
	}
	for _, l := range InputTimeline {
		now = t0.Add(l.At)
		clk.Set(now)
		if at, ok := det.Deadline(); ok && !at.After(now) {
			take(det.Tick(at))
		}
		if _, err := in.Set(InputPin, l.High); err != nil {
			return nil, err
		}
		lv := <-in.Levels()
		take(det.Sample(lv.High, lv.At))
	}
	take(det.Tick(now.Add(time.Hour)))
	return out, nil
}
