package web

import (
	"context"
	"strings"
	"sync"

	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// tap is one follower of the journal shared by every event stream of
// the server: a consumer per stream would cost the NATS server each
// time (BenchmarkSSEClients). A stream joins it, reads from the journal
// what it missed up to where the tap stood, then takes the tap's events.
type tap struct {
	ctx  context.Context // ends with the server
	j    *journal.Journal
	logf func(string, ...any)

	mu   sync.Mutex
	on   bool
	last uint64 // the last sequence handed out, or where the tap began
	subs map[*tapSub]struct{}
}

// tapSub is one stream's share of the tap.
type tapSub struct {
	prefix string // of the subjects it takes; "" takes every event
	ch     chan journal.Msg
	gone   chan struct{} // closed when the tap drops it (too slow, or the tap failed)
}

// subBuffer is how far a stream may fall behind the tap before it is
// dropped; its client then comes back with Last-Event-ID, losing nothing.
const subBuffer = 4096

func newTap(ctx context.Context, j *journal.Journal, logf func(string, ...any)) *tap {
	return &tap{ctx: ctx, j: j, logf: logf, subs: map[*tapSub]struct{}{}}
}

// join adds a stream of the events under prefix and returns the
// sequence after which its channel has every event.
func (t *tap) join(ctx context.Context, prefix string) (*tapSub, uint64, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on {
		last, err := t.j.LastSeq(ctx)
		if err != nil {
			return nil, 0, err
		}
		t.on, t.last = true, last
		go t.follow(last + 1)
	}
	sub := &tapSub{prefix: prefix, ch: make(chan journal.Msg, subBuffer), gone: make(chan struct{})}
	t.subs[sub] = struct{}{}
	return sub, t.last, nil
}

// leave removes a stream.
func (t *tap) leave(sub *tapSub) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.subs[sub]; ok {
		delete(t.subs, sub)
		close(sub.gone)
	}
}

// follow hands every event from sequence from on to the streams, until
// the journal fails (the server's connection closes); the streams are
// then dropped, and the next one to join starts the tap again.
func (t *tap) follow(from uint64) {
	err := t.j.Follow(t.ctx, subject.AllEvents, from, func(m journal.Msg) error {
		t.mu.Lock()
		defer t.mu.Unlock()
		t.last = m.Seq
		for sub := range t.subs {
			if !strings.HasPrefix(m.Subject, sub.prefix) {
				continue
			}
			select {
			case sub.ch <- m:
			default:
				delete(t.subs, sub)
				close(sub.gone)
			}
		}
		return nil
	}, nil)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.ctx.Err() == nil {
		t.logf("http: the event streams' follower stopped: %v", err)
	}
	for sub := range t.subs {
		delete(t.subs, sub)
		close(sub.gone)
	}
	t.on = false
}
