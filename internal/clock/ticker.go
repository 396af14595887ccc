package clock

import (
	"context"
	"sync"
	"time"
)

// Ticker sends the clock's time on C every period, as time.Ticker does:
// a reader that falls behind misses ticks rather than queueing them.
type Ticker struct {
	C <-chan time.Time

	c      Clock
	period time.Duration
	ch     chan time.Time

	mu      sync.Mutex
	next    Timer
	stopped bool
}

// NewTicker starts a ticker of c with period (> 0).
func NewTicker(c Clock, period time.Duration) *Ticker {
	ch := make(chan time.Time, 1)
	t := &Ticker{C: ch, c: c, period: period, ch: ch}
	t.mu.Lock()
	t.next = c.AfterFunc(period, t.tick)
	t.mu.Unlock()
	return t
}

func (t *Ticker) tick() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped {
		return
	}
	select {
	case t.ch <- t.c.Now():
	default:
	}
	t.next = t.c.AfterFunc(t.period, t.tick)
}

// Stop ends the ticks; C is not closed.
func (t *Ticker) Stop() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.stopped = true
	t.next.Stop()
}

// After is a channel that receives the clock's time once d has passed.
func After(c Clock, d time.Duration) <-chan time.Time {
	ch := make(chan time.Time, 1)
	c.AfterFunc(d, func() { ch <- c.Now() })
	return ch
}

// Sleep waits d on c, or until ctx ends (its error).
func Sleep(ctx context.Context, c Clock, d time.Duration) error {
	done := make(chan struct{})
	t := c.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}
