package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/subject"
)

// The page and its API: what a browser downloads, and what event streams
// cost the daemon.

// BenchmarkPageWeight fetches the page and everything it loads: html-bytes
// is the server-rendered HTML, js-css-bytes its script and style (goal
// under 200 KB), total-bytes all three; ns/op is one load of all of it.
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
	b.ReportMetric(float64(html+assets), "total-bytes")
}

// BenchmarkPageFirstControl loads the page in headless Chromium, cache
// off (a first visit), and measures from the navigation's start to the
// first control usable: Power there and enabled, and the script's
// handlers on it (its "lumen-ready" mark). ms/op is the p50 over b.N
// loads, p99-ms the slowest but one in a hundred.
func BenchmarkPageFirstControl(b *testing.B) {
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--http", "127.0.0.1:0")
	page := d.Page(b)
	const usable = `(() => { const p = document.querySelector(".power"); const m = performance.getEntriesByName("lumen-ready")[0];
		return p && !p.disabled && document.body.dataset.ready === "1" && m ? m.startTime : 0 })()`
	timeLoads(b, page, ".power", usable, "the page's controls never became usable")
}

// timeLoads loads page b.N times (and once before, for Chromium's own
// start) in a fresh headless Chromium with its cache off, and reports
// when the expression at says it was ready, from the navigation's start:
// the p50 as ms/op, and p99-ms. at is a JavaScript expression giving a
// performance mark's startTime, 0 until then; sel the element waited for
// first (a poll begun before the page has its document would run in the
// page left behind); never says what did not happen.
func timeLoads(b *testing.B, page, sel, at, never string) {
	b.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(b)), chromedp.NoSandbox, chromedp.WindowSize(800, 1000))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		b.Fatal(err)
	}
	if _, err := chromedp.Call(ctx, network.SetCacheDisabled, network.SetCacheDisabledParams{CacheDisabled: true}); err != nil {
		b.Fatal(err)
	}
	load := func() time.Duration {
		c, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if err := chromedp.Do(c, chromedp.Navigate("about:blank"), chromedp.Navigate(page), chromedp.WaitReady(chromedp.CSS(sel))); err != nil {
			b.Fatal(err)
		}
		ms, err := chromedp.Run(c, chromedp.Poll[float64](at, chromedp.WithPollingInterval(10*time.Millisecond)))
		if err != nil {
			b.Fatalf("%s: %v", never, err)
		}
		return time.Duration(ms * float64(time.Millisecond))
	}
	load()
	var l latencies
	b.ResetTimer()
	for range b.N {
		l = append(l, load())
	}
	b.StopTimer()
	s := sorted(l)
	b.ReportMetric(float64(percentile(s, 50).Microseconds())/1e3, "ms/op")
	b.ReportMetric(float64(percentile(s, 99).Microseconds())/1e3, "p99-ms")
	b.ReportMetric(0, "ns/op")
}

// chromium finds the browser for the page's benchmarks: $LUMEN_CHROMIUM,
// or Debian's chromium (the Taskfile's debs task installs it).
func chromium(tb testing.TB) string {
	tb.Helper()
	for _, name := range []string{os.Getenv("LUMEN_CHROMIUM"), "chromium", "chromium-browser", "google-chrome"} {
		if name == "" {
			continue
		}
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	tb.Fatal("no Chromium: install Debian's chromium (the Taskfile's debs task does), or set LUMEN_CHROMIUM")
	return ""
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
