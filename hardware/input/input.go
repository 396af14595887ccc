// Package input debounces the raw levels of GPIO input pins (a PIR motion
// sensor, a reed switch, a doorbell contact) into clean edges.
//
// It is pure and clock-driven: a Debouncer does no I/O, starts no
// goroutines and never reads the clock. Time comes only from the levels'
// timestamps and from Tick, so the caller owns one timer (armed at
// Deadline) and tests replay timelines exactly. It is the one debouncer:
// hardware/gesture wraps it for the button, as periph's gesture and
// debounce wrappers compose.
package input

import (
	"fmt"
	"time"
)

// Edge kinds: which level changes a watcher wants.
const (
	Rising  = "rising"  // low → high
	Falling = "falling" // high → low
	Both    = "both"
)

// DefaultDebounce suits a mechanical contact; a PIR sensor's output does
// not bounce, and debounce 0 passes every change through at once.
const DefaultDebounce = 20 * time.Millisecond

// MaxDebounce bounds the window: longer than this is no longer debouncing
// but a hold-off, which rules and timers express better.
const MaxDebounce = 10 * time.Second

// Change is one debounced level change of a pin.
type Change struct {
	High bool      // the new level
	At   time.Time // when it was accepted
}

// Kind is the edge the change makes: Rising or Falling.
func (c Change) Kind() string {
	if c.High {
		return Rising
	}
	return Falling
}

// Matches reports whether a watcher of edge (Rising, Falling or Both; ""
// is Rising) wants c.
func (c Change) Matches(edge string) bool {
	switch edge {
	case Both:
		return true
	case Falling:
		return !c.High
	default:
		return c.High
	}
}

// ValidEdge reports whether edge names an edge kind ("" is Rising).
func ValidEdge(edge string) bool {
	return edge == "" || edge == Rising || edge == Falling || edge == Both
}

// Debouncer turns one pin's raw levels into changes with a leading-edge
// debounce: the first change after a quiet window is accepted at once (a
// motion sensor reacts without delay), further raw changes inside the
// window are bounces, and when the window ends the level is reconciled, so
// a pin that settles on a new level inside the window still reports it.
// It is not safe for concurrent use.
type Debouncer struct {
	window time.Duration
	raw    bool      // latest raw level
	level  bool      // debounced level
	quiet  time.Time // end of the window opened by the last accepted change
	last   time.Time // latest instant seen; time never goes back
}

// New returns a debouncer for a pin whose level is now high (the baseline:
// it reports no change for it) with a window of debounce.
func New(debounce time.Duration, high bool) (*Debouncer, error) {
	if debounce < 0 || debounce > MaxDebounce {
		return nil, fmt.Errorf("input: debounce %v is outside 0–%v", debounce, MaxDebounce)
	}
	return &Debouncer{window: debounce, raw: high, level: high}, nil
}

// Level is the debounced level.
func (d *Debouncer) Level() bool { return d.level }

// Reset forgets all state but the window, as if the pin had just been
// connected at level high: a wrapper that restarts drops what it had seen.
func (d *Debouncer) Reset(high bool) {
	*d = Debouncer{window: d.window, raw: high, level: high}
}

// Sample feeds the raw level read at at (a poll or an injected edge) and
// returns the changes it decides, in time order (at most two: one that
// became due at the end of the window, then the one at at).
func (d *Debouncer) Sample(high bool, at time.Time) []Change {
	var out []Change
	if c, ok := d.Settle(at); ok {
		out = append(out, c)
	}
	if c, ok := d.Set(high, at); ok {
		out = append(out, c)
	}
	return out
}

// Tick tells the debouncer that time reached now with no new level, and
// returns the change that became due, if any. Early or repeated calls are
// harmless.
func (d *Debouncer) Tick(now time.Time) []Change {
	if c, ok := d.Settle(now); ok {
		return []Change{c}
	}
	return nil
}

// Settle is Tick without the slice, for a wrapper with timers of its own
// (hardware/gesture): the change that became due by now, if any.
func (d *Debouncer) Settle(now time.Time) (Change, bool) {
	if !d.due(d.clamp(now)) {
		return Change{}, false
	}
	// Accepted at the window's end, when it became knowable, not at now:
	// a late Tick must not shift the change's time.
	return d.accept(d.quiet), true
}

// Set is the rest of Sample, for such a wrapper, which settles the pin in
// time order with its own decisions: it feeds the raw level read at at to
// a debouncer with nothing due by at (Settle(at) reported nothing more, or
// Deadline is after at) and returns the change at at, if any. It panics if
// a change is due, which would come out of order.
func (d *Debouncer) Set(high bool, at time.Time) (Change, bool) {
	now := d.clamp(at)
	if d.due(now) {
		panic("input: Set with a change due at " + d.quiet.String() + "; call Settle first")
	}
	if high == d.raw {
		return Change{}, false
	}
	d.raw = high
	if now.Before(d.quiet) {
		return Change{}, false // a bounce; reconciled when the window ends
	}
	return d.accept(now), true
}

// Deadline is when Tick could next decide a change: the end of the window
// while the raw level differs from the debounced one.
func (d *Debouncer) Deadline() (time.Time, bool) {
	if d.raw == d.level {
		return time.Time{}, false
	}
	return d.quiet, true
}

// due reports whether a window that closed by now left the raw level
// different from the debounced one.
func (d *Debouncer) due(now time.Time) bool {
	return d.raw != d.level && !now.Before(d.quiet)
}

func (d *Debouncer) accept(at time.Time) Change {
	d.level = d.raw
	d.quiet = at.Add(d.window)
	return Change{High: d.level, At: at}
}

func (d *Debouncer) clamp(t time.Time) time.Time {
	if t.Before(d.last) {
		return d.last
	}
	d.last = t
	return t
}
