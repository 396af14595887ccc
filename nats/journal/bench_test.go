package journal_test

import (
	"bytes"
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

var payload200 = bytes.Repeat([]byte("x"), 200)

var syncModes = []string{broker.SyncAlways, broker.SyncBatch}

// BenchmarkAppendSync measures one acknowledged append of a 200-byte event:
// the latency a light pays per input or output.
func BenchmarkAppendSync(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			j := journal.New(startBroker(b, broker.Config{Sync: mode}).JetStream())
			ctx := context.Background()
			subj := subject.In("kitchen", "button")
			b.SetBytes(int64(len(payload200)))
			for b.Loop() {
				if _, err := j.Append(ctx, subj, payload200); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendAsync measures pipelined appends of 200-byte events, all
// acknowledged before the clock stops.
func BenchmarkAppendAsync(b *testing.B) {
	for _, mode := range syncModes {
		b.Run("sync="+mode, func(b *testing.B) {
			j := journal.New(startBroker(b, broker.Config{Sync: mode}).JetStream())
			subj := subject.In("kitchen", "data")
			b.SetBytes(int64(len(payload200)))
			n := 0
			for b.Loop() {
				if _, err := j.AppendAsync(subj, payload200); err != nil {
					b.Fatal(err)
				}
				n++
			}
			<-j.AsyncComplete()
			b.StopTimer()
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "msgs/s")
			if last, err := j.LastSeq(context.Background()); err != nil || last != uint64(n) {
				b.Fatalf("stored %d of %d (%v)", last, n, err)
			}
		})
	}
}

// BenchmarkReplay measures the replay hot path over 100k stored events of
// two lights: everything, and one light's inputs (a quarter of them).
func BenchmarkReplay(b *testing.B) {
	const stored = 100_000
	j := journal.New(startBroker(b, broker.Config{Sync: broker.SyncBatch}).JetStream())
	kinds := []string{
		subject.In("kitchen", "button"),
		subject.Out("kitchen", "state"),
		subject.In("hall", "button"),
		subject.Out("hall", "state"),
	}
	for i := range stored {
		if _, err := j.AppendAsync(kinds[i%len(kinds)], payload200); err != nil {
			b.Fatal(err)
		}
	}
	select {
	case <-j.AsyncComplete():
	case <-time.After(time.Minute):
		b.Fatal("prefill not acknowledged")
	}

	tests := []struct {
		name   string
		filter string
		want   int
	}{
		{name: "all", filter: "", want: stored},
		{name: "one-light-inputs", filter: subject.AllIn("kitchen"), want: stored / 4},
	}
	for _, tt := range tests {
		b.Run(tt.name, func(b *testing.B) {
			ctx := context.Background()
			b.SetBytes(int64(tt.want * len(payload200)))
			total := 0
			for b.Loop() {
				n := 0
				err := j.Replay(ctx, tt.filter, 0, 0, func(journal.Msg) error { n++; return nil })
				if err != nil || n != tt.want {
					b.Fatalf("replayed %d of %d: %v", n, tt.want, err)
				}
				total += n
			}
			b.ReportMetric(float64(total)/b.Elapsed().Seconds(), "msgs/s")
		})
	}
}

// BenchmarkCopiedResume measures a resume through a copy: one light's
// last 10 events, asked for by its origin's sequence, in a copy of
// 100,000 events of two lights (a page at a hub reconnecting to one
// light's stream). "whole copy" reads all of the light's events in the
// copy and keeps those, as a reader did before it searched (the
// baseline).
func BenchmarkCopiedResume(b *testing.B) {
	br := startBroker(b, broker.Config{Sync: broker.SyncBatch})
	own := journal.New(br.JetStream())
	const n = 100_000
	for i := range n {
		light := "kitchen"
		if i%2 == 1 {
			light = "porch"
		}
		if _, err := own.AppendAsync(subject.In(light, "fired"), payload200, journal.Header("Origin-Seq", strconv.Itoa(i/2+1))); err != nil {
			b.Fatal(err)
		}
	}
	<-own.AsyncComplete()
	copied := journal.New(br.JetStream(), journal.WithOrigin(func(_ string, h nats.Header) (uint64, bool) {
		seq, err := strconv.ParseUint(h.Get("Origin-Seq"), 10, 64)
		return seq, err == nil
	}))
	ctx := context.Background()
	from := uint64(n/2 - 9)
	for _, c := range []struct {
		name string
		from uint64 // 0: the whole copy, keeping those at or after from
	}{{"from its sequence", from}, {"whole copy", 0}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				got := 0
				err := copied.Replay(ctx, subject.Events("kitchen"), c.from, 0, func(m journal.Msg) error {
					if m.Seq >= from {
						got++
					}
					return nil
				})
				if err != nil || got != 10 {
					b.Fatalf("%d events (%v), want 10", got, err)
				}
			}
		})
	}
}
