package bench

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

// The page's event log over a long journal: how soon its first screen
// shows, and what one page of the log endpoint costs.

// logEvents is how many events the light's journal holds.
const logEvents = 10_000

// logBenchDaemon starts a daemon whose journal holds logEvents events of
// the bench light or more (ticks journaled straight into JetStream, many
// in flight; each is an input, its state and its variable), and returns
// its page's address.
func logBenchDaemon(b *testing.B) string {
	b.Helper()
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", "batch", "--http", "127.0.0.1:0")
	nc := connect(b, d.URL)
	applyBenchConfig(b, nc)
	w := watchStates(b, d.URL, benchLight)
	var errs asyncErrors
	js := newJetStream(b, nc, jetstream.WithPublishAsyncErrHandler(errs.handler))
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	last, err := publishInputs(ctx, js, subject.In(benchLight, "fired"), tickInput, logEvents/3+100)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.WaitCause(ctx, benchLight, last); err != nil {
		b.Fatal(err)
	}
	errs.check(b)
	str, err := js.Stream(ctx, subject.Stream)
	if err != nil {
		b.Fatal(err)
	}
	for {
		info, err := str.Info(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if info.State.LastSeq >= logEvents {
			break
		}
		select {
		case <-ctx.Done():
			b.Fatalf("the journal has %d events, not %d", info.State.LastSeq, logEvents)
		case <-time.After(50 * time.Millisecond):
		}
	}
	return d.Page(b)
}

// BenchmarkLogFirstScreen loads the page in headless Chromium, cache off
// (a first visit), over a journal of 10,000 events, and measures from
// the navigation's start to the log's first page in the page (log.js's
// "lumen-log" mark). ms/op is the p50 over b.N loads (goal: 200 ms),
// p99-ms the slowest but one in a hundred.
func BenchmarkLogFirstScreen(b *testing.B) {
	page := logBenchDaemon(b)
	const shown = `(() => { const m = performance.getEntriesByName("lumen-log")[0];
		return m && document.querySelectorAll("#log > li").length >= 50 ? m.startTime : 0 })()`
	timeLoads(b, page, "#log", shown, "the log's first page never showed")
}

// BenchmarkLogEndpoint asks the log endpoint for the light's 50 newest
// entries out of 10,000 events: ms/op per request, over HTTP.
func BenchmarkLogEndpoint(b *testing.B) {
	page := logBenchDaemon(b)
	url := page + "api/v1/lights/" + benchLight + "/log"
	get := func() {
		res, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		var r struct {
			OK      bool              `json:"ok"`
			Entries []json.RawMessage `json:"entries"`
		}
		if err := json.NewDecoder(res.Body).Decode(&r); err != nil || !r.OK || len(r.Entries) != 50 {
			b.Fatalf("GET %s: %d, %v, %d entries", url, res.StatusCode, err, len(r.Entries))
		}
	}
	get()
	b.ResetTimer()
	for range b.N {
		get()
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1e3/float64(b.N), "ms/op")
	b.ReportMetric(0, "ns/op")
}
