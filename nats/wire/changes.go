package wire

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
)

// Changes tells a cache of what a light said when it may be stale: it
// follows some of the light's output events on the client's connection,
// and Changed reports whether any came, or may have been lost, since the
// last call; Gen counts them.
//
// A light publishes an output before it answers the command that caused
// it, and a connection receives its messages in the order the server
// sends them, each queued for its subscription as it is read: when a
// request arrives on the same connection after that answer (whoever
// changed the light asks next), the output is already queued here. So a
// cache that calls Changed before it answers, and reads the light again
// when it says so, is never staler than the light's own answer. A request
// that comes another way (HTTP) calls Sync first.
type Changes struct {
	nc   *nats.Conn
	ch   chan *nats.Msg
	subs []*nats.Subscription
	stop chan struct{}

	mu         sync.Mutex
	gen        uint64 // events drained (or maybe lost) so far
	told       uint64 // gen at the last Changed
	dropped    int
	reconnects uint64
}

const (
	// changesBuffer is how many events wait to be drained; past it they
	// are dropped, which Changed reports as a change all the same. A
	// busy light's second of changes fits (nats.go says each overflow
	// on stderr, a "slow consumer" that alarms for nothing); the
	// channel costs 16 KB.
	changesBuffer = 2048
	// changesDrain is how often the events are drained between calls,
	// so that the buffer does not fill while nobody asks.
	changesDrain = time.Second
)

// Changes follows light's outputs of the given types (messages.Out*) on
// the client's connection. Stop it when done.
func (l Light) Changes(types ...string) (*Changes, error) {
	c := &Changes{nc: l.c.nc, ch: make(chan *nats.Msg, changesBuffer), stop: make(chan struct{}),
		reconnects: l.c.nc.Stats().Reconnects}
	for _, t := range types {
		s, err := l.c.nc.ChanSubscribe(subject.Out(l.name, t), c.ch)
		if err != nil {
			c.Stop()
			return nil, fmt.Errorf("wire: follow %s of %s: %w", t, l.name, err)
		}
		c.subs = append(c.subs, s)
	}
	go func() {
		t := time.NewTicker(changesDrain)
		defer t.Stop()
		for {
			select {
			case <-c.stop:
				return
			case <-t.C:
				c.mu.Lock()
				c.drain()
				c.mu.Unlock()
			}
		}
	}()
	return c, nil
}

// Changed reports whether one of the events came since the last call, or
// may have: some were dropped, a subscription is gone, or the connection
// was lost in between.
func (c *Changes) Changed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	changed := c.gen != c.told
	c.told = c.gen
	return changed
}

// Gen counts the events that came so far, and the times some may have
// been lost. A reader of the light that notes Gen before it asks has
// every change up to that count in the answer; a request that arrives
// on the client's connection when Gen is above it may follow a change
// the reader has not read.
func (c *Changes) Gen() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.drain()
	return c.gen
}

// Sync waits until the events the server sent before now are queued
// here (a round trip on the connection), for a request that came
// another way than the connection: Gen then counts every change the
// light answered before the request came.
func (c *Changes) Sync(ctx context.Context) error {
	if err := c.nc.FlushWithContext(ctx); err != nil {
		return fmt.Errorf("wire: sync with the light's changes: %w", err)
	}
	return nil
}

// drain takes the events queued so far and counts them; c.mu is held,
// so an event taken is always counted before a Changed or Gen can look.
func (c *Changes) drain() {
	for {
		select {
		case <-c.ch:
			c.gen++
			continue
		default:
		}
		break
	}
	dropped := 0
	for _, s := range c.subs {
		n, err := s.Dropped()
		if err != nil || !s.IsValid() {
			c.gen++
			return
		}
		dropped += n
	}
	if dropped != c.dropped {
		c.dropped = dropped
		c.gen++
	}
	if r := c.nc.Stats().Reconnects; r != c.reconnects || !c.nc.IsConnected() {
		c.reconnects = r
		c.gen++
	}
}

// Stop ends the subscriptions; Changed then always reports a change.
func (c *Changes) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-c.stop:
		return
	default:
		close(c.stop)
	}
	for _, s := range c.subs {
		_ = s.Unsubscribe()
	}
}
