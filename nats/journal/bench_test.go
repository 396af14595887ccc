package journal_test

import (
	"bytes"
	"context"
	"testing"
	"time"

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
