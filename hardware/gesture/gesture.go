// Package gesture turns a button's raw edges into clicks, double clicks,
// holds and releases.
//
// It is pure and clock-driven, like periph's gpioutil debounce wrapper: the
// Detector does no I/O, starts no goroutines and never reads the clock.
// Time comes only from the edges' timestamps and from Tick, so the caller
// owns the one timer (armed at Deadline) and tests replay timelines exactly.
package gesture

import (
	"errors"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// Gesture kinds. They are the transition names a light's state machine
// reacts to, so they are strings rather than an enum.
const (
	Click   = "button_click"
	Double  = "button_double_click"
	Hold    = "button_hold"
	Release = "button_release"
)

// Gesture is one decided gesture.
type Gesture struct {
	Kind string    // Click, Double, Hold or Release
	At   time.Time // when it was decided, not when the press began
}

// Config sets the detector's timing. Durations are in wall time.
type Config struct {
	// Debounce is how long after an accepted level change further raw
	// edges are treated as contact bounce.
	Debounce time.Duration
	// DoubleWindow is how long after a click's release a second press
	// still makes a double click; it also delays every single click.
	DoubleWindow time.Duration
	// Hold is how long a press must last to become a hold.
	Hold time.Duration
}

// DefaultConfig returns timings that suit a tactile push button: short
// enough to feel immediate, long enough to tell a click from a hold.
func DefaultConfig() Config {
	return Config{
		Debounce:     20 * time.Millisecond,
		DoubleWindow: 300 * time.Millisecond,
		Hold:         800 * time.Millisecond,
	}
}

// Validate reports a config the detector cannot work with. It does not fill
// zero fields (New does), so a zero Config is invalid here.
func (c Config) Validate() error {
	switch {
	case c.Debounce < 0:
		return fmt.Errorf("gesture: debounce %v is negative", c.Debounce)
	case c.DoubleWindow < 0:
		return fmt.Errorf("gesture: double-click window %v is negative", c.DoubleWindow)
	case c.Hold < 0:
		return fmt.Errorf("gesture: hold %v is negative", c.Hold)
	case c.Hold == 0:
		return errors.New("gesture: hold must be positive")
	case c.DoubleWindow == 0:
		return errors.New("gesture: double-click window must be positive")
	case c.Debounce >= c.Hold:
		return fmt.Errorf("gesture: debounce %v must be shorter than hold %v", c.Debounce, c.Hold)
	case c.DoubleWindow <= c.Debounce:
		return fmt.Errorf("gesture: double-click window %v must be longer than debounce %v", c.DoubleWindow, c.Debounce)
	}
	return nil
}

// Detector debounces raw edges and decides gestures. It is not safe for
// concurrent use; the device actor owns it and feeds it from one goroutine.
//
// The zero Detector is not usable; call New.
type Detector struct {
	cfg Config

	last time.Time // latest instant seen by Edge or Tick; time never goes back

	// Debounce.
	raw       bool      // latest raw level
	pressed   bool      // debounced level
	lockUntil time.Time // end of the bounce window opened by the last accepted change

	// Gestures.
	pressAt    time.Time // when the current debounced press began
	held       bool      // Hold already fired for the current press
	pending    bool      // a click's release waits for its double window to close
	releasedAt time.Time // that click's release
	second     bool      // the current press began inside the double window
}

// New returns a detector for cfg. Zero fields take DefaultConfig's values,
// so a config file only names what it changes.
func New(cfg Config) (*Detector, error) {
	def := DefaultConfig()
	if cfg.Debounce == 0 {
		cfg.Debounce = def.Debounce
	}
	if cfg.DoubleWindow == 0 {
		cfg.DoubleWindow = def.DoubleWindow
	}
	if cfg.Hold == 0 {
		cfg.Hold = def.Hold
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return &Detector{cfg: cfg}, nil
}

// Edge feeds one raw edge and returns the gestures it decided, in time
// order. Edges must come in order; an At earlier than the last instant seen
// is taken as that instant, because decisions already made cannot be undone.
func (d *Detector) Edge(e hardware.Edge) []Gesture {
	now := d.clamp(e.At)
	out := d.advance(now, nil)
	if e.Down == d.raw {
		return out // a repeat of the level we already know
	}
	d.raw = e.Down
	if now.Before(d.lockUntil) {
		return out // a bounce; reconciled when the window ends
	}
	return d.accept(now, out)
}

// Tick tells the detector that time reached now with no edge, and returns
// what became due, in time order. Calling it early or twice is harmless.
func (d *Detector) Tick(now time.Time) []Gesture {
	return d.advance(d.clamp(now), nil)
}

// Deadline returns the next instant at which Tick could decide something: a
// single click's window closing, a hold being reached, or a bounce window
// ending with the raw level different from the debounced one. It is false
// when nothing is pending. Callers re-arm after every Edge and Tick.
func (d *Detector) Deadline() (time.Time, bool) {
	at, _, ok := d.next()
	return at, ok
}

// Pressed reports the debounced level.
func (d *Detector) Pressed() bool { return d.pressed }

// Reset forgets all state, keeping the config, as if the button had just
// been connected and was released: a driver restart loses edges, so any
// half-seen gesture is dropped rather than guessed at.
func (d *Detector) Reset() { *d = Detector{cfg: d.cfg} }

func (d *Detector) clamp(t time.Time) time.Time {
	if t.Before(d.last) {
		return d.last
	}
	d.last = t
	return t
}

// event is a time-driven decision.
type event int

const (
	evHold   event = iota // the current press reached Hold
	evClick               // a single click's double window closed
	evSettle              // a bounce window ended with the raw level changed
)

// next returns the earliest pending time-driven decision. Gesture timers
// win ties with a settling level change, so a press at exactly the window's
// end is too late for a double and a release at exactly Hold is a hold.
func (d *Detector) next() (time.Time, event, bool) {
	switch {
	case d.pressed && !d.held:
		at := d.pressAt.Add(d.cfg.Hold)
		if d.raw != d.pressed && d.lockUntil.Before(at) {
			return d.lockUntil, evSettle, true
		}
		return at, evHold, true
	case !d.pressed && d.pending:
		at := d.releasedAt.Add(d.cfg.DoubleWindow)
		if d.raw != d.pressed && d.lockUntil.Before(at) {
			return d.lockUntil, evSettle, true
		}
		return at, evClick, true
	case d.raw != d.pressed:
		return d.lockUntil, evSettle, true
	}
	return time.Time{}, 0, false
}

// advance makes every decision due at or before now, earliest first.
func (d *Detector) advance(now time.Time, out []Gesture) []Gesture {
	for {
		at, ev, ok := d.next()
		if !ok || at.After(now) {
			return out
		}
		switch ev {
		case evHold:
			if d.second {
				// The second press is no double after all, so the first
				// press was a plain click; say so before the hold.
				out = append(out, Gesture{Click, at})
				d.second, d.pending = false, false
			}
			d.held = true
			out = append(out, Gesture{Hold, at})
		case evClick:
			d.pending = false
			out = append(out, Gesture{Click, at})
		case evSettle:
			out = d.accept(at, out)
		}
	}
}

// accept makes the raw level the debounced one at t and opens a new bounce
// window there.
func (d *Detector) accept(t time.Time, out []Gesture) []Gesture {
	d.pressed = d.raw
	d.lockUntil = t.Add(d.cfg.Debounce)
	if d.pressed {
		d.pressAt, d.held = t, false
		d.second = d.pending // advance closed the window if it had passed
		return out
	}
	switch {
	case d.held:
		d.held = false
		return append(out, Gesture{Release, t})
	case d.second:
		d.second, d.pending = false, false
		return append(out, Gesture{Double, t})
	}
	d.pending, d.releasedAt = true, t
	return out
}
