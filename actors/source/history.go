package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// The internal sources read the light's history: its state outputs in the
// journal, the same events replay and `lumen tail` show. The actor of each
// internal source follows them (journal.Follow, then live) into a
// datasource.History, which it keeps in the journal's records now and
// then: a start reads the journal only after the record, never the whole
// of it (which would load every block of a long journal into memory).

// HistoryKey is where the light's history, as the internal sources keep
// it, is recorded (one record per light: the sources of a light follow the
// same outputs).
func HistoryKey(light string) string { return "history." + light }

// historySaveEvery is how often an internal source records the history
// it follows: a start reads at most this much of the journal again.
const historySaveEvery = 30 * time.Second

// histMsg carries history to a source's actor: entries to add, after
// starting over from base when reset (the follower started over), and
// whether the follower has caught up with the journal.
type histMsg struct {
	epoch    int
	reset    bool
	base     datasource.History
	entries  []histEntry
	caughtUp bool
}

// histEntry is one state output and its journal sequence.
type histEntry struct {
	seq uint64
	t   datasource.Transition
}

// records is what the history needs of the journal.
type records interface {
	Record(ctx context.Context, key string) ([]byte, error)
	SaveRecord(ctx context.Context, key string, data []byte) error
	LastSeq(ctx context.Context) (uint64, error)
	Room() error
}

// loadHistory returns the light's recorded history, or an empty one (the
// journal is then read from its first event) when there is none or it is
// unusable.
func loadHistory(ctx context.Context, j records, light string, logf func(string, ...any)) datasource.History {
	var h datasource.History
	b, err := j.Record(ctx, HistoryKey(light))
	if errors.Is(err, journal.ErrNotFound) {
		return h // none yet, or a data dir of before
	}
	if err != nil {
		logf("source %s: read the recorded history: %v; reading the journal from its start", light, err)
		return h
	}
	if err := json.Unmarshal(b, &h); err != nil {
		logf("source %s: the recorded history is unreadable (%v); reading the journal from its start", light, err)
		return datasource.History{}
	}
	// A record ahead of the journal belongs to another journal.
	last, err := j.LastSeq(ctx)
	if err == nil && h.Seq > last {
		err = fmt.Errorf("the recorded history (at %d) is ahead of the journal (at %d)", h.Seq, last)
	}
	if err != nil {
		logf("source %s: %v; reading the journal from its start", light, err)
		return datasource.History{}
	}
	return h
}

// follow streams the light's state outputs to send until ctx ends, from
// the recorded history on, starting over (reset) after an error.
func follow(ctx context.Context, j *journal.Journal, light string, epoch int, send func(*histMsg), logf func(string, ...any)) {
	for first := true; ctx.Err() == nil; first = false {
		if !first {
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Second):
			}
		}
		base := loadHistory(ctx, j, light, logf)
		send(&histMsg{epoch: epoch, reset: true, base: base})
		from := uint64(0)
		if base.Seq > 0 {
			from = base.Seq + 1
		}
		err := j.Follow(ctx, subject.Out(light, messages.OutState), from, func(m journal.Msg) error {
			h := &histMsg{epoch: epoch}
			var env messages.Envelope
			var d messages.OutStateData
			if messages.DecodeEnvelope(m.Data, &env) == nil && json.Unmarshal(env.Data, &d) == nil {
				h.entries = []histEntry{{seq: m.Seq, t: datasource.TransitionOf(env.Time, d)}}
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
	epoch  int
	cancel context.CancelFunc // nil: not following
	h      datasource.History
	ready  bool // caught up once since the follower (re)started
	saver  *historySaver
}

// add applies one message of the current follower.
func (h *history) add(msg *histMsg) {
	if msg.epoch != h.epoch || h.cancel == nil {
		return // a stopped follower's late message
	}
	if msg.reset {
		h.h, h.ready = msg.base, false
	}
	for _, e := range msg.entries {
		h.h.Add(e.seq, e.t)
	}
	if msg.caughtUp {
		h.ready = true
	}
}

// stop ends the follower and forgets the history.
func (h *history) stop() {
	if h.cancel != nil {
		h.cancel()
	}
	h.cancel, h.h, h.ready = nil, datasource.History{}, false
}

// historySaver records a light's history off the actor's goroutine, one
// save at a time, at most every historySaveEvery, never one older than
// the last it saved.
type historySaver struct {
	j     records
	light string
	logf  func(string, ...any)

	mu     sync.Mutex // held while one is saved
	saved  uint64     // the Seq of the last one saved
	at     time.Time  // when a save was last started
	saving bool
}

// maybeSave starts saving h when it is newer than the last one saved and
// historySaveEvery has passed since the last save started.
func (s *historySaver) maybeSave(h *datasource.History, now time.Time) {
	s.mu.Lock()
	// On a full disk the journal reads on, and the record waits.
	if s.saving || h.Seq <= s.saved || now.Sub(s.at) < historySaveEvery || s.j.Room() != nil {
		s.mu.Unlock()
		return
	}
	b, err := json.Marshal(h)
	if err != nil {
		s.mu.Unlock()
		return
	}
	s.saving, s.at = true, now
	seq := h.Seq
	s.mu.Unlock()
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := s.j.SaveRecord(ctx, HistoryKey(s.light), b)
		s.mu.Lock()
		defer s.mu.Unlock()
		s.saving = false
		if err != nil {
			s.logf("source %s: record the history: %v", s.light, err)
			return
		}
		s.saved = max(s.saved, seq)
	}()
}
