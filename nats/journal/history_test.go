package journal_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// TestHistoryService: a client of the broker's clients' account replays
// through the daemon's history service exactly what the daemon reads
// itself: every range and filter, events with headers, batches past the
// size of one message; a replay the client stops ends its session.
func TestHistoryService(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := lumentest.StartBus(t, broker.Config{})
	own := b.Journal
	// 3,000 events of two lights, about 1 KB each: several batches.
	pad := strings.Repeat("x", 1000)
	for i := range 3000 {
		light := []string{"a", "b"}[i%2]
		m := nats.NewMsg(subject.In(light, "fired"))
		m.Data = fmt.Appendf(nil, `{"i":%d,"pad":%q}`, i, pad)
		if i%7 == 0 {
			m.Header.Set("Lumen-Test", fmt.Sprint(i))
		}
		if _, err := b.JetStream().PublishMsg(ctx, m); err != nil {
			t.Fatal(err)
		}
	}
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	djs, _ := jetstream.New(nc)
	srv, err := journal.New(djs).ServeHistory(nc)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()

	c, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	cjs, _ := jetstream.New(c)
	client := journal.New(cjs)

	read := func(j *journal.Journal, filter string, from, to uint64) ([]journal.Msg, error) {
		var got []journal.Msg
		err := j.Replay(ctx, filter, from, to, func(m journal.Msg) error {
			got = append(got, m)
			return nil
		})
		return got, err
	}
	for _, tc := range []struct {
		filter   string
		from, to uint64
	}{
		{"", 0, 0}, {"", 1, 1}, {"", 1500, 2600}, {subject.Events("a"), 0, 0},
		{subject.Events("b"), 2990, 0}, {subject.Events("b"), 10, 9}, {subject.Events("c"), 0, 0},
	} {
		want, err := read(own, tc.filter, tc.from, tc.to)
		if err != nil {
			t.Fatal(err)
		}
		got, err := read(client, tc.filter, tc.from, tc.to)
		if err != nil {
			t.Fatalf("%q %d..%d as a client: %v", tc.filter, tc.from, tc.to, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%q %d..%d: the client read %d events, the daemon %d", tc.filter, tc.from, tc.to, len(got), len(want))
		}
		for i := range got {
			g, w := got[i], want[i]
			if g.Seq != w.Seq || g.Subject != w.Subject || string(g.Data) != string(w.Data) || !g.Time.Equal(w.Time) || g.Header.Get("Lumen-Test") != w.Header.Get("Lumen-Test") {
				t.Fatalf("%q %d..%d: event %d is %+v as a client, %+v as the daemon", tc.filter, tc.from, tc.to, i, g, w)
			}
		}
	}

	// A replay stopped halfway ends its session: the next one runs.
	stop := errors.New("enough")
	n := 0
	if err := client.Replay(ctx, "", 0, 0, func(journal.Msg) error {
		if n++; n == 700 {
			return stop
		}
		return nil
	}); !errors.Is(err, stop) {
		t.Fatalf("a replay stopped by its callback: %v", err)
	}
	if got, err := read(client, "", 0, 0); err != nil || len(got) != 3000 {
		t.Fatalf("after a stopped replay: %d events, %v", len(got), err)
	}

	// An unknown session is refused in a sentence.
	r, err := c.Request(subject.History(subject.Stream), []byte(`{"op":"next","id":"nope"}`), 5*time.Second)
	if err != nil || r.Header.Get("Lumen-History") != "error" || !strings.Contains(string(r.Data), "no history session") {
		t.Fatalf("next of an unknown session: %v, %v", r, err)
	}
}
