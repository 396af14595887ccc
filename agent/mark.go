package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/nats/journal"
)

// The mark bounds what a start reads: a journal sequence S such that every
// agent event of the light up to S is in its session's saved snapshot, so
// restore replays from S+1 only. The journal is one stream for every
// light; a filtered read from its first event makes the server load all of
// it, whatever few events match.
//
// restore writes it once the sessions it folded are saved, and a running
// agent moves it on every MarkEvery while all its sessions are idle.

// DefaultMarkEvery is how often a running agent tries to move its mark on.
const DefaultMarkEvery = time.Minute

// markRoundTimeout bounds one attempt to move the mark on.
const markRoundTimeout = 30 * time.Second

// MarkKey is where a light's agent keeps its mark in the snapshot bucket:
// outside SnapshotKey's agent.<light>. so listing the sessions never
// meets it.
func MarkKey(light string) string { return "agentmark." + light }

// markRecord is the mark's record.
type markRecord struct {
	Seq *uint64 `json:"seq"`
}

func encodeMark(seq uint64) []byte {
	b, _ := json.Marshal(markRecord{Seq: &seq}) // a number always encodes
	return b
}

func decodeMark(b []byte) (uint64, error) {
	var r markRecord
	if err := json.Unmarshal(b, &r); err != nil {
		return 0, fmt.Errorf("agent: mark: %w", err)
	}
	if r.Seq == nil {
		return 0, errors.New(`agent: mark: no "seq"`)
	}
	return *r.Seq, nil
}

// readMark returns the light's mark, 0 (read everything) when there is
// none or it cannot be trusted: unreadable, or past the journal's last
// sequence (a journal that was started over).
func (m *Manager) readMark(ctx context.Context, last uint64) uint64 {
	b, err := m.cfg.Journal.Record(ctx, MarkKey(m.cfg.Light))
	if errors.Is(err, journal.ErrNotFound) {
		return 0
	}
	if err == nil {
		var seq uint64
		if seq, err = decodeMark(b); err == nil && seq > last {
			err = fmt.Errorf("agent: mark %d is past the journal's last event %d", seq, last)
		}
		if err == nil {
			return seq
		}
	}
	m.cfg.Logf("agent %s: read the sessions' events from the journal's start: %v", m.cfg.Light, err)
	return 0
}

// marker moves a running agent's mark on. It belongs to one incarnation
// of the manager: messages naming another one are stale.
type marker struct {
	every  time.Duration
	seq    uint64 // the mark saved last; never saved lower
	timer  *time.Timer
	ctx    context.Context // ends when the manager stops or restarts
	cancel context.CancelFunc
	wg     sync.WaitGroup // the round in flight
}

// Messages of the marker's rounds to the manager.
type (
	// markTick: time for a round.
	markTick struct{ mk *marker }
	// markList: the round read the journal's last sequence; the manager
	// asks every session it has now whether it is idle, and says how
	// many it asked on reply.
	markList struct {
		mk    *marker
		reply chan<- markAsked
	}
	markAsked struct {
		n    int
		idle <-chan bool
	}
	// markDone: the round ended, with the mark as it now stands.
	markDone struct {
		mk  *marker
		seq uint64
	}
)

// startMarks starts moving the mark on from seq.
func (m *Manager) startMarks(ctx actor.Context, seq uint64) {
	every := m.cfg.MarkEvery
	if every <= 0 {
		every = DefaultMarkEvery
	}
	mk := &marker{every: every, seq: seq}
	mk.ctx, mk.cancel = context.WithCancel(context.Background())
	m.marks = mk
	m.nextMark(ctx)
}

// nextMark schedules the next round.
func (m *Manager) nextMark(ctx actor.Context) {
	mk, self, root := m.marks, ctx.Self(), ctx.ActorSystem().Root
	// The wall clock, not the light's: the rounds pace the machine's
	// reading of the journal, which a clock a test or an eval case
	// holds still must not stop.
	mk.timer = time.AfterFunc(mk.every, func() { root.Send(self, &markTick{mk: mk}) })
}

// stopMarks stops the rounds and waits for the one in flight.
func (m *Manager) stopMarks() {
	mk := m.marks
	if mk == nil {
		return
	}
	m.marks = nil
	mk.timer.Stop()
	mk.cancel()
	mk.wg.Wait()
}

// receiveMark handles the marker's messages; false when msg is none.
func (m *Manager) receiveMark(ctx actor.Context, msg any) bool {
	switch msg := msg.(type) {
	case *markTick:
		if msg.mk == m.marks {
			m.markRound(ctx)
		}
	case *markList:
		if msg.mk != m.marks {
			return true // the round waits for its context, which has ended
		}
		idle := make(chan bool, len(m.sessions))
		for _, pid := range m.sessions {
			ctx.Send(pid, &idleReq{ch: idle})
		}
		msg.reply <- markAsked{n: len(m.sessions), idle: idle}
	case *markDone:
		if msg.mk == m.marks {
			m.marks.seq = max(m.marks.seq, msg.seq)
			m.nextMark(ctx)
		}
	default:
		return false
	}
	return true
}

// markRound moves the mark on, off the actor's goroutine, to the journal's
// last sequence if every session is idle once it is read: a session idle
// then has every step up to it in its saved snapshot, and a session
// started later journals only after it.
func (m *Manager) markRound(ctx actor.Context) {
	mk, self, root, cfg := m.marks, ctx.Self(), ctx.ActorSystem().Root, m.cfg
	seq := mk.seq
	mk.wg.Add(1)
	go func() {
		defer mk.wg.Done()
		defer func() {
			if cfg.markHook != nil {
				cfg.markHook(seq)
			}
			if mk.ctx.Err() == nil {
				root.Send(self, &markDone{mk: mk, seq: seq})
			}
		}()
		c, cancel := context.WithTimeout(mk.ctx, markRoundTimeout)
		defer cancel()
		last, err := cfg.Journal.LastSeq(c)
		// On a full disk the mark waits: the next start reads a little more.
		if err != nil || last <= seq || cfg.Journal.Room() != nil {
			return
		}
		reply := make(chan markAsked, 1)
		root.Send(self, &markList{mk: mk, reply: reply})
		var asked markAsked
		select {
		case asked = <-reply:
		case <-c.Done():
			return
		}
		for range asked.n {
			select {
			case idle := <-asked.idle:
				if !idle {
					return
				}
			case <-c.Done():
				return
			}
		}
		if err := cfg.Journal.SaveRecord(c, MarkKey(cfg.Light), encodeMark(last)); err != nil {
			if mk.ctx.Err() == nil {
				cfg.Logf("agent %s: save the sessions' mark: %v", cfg.Light, err)
			}
			return
		}
		seq = last
	}()
}
