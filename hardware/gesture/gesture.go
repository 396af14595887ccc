// Package gesture turns a button's raw edges into clicks, double clicks,
// holds and releases.
//
// It is pure and clock-driven, and composes like periph's gpioutil
// wrappers: the Detector wraps an input.Debouncer, the one debouncer, and
// decides gestures from the level changes it accepts. It does no I/O,
// starts no goroutines and never reads the clock. Time comes only from
// the edges' timestamps and from Tick, so the caller owns the one timer
// (armed at Deadline) and tests replay timelines exactly.
package gesture

import (
	"errors"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/input"
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
	case c.Debounce > input.MaxDebounce:
		return fmt.Errorf("gesture: debounce %v is longer than %v; a button's contacts settle within tens of milliseconds", c.Debounce, input.MaxDebounce)
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

// Config is the detector's timings, its zero fields filled by New.
func (d *Detector) Config() Config { return d.cfg }

// Detector debounces raw edges and decides gestures. It is not safe for
// concurrent use; the device actor owns it and feeds it from one goroutine.
//
// The zero Detector is not usable; call New.
type Detector struct {
	cfg Config

	// pin debounces the raw level (down is high). Its clock is the
	// detector's: the latest instant seen by Edge or Tick, which never goes
	// back.
	pin input.Debouncer

	// The deadlines are kept rather than the instants they follow from,
	// because next runs several times per edge.
	holdAt  time.Time // when the current debounced press becomes a hold
	held    bool      // Hold already fired for the current press
	pending bool      // a click's release waits for its double window to close
	clickAt time.Time // when that window closes
	second  bool      // the current press began inside the double window
	instant bool      // no double click can matter: a click is decided on release
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
	pin, err := input.New(cfg.Debounce, false)
	if err != nil {
		return nil, fmt.Errorf("gesture: %w", err)
	}
	return &Detector{cfg: cfg, pin: *pin}, nil
}

// Edge feeds one raw edge and returns the gestures it decided, in time
// order. Edges must come in order; an At earlier than the last instant seen
// is taken as that instant, because decisions already made cannot be undone.
func (d *Detector) Edge(e hardware.Edge) []Gesture {
	// Decisions due by e.At come first (none if e.At is earlier than the
	// last instant seen); then the pin takes the edge, at most one change.
	out := d.advance(e.At, nil)
	if c, ok := d.pin.Set(e.Down, e.At); ok {
		out = d.accept(c, out)
	}
	return out
}

// Tick tells the detector that time reached now with no edge, and returns
// what became due, in time order. Calling it early or twice is harmless.
func (d *Detector) Tick(now time.Time) []Gesture {
	out := d.advance(now, nil)
	// The pin, settled by advance, learns that time reached now, so that
	// an edge stamped earlier is taken as now.
	if c, ok := d.pin.Settle(now); ok {
		out = d.accept(c, out) // none: advance settled it
	}
	return out
}

// Deadline returns the next instant at which Tick could decide something: a
// single click's window closing, a hold being reached, or a bounce window
// ending with the raw level different from the debounced one. It is false
// when nothing is pending. Callers re-arm after every Edge and Tick.
func (d *Detector) Deadline() (time.Time, bool) {
	at, _, ok := d.next()
	return at, ok
}

// SetInstant says whether a double click can matter now. When it cannot
// (nothing reacts to one), a click is decided on its release instead of
// after the double-click window, and two quick clicks are two clicks. A
// click already waiting for its window keeps waiting.
func (d *Detector) SetInstant(on bool) { d.instant = on }

// Instant reports whether clicks are decided on release.
func (d *Detector) Instant() bool { return d.instant }

// Pressed reports the debounced level.
func (d *Detector) Pressed() bool { return d.pin.Level() }

// Reset forgets all state, keeping the config, as if the button had just
// been connected and was released: a driver restart loses edges, so any
// half-seen gesture is dropped rather than guessed at.
func (d *Detector) Reset() {
	d.pin.Reset(false)
	*d = Detector{cfg: d.cfg, pin: d.pin, instant: d.instant}
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
	settle, settling := d.pin.Deadline()
	pressed := d.pin.Level()
	switch {
	case pressed && !d.held:
		at := d.holdAt
		if settling && settle.Before(at) {
			return settle, evSettle, true
		}
		return at, evHold, true
	case !pressed && d.pending:
		at := d.clickAt
		if settling && settle.Before(at) {
			return settle, evSettle, true
		}
		return at, evClick, true
	case settling:
		return settle, evSettle, true
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
				out = emit(out, Click, at)
				d.second, d.pending = false, false
			}
			d.held = true
			out = emit(out, Hold, at)
		case evClick:
			d.pending = false
			out = emit(out, Click, at)
		case evSettle:
			if c, ok := d.pin.Settle(at); ok {
				out = d.accept(c, out)
			}
		}
	}
}

// accept decides what a change of the debounced level means.
func (d *Detector) accept(c input.Change, out []Gesture) []Gesture {
	t := c.At
	if c.High {
		d.holdAt, d.held = t.Add(d.cfg.Hold), false
		d.second = d.pending // advance closed the window if it had passed
		return out
	}
	switch {
	case d.held:
		d.held = false
		return emit(out, Release, t)
	case d.second:
		d.second, d.pending = false, false
		return emit(out, Double, t)
	case d.instant:
		return emit(out, Click, t)
	}
	d.pending, d.clickAt = true, t.Add(d.cfg.DoubleWindow)
	return out
}

// emit appends a gesture to out. Most calls decide one gesture, so the
// first is allocated alone, which is cheaper than growing a nil slice.
func emit(out []Gesture, kind string, at time.Time) []Gesture {
	if out == nil {
		return []Gesture{{kind, at}}
	}
	return append(out, Gesture{kind, at})
}

// Timings of a gesture made by a program (lumen press): well clear of the
// default debounce, and a double's gap well inside the double-click
// window.
const (
	ClickFor = 60 * time.Millisecond  // how long a click holds the button down
	PressGap = 100 * time.Millisecond // between the presses of a double click
)

// Presses returns how long each press of gesture kind ("click",
// "double" or "hold", held for hold) keeps the button down, and how many
// gestures the light then sees (a hold ends with a release).
func Presses(kind string, hold time.Duration) (downs []time.Duration, gestures int, err error) {
	switch kind {
	case "click":
		return []time.Duration{ClickFor}, 1, nil
	case "double":
		return []time.Duration{ClickFor, ClickFor}, 1, nil
	case "hold":
		return []time.Duration{hold}, 2, nil
	}
	return nil, 0, fmt.Errorf("press %q: say click, double or hold", kind)
}
