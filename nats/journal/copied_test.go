package journal_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// A light's events read through a copy from one of their origin's
// sequences: exactly those at or after it, in order, whatever the other
// lights and the events of a journal that does not own the light (a Pi
// that stored another's events) around them.
func TestCopiedFromAnOriginSequence(t *testing.T) {
	b := startBroker(t, broker.Config{})
	own := journal.New(b.JetStream())
	ctx := testCtx(t)
	kitchen := subject.Events("kitchen")
	type event struct {
		subj  string
		seq   uint64
		owner bool
	}
	var events []event
	for i := uint64(1); i <= 300; i++ {
		events = append(events, event{subject.In("kitchen", "fired"), 2 * i, true})
		if i%3 == 0 {
			events = append(events, event{subject.Out("porch", "state"), i, true})
		}
		if i%7 == 0 {
			// Another Pi's journal, with sequences ahead of the owner's.
			events = append(events, event{subject.In("kitchen", "fired"), 5000 + i, false})
		}
	}
	for _, e := range events {
		pi := "kitchenpi"
		if !e.owner {
			pi = "otherpi"
		}
		if _, err := own.Append(ctx, e.subj, []byte(`{}`), journal.Header("Origin-Seq", fmt.Sprint(e.seq)), journal.Header("Origin", pi)); err != nil {
			t.Fatal(err)
		}
	}
	// The copy: each event says its origin sequence in Origin-Seq and
	// its journal in Origin; kitchen's are taken from kitchenpi's only.
	copied := journal.New(b.JetStream(), journal.WithOrigin(func(_ string, h nats.Header) (uint64, bool) {
		seq, err := strconv.ParseUint(h.Get("Origin-Seq"), 10, 64)
		return seq, err == nil && h.Get("Origin") == "kitchenpi"
	}))
	for _, from := range []uint64{0, 1, 2, 3, 4, 5, 299, 300, 301, 598, 599, 600, 601, 5007, 100000} {
		var want []uint64
		for _, e := range events {
			if e.owner && e.subj == subject.In("kitchen", "fired") && e.seq >= from {
				want = append(want, e.seq)
			}
		}
		var replayed []uint64
		if err := copied.Replay(ctx, kitchen, from, 0, func(m journal.Msg) error {
			replayed = append(replayed, m.Seq)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(replayed, want) {
			t.Errorf("Replay from %d: %d events %v…, want %d from %v", from, len(replayed), head(replayed), len(want), head(want))
		}
		var followed []uint64
		fctx, stop := context.WithCancel(ctx)
		err := copied.Follow(fctx, kitchen, from, func(m journal.Msg) error {
			followed = append(followed, m.Seq)
			return nil
		}, stop)
		if err != context.Canceled {
			t.Fatalf("Follow from %d: %v", from, err)
		}
		if !slices.Equal(followed, want) {
			t.Errorf("Follow from %d: %d events %v…, want %d from %v", from, len(followed), head(followed), len(want), head(want))
		}
	}
}

func head(s []uint64) []uint64 { return s[:min(len(s), 3)] }
