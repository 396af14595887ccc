package source

import (
	"context"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// The manager's history follows only its current follower, starts over on
// a reset, and is not ready before the follower caught up.
func TestHistoryAdd(t *testing.T) {
	now := time.Date(2026, 6, 10, 12, 0, 0, 0, time.UTC)
	tr := func(via string) []datasource.Transition {
		return []datasource.Transition{{At: now, From: "off", To: "red", Via: via}}
	}
	var h history
	h.add(&histMsg{epoch: 0, entries: tr("ignored")}, now) // not following
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
		{histMsg{epoch: 1, reset: true}, 0, false},
		{histMsg{epoch: 1, caughtUp: true}, 0, true},
	}
	for i, s := range steps {
		h.add(&s.msg, now)
		if len(h.entries) != s.len || h.ready != s.ready {
			t.Fatalf("step %d: %d entries, ready %v; want %d, %v", i, len(h.entries), h.ready, s.len, s.ready)
		}
	}
	// A long history is pruned as it grows.
	for i := range 10000 {
		at := now.Add(time.Duration(i-10000) * time.Minute)
		h.add(&histMsg{epoch: 1, entries: []datasource.Transition{{At: at, From: "red", To: "red", Via: "x"}}}, now)
	}
	if len(h.entries) > 2*48*60+256 {
		t.Fatalf("%d entries kept; want about two days' worth", len(h.entries))
	}
	_, cancel := context.WithCancel(context.Background())
	h.cancel = cancel
	h.stop()
	if h.cancel != nil || h.entries != nil || h.ready {
		t.Fatal("stop keeps the history")
	}
}
