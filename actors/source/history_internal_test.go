package source

import (
	"context"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// The manager's history follows only its current follower, starts over
// from the follower's base on a reset, and is not ready before the
// follower caught up.
func TestHistoryAdd(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	seq := uint64(0)
	tr := func(via string) []histEntry {
		seq++
		return []histEntry{{seq: seq, t: datasource.Transition{At: now, From: "off", To: "red", Via: via}}}
	}
	var base datasource.History
	base.Add(7, datasource.Transition{At: now, From: "", To: "off"})
	var h history
	h.add(&histMsg{epoch: 0, entries: tr("ignored")}) // not following
	h.epoch, h.cancel = 1, func() {}
	steps := []struct {
		msg   histMsg
		len   int
		ready bool
	}{
		{histMsg{epoch: 1, reset: true}, 0, false},
		{histMsg{epoch: 1, entries: tr("a")}, 1, false},
		{histMsg{epoch: 0, entries: tr("stale"), caughtUp: true}, 1, false},
		{histMsg{epoch: 1, entries: tr("b"), caughtUp: true}, 2, true},
		{histMsg{epoch: 1, reset: true, base: base}, 1, false},
		{histMsg{epoch: 1, caughtUp: true}, 1, true},
	}
	for i, s := range steps {
		h.add(&s.msg)
		if len(h.h.Recent) != s.len || h.ready != s.ready {
			t.Fatalf("step %d: %d entries, ready %v; want %d, %v", i, len(h.h.Recent), h.ready, s.len, s.ready)
		}
	}
	if h.h.Seq != 7 {
		t.Fatalf("after a reset to a base at 7, seq %d", h.h.Seq)
	}
	_, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.stop()
	if h.cancel != nil || h.h.Seq != 0 || h.h.Recent != nil || h.ready {
		t.Fatal("stop keeps the history")
	}
}
