package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/subject"
)

// The page and its API: what a browser downloads, and what event streams
// cost the daemon.

// BenchmarkPageWeight fetches the page and everything it loads: html-bytes
// is the server-rendered HTML, js-css-bytes its script and style (goal
// under 200 KB); ns/op is one load of all of it.
func BenchmarkPageWeight(b *testing.B) {
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--http", "127.0.0.1:0")
	page := d.Page(b)
	get := func(url string) int {
		res, err := http.Get(url)
		if err != nil {
			b.Fatal(err)
		}
		defer res.Body.Close()
		n, _ := io.Copy(io.Discard, res.Body)
		if res.StatusCode != 200 {
			b.Fatalf("GET %s: %d", url, res.StatusCode)
		}
		return int(n)
	}
	var html, assets int
	b.ResetTimer()
	for range b.N {
		html = get(page)
		assets = get(page+"static/page.js") + get(page+"static/page.css")
	}
	b.ReportMetric(float64(html), "html-bytes")
	b.ReportMetric(float64(assets), "js-css-bytes")
}

// sseClients is how many event streams BenchmarkSSEClients opens.
const sseClients = 50

// BenchmarkSSEClients fires 100 inputs a second for 3 s, first with no
// client of the page's API, then with 50 clients following the light's
// events over SSE, and compares: the daemon's CPU (cpu-ms/s, all of it),
// the delay from a fire to its state event at a NATS subscriber (p99),
// and with clients, the same delay at every SSE client (sse-p99-µs).
func BenchmarkSSEClients(b *testing.B) {
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", syncMode(), "--http", "127.0.0.1:0")
	page := d.Page(b)
	nc := connect(b, d.URL)
	applyBenchConfig(b, nc)
	var quiet, busy sseRun
	for range b.N {
		quiet = runSSELoad(b, d, nc, "", 0)
		busy = runSSELoad(b, d, nc, page+"api/v1/lights/"+benchLight+"/events", sseClients)
	}
	b.ReportMetric(quiet.cpu, "cpu-ms/s")
	b.ReportMetric(busy.cpu, "sse-cpu-ms/s")
	b.ReportMetric(busy.cpu/quiet.cpu, "cpu-ratio")
	quiet.nats.report(b, "")
	busy.nats.report(b, "busy-")
	busy.sse.report(b, "sse-")
	qs, bs := sorted(quiet.nats), sorted(busy.nats)
	b.ReportMetric(float64(percentile(bs, 99))/float64(percentile(qs, 99)), "p99-ratio")
}

type sseRun struct {
	cpu       float64 // the daemon's CPU, ms per second of the run
	nats, sse latencies
}

// runSSELoad fires 300 ticks at 100 a second with clients following url.
func runSSELoad(b *testing.B, d *daemon, nc *nats.Conn, url string, clients int) sseRun {
	b.Helper()
	const fires, every = 300, 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var mu sync.Mutex
	sseAt := map[uint64][]time.Time{}
	var ready sync.WaitGroup
	for range clients {
		ready.Add(1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
			res, err := http.DefaultClient.Do(req)
			ready.Done()
			if err != nil {
				return
			}
			defer res.Body.Close()
			sc := bufio.NewScanner(res.Body)
			sc.Buffer(nil, 1<<20)
			state := false
			for sc.Scan() {
				line := sc.Text()
				switch {
				case line == "event: out.state":
					state = true
				case state && strings.HasPrefix(line, "data: "):
					state = false
					var env struct{ Cause uint64 }
					if json.Unmarshal([]byte(line[6:]), &env) == nil {
						at := time.Now()
						mu.Lock()
						sseAt[env.Cause] = append(sseAt[env.Cause], at)
						mu.Unlock()
					}
				}
			}
		}()
	}
	ready.Wait()
	natsAt := map[uint64]time.Time{}
	sub, err := nc.Subscribe(subject.Out(benchLight, "state"), func(m *nats.Msg) {
		var env struct{ Cause uint64 }
		if json.Unmarshal(m.Data, &env) == nil {
			at := time.Now()
			mu.Lock()
			natsAt[env.Cause] = at
			mu.Unlock()
		}
	})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	sent := map[uint64]time.Time{}
	cpu0 := procCPU(b, d.Pid())
	start := time.Now()
	var wg sync.WaitGroup
	tick := time.NewTicker(every)
	for range fires {
		<-tick.C
		wg.Go(func() {
			t0 := time.Now()
			r, err := command(nc, "fire", tickRequest)
			if err != nil {
				b.Error(err)
				return
			}
			mu.Lock()
			sent[r.Seq] = t0
			mu.Unlock()
		})
	}
	tick.Stop()
	wg.Wait()
	// The last events reach everyone; one that never does is counted
	// below.
	lumentest.Within(10*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for seq := range sent {
			if _, ok := natsAt[seq]; !ok || len(sseAt[seq]) < clients {
				return false
			}
		}
		return true
	})
	elapsed := time.Since(start)
	cpu := procCPU(b, d.Pid()) - cpu0

	mu.Lock()
	defer mu.Unlock()
	out := sseRun{cpu: cpu * 1000 / elapsed.Seconds()}
	for seq, t0 := range sent {
		if at, ok := natsAt[seq]; ok {
			out.nats = append(out.nats, at.Sub(t0))
		}
		for _, at := range sseAt[seq] {
			out.sse = append(out.sse, at.Sub(t0))
		}
	}
	if len(out.nats) != fires {
		b.Fatalf("%d of %d state events reached the NATS subscriber", len(out.nats), fires)
	}
	if want := fires * clients; len(out.sse) != want {
		b.Fatalf("%d of %d state events reached the SSE clients", len(out.sse), want)
	}
	slices.Sort(out.nats)
	return out
}
