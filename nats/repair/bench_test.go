package repair_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkCheck is what lumen up's check of the journal costs: per
// event of 1 KB (SetBytes: the journal's size).
func BenchmarkCheck(b *testing.B) {
	dir := b.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	br, err := broker.Start(ctx, broker.Config{DataDir: dir, Listen: "127.0.0.1:0", Sync: broker.SyncBatch})
	if err != nil {
		b.Fatal(err)
	}
	j := journal.New(br.JetStream())
	body := []byte(`{"pad":"` + strings.Repeat("x", 1000) + `"}`)
	const n = 20000
	for range n {
		if _, err := j.AppendAsync(subject.In("demo", messages.InState), body); err != nil {
			b.Fatal(err)
		}
	}
	<-j.AsyncComplete()
	size, _, _ := j.Size(ctx)
	br.Shutdown()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for range b.N {
		if rep, err := repair.Check(dir); err != nil || rep.Damaged() {
			b.Fatal(rep, err)
		}
	}
}
