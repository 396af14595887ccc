package bench

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkJournalReplay100k: journal.Replay of 100,000 stored events of
// ~200 bytes, over TCP, by each path it takes: the daemon's (an ordered
// consumer, which only the daemon's own account may create: every
// reader's path until issue 27), a client's through the daemon's history
// service (history), and a client's where no one serves history
// (batched direct gets). x-consumer is a path's time over the consumer's,
// measured alternately in the same run (goal ≤ 1.2).
func BenchmarkJournalReplay100k(b *testing.B) { replayPaths(b, "") }

// BenchmarkJournalReplay100kFiltered is BenchmarkJournalReplay100k with
// a filter that matches one event in four (one light's inputs, of two
// lights).
func BenchmarkJournalReplay100kFiltered(b *testing.B) { replayPaths(b, subject.AllIn("kitchen")) }

func replayPaths(b *testing.B, filter string) {
	const stored = 100_000
	url := runReadAccounts(b)
	ctx := context.Background()
	daemonJS := newJetStream(b, connect(b, url, nats.UserInfo("daemon", "d")))
	clientJS := newJetStream(b, connect(b, url, nats.UserInfo("client", "c")))
	if err := broker.EnsureStreams(ctx, daemonJS, 0, nil); err != nil {
		b.Fatal(err)
	}
	w := journal.New(daemonJS)
	payload := bytes.Repeat([]byte("x"), 200)
	kinds := []string{subject.In("kitchen", "button"), subject.Out("kitchen", "state"),
		subject.In("hall", "button"), subject.Out("hall", "state")}
	events := 0
	for i := range stored {
		if _, err := w.AppendAsync(kinds[i%len(kinds)], payload); err != nil {
			b.Fatal(err)
		}
		if filter == "" || journal.Matches(filter, kinds[i%len(kinds)]) {
			events++
		}
	}
	select {
	case <-w.AsyncComplete():
	case <-time.After(drainTimeout):
		b.Fatal("prefill not acknowledged")
	}

	replayAs := func(js jetstream.JetStream) func(context.Context, func(journal.Msg) error) error {
		return func(ctx context.Context, fn func(journal.Msg) error) error {
			return journal.New(js).Replay(ctx, filter, 0, 0, fn)
		}
	}
	paths := []struct {
		name    string
		history bool // the daemon serves history meanwhile
		replay  func(ctx context.Context, fn func(journal.Msg) error) error
	}{
		{"consumer", false, replayAs(daemonJS)},
		{"directget", false, replayAs(clientJS)},
		{"history", true, replayAs(clientJS)},
	}
	for _, tc := range paths {
		b.Run(tc.name, func(b *testing.B) {
			if tc.history {
				h, err := journal.New(daemonJS).ServeHistory(daemonJS.Conn())
				if err != nil {
					b.Fatal(err)
				}
				defer h.Stop()
			}
			b.SetBytes(int64(events * len(payload)))
			replay := func(r func(context.Context, func(journal.Msg) error) error) time.Duration {
				n := 0
				start := time.Now()
				if err := r(ctx, func(journal.Msg) error { n++; return nil }); err != nil || n != events {
					b.Fatalf("replayed %d of %d: %v", n, events, err)
				}
				return time.Since(start)
			}
			// The consumer's time is measured before each of another
			// path's replays, so that the ratio compares runs under the
			// same load (the machine is shared).
			var own, base time.Duration
			for range b.N {
				if tc.name != "consumer" {
					b.StopTimer()
					base += replay(paths[0].replay)
					b.StartTimer()
				}
				own += replay(tc.replay)
			}
			b.ReportMetric(float64(b.N*events)/b.Elapsed().Seconds(), "events/s")
			if base > 0 {
				b.ReportMetric(float64(own)/float64(base), "x-consumer")
			}
		})
	}
}

// runReadAccounts runs a server whose LUMEN account holds the streams and
// whose CLIENTS account imports only LUMEN's read-only JetStream API and
// its history service (issue 27), and returns its URL.
func runReadAccounts(tb testing.TB) string {
	tb.Helper()
	var exports, imports []string
	for _, s := range []string{"$JS.API.INFO", "$JS.API.STREAM.INFO.LUMEN", "$JS.API.STREAM.MSG.GET.LUMEN",
		"$JS.API.DIRECT.GET.LUMEN", "$JS.API.DIRECT.GET.LUMEN.>", subject.AllHistory()} {
		how := ""
		if strings.HasPrefix(s, "$JS.API.DIRECT.GET.") {
			how = ", response_type: stream"
		}
		exports = append(exports, fmt.Sprintf("{service: %q%s}", s, how))
		imports = append(imports, fmt.Sprintf("{service: {account: LUMEN, subject: %q}}", s))
	}
	opts := &server.Options{}
	err := opts.ProcessConfigString(fmt.Sprintf(`accounts {
	LUMEN: { jetstream: enabled, users: [{user: daemon, password: d}], exports: [%s, {stream: %q}] }
	CLIENTS: { users: [{user: client, password: c}], imports: [%s, {stream: {account: LUMEN, subject: %q}}] }
}`, strings.Join(exports, ", "), subject.AllEvents, strings.Join(imports, ", "), subject.AllEvents))
	if err != nil {
		tb.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.JetStream, opts.StoreDir = true, tb.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s := runServer(tb, opts)
	tb.Cleanup(s.Shutdown)
	return s.ClientURL()
}
