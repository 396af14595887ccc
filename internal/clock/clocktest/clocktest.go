// Package clocktest is a clock.Clock that moves only when a test says:
// Advance fires the timers that come due, in deadline order, so a test
// never sleeps to let time pass.
package clocktest

import (
	"sort"
	"sync"
	"time"

	"github.com/lumen-home/lumen/internal/clock"
)

// Clock is a fake clock. The zero value is not usable; call New.
type Clock struct {
	mu      sync.Mutex
	now     time.Time
	unsync  bool
	timers  []*timer
	armed   chan struct{} // signalled when a timer is armed
	ordinal int
}

var _ clock.Clock = (*Clock)(nil)

type timer struct {
	c    *Clock
	at   time.Time
	ord  int // arming order, to break ties
	f    func()
	done bool
}

// New returns a synchronized clock at start.
func New(start time.Time) *Clock {
	return &Clock{now: start, armed: make(chan struct{}, 1)}
}

// Now implements clock.Clock.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Synced implements clock.Clock: true unless SetSynced(false).
func (c *Clock) Synced() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.unsync
}

// SetSynced says whether the clock can be trusted.
func (c *Clock) SetSynced(ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.unsync = !ok
}

// AfterFunc implements clock.Clock. A timer armed with d <= 0 fires at
// once, in its own goroutine, as time.AfterFunc's does; the others fire
// in Advance.
func (c *Clock) AfterFunc(d time.Duration, f func()) clock.Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.ordinal++
	t := &timer{c: c, at: c.now.Add(d), ord: c.ordinal, f: f}
	if d <= 0 {
		t.done = true
		go f()
		return t
	}
	c.timers = append(c.timers, t)
	select {
	case c.armed <- struct{}{}:
	default:
	}
	return t
}

func (t *timer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	if t.done {
		return false
	}
	t.done = true
	return true
}

// Advance moves the clock by d and runs, in deadline order and in the
// caller's goroutine, every timer that comes due; each sees Now at its
// own deadline. Timers armed by those calls fire too when they are due
// by the end. A timer an actor arms only after Advance returned, with a
// deadline that has passed, fires at once (AfterFunc with d <= 0).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *timer
		live := c.timers[:0]
		for _, t := range c.timers {
			if t.done {
				continue
			}
			live = append(live, t)
			if !t.at.After(end) && (next == nil || t.at.Before(next.at) || t.at.Equal(next.at) && t.ord < next.ord) {
				next = t
			}
		}
		c.timers = live
		if next == nil {
			c.now = end
			c.mu.Unlock()
			return
		}
		next.done = true
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// Set moves the clock to t (forward: as Advance; backward: timers wait
// for their deadlines again).
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	d := t.Sub(c.now)
	if d < 0 {
		c.now = t
		c.mu.Unlock()
		return
	}
	c.mu.Unlock()
	c.Advance(d)
}

// Pending returns the deadlines of the timers not yet fired or stopped,
// earliest first.
func (c *Clock) Pending() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []time.Time
	for _, t := range c.timers {
		if !t.done {
			out = append(out, t.at)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Before(out[j]) })
	return out
}

// WaitArmed blocks until a timer is pending whose deadline is at or
// before at, or until timeout; it reports whether one is. Actors arm
// their timers on their own goroutine: a test waits for that before it
// advances the clock past the deadline.
func (c *Clock) WaitArmed(at time.Time, timeout time.Duration) bool {
	deadline := time.Now().Add(timeout)
	for {
		for _, p := range c.Pending() {
			if !p.After(at) {
				return true
			}
		}
		wait := time.Until(deadline)
		if wait <= 0 {
			return false
		}
		select {
		case <-c.armed:
		case <-time.After(min(wait, 10*time.Millisecond)):
		}
	}
}
