package source

import (
	"context"
	"encoding/json"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// The internal sources read the light's history: its state outputs in the
// journal, the same events replay and `lumen tail` show. The actor of each
// internal source follows them (journal.Follow: from the first, then
// live), and keeps what datasource.Prune says the sources can still need.

// histMsg carries history to a source's actor: entries to append, after
// forgetting what it had when reset (the follower started over), and
// whether the follower has caught up with the journal.
type histMsg struct {
	epoch    int
	reset    bool
	entries  []datasource.Transition
	caughtUp bool
}

// follow streams the light's state outputs to send until ctx ends,
// starting over (reset) after an error.
func follow(ctx context.Context, j *journal.Journal, light string, epoch int, send func(*histMsg), logf func(string, ...any)) {
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		send(&histMsg{epoch: epoch, reset: true})
		err := j.Follow(ctx, subject.Out(light, messages.OutState), 0, func(m journal.Msg) error {
			h := &histMsg{epoch: epoch}
			var env messages.Envelope
			var d messages.OutStateData
			if messages.DecodeEnvelope(m.Data, &env) == nil && json.Unmarshal(env.Data, &d) == nil {
				h.entries = []datasource.Transition{datasource.TransitionOf(env.Time, d)}
			}
			send(h)
			return nil
		}, func() { send(&histMsg{epoch: epoch, caughtUp: true}) })
		if err != nil && ctx.Err() == nil {
			logf("source %s: follow the light's history: %v; starting over", light, err)
		}
	}
}

// history is what an internal source's actor knows of the light's
// history.
type history struct {
	epoch   int
	cancel  context.CancelFunc // nil: not following
	entries []datasource.Transition
	ready   bool // caught up once since the follower (re)started
	pruneAt int
}

// add applies one message of the current follower.
func (h *history) add(msg *histMsg, now time.Time) {
	if msg.epoch != h.epoch || h.cancel == nil {
		return // a stopped follower's late message
	}
	if msg.reset {
		h.entries, h.ready = nil, false
	}
	h.entries = append(h.entries, msg.entries...)
	if msg.caughtUp {
		h.ready = true
	}
	// Prune in amortized constant time: when the history doubled.
	if len(h.entries) >= max(h.pruneAt, 256) {
		h.entries = datasource.Prune(h.entries, now, datasource.HistoryKeep)
		h.pruneAt = 2 * len(h.entries)
	}
}

// stop ends the follower and forgets the history.
func (h *history) stop() {
	if h.cancel != nil {
		h.cancel()
	}
	h.cancel, h.entries, h.ready, h.pruneAt = nil, nil, false, 0
}
