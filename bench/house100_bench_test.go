package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
)

// A house of a hundred Pis on loopback: one `lumen hub` and a hundred
// `lumen up` processes of one light each, every one a leaf of the hub in
// an account of its own.

// housePis is the number of Pis of BenchmarkHouseHundred:
// $LUMEN_BENCH_PIS, else 100.
func housePis(tb testing.TB) int {
	if s := os.Getenv("LUMEN_BENCH_PIS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			tb.Fatalf("LUMEN_BENCH_PIS=%q: want a number of Pis", s)
		}
		return n
	}
	return 100
}

// catchUpInputs is how many inputs each Pi journals while its hub is
// away (each with its outputs: about 1,000 events).
const catchUpInputs = 400

// BenchmarkHouseHundred reports, for a house of a hundred Pis:
//
//   - join-s: from the first Pi's start to every light answering at the
//     hub (eight Pis start at a time on this machine's cores);
//   - fleet get and fire through the hub's fan-out, one request and every
//     light's reply (fleet-get-, fleet-fire-), next to the same hundred
//     requests sent at once to each light's own subject from the same
//     client (direct-get-, direct-fire-); get-ratio-p50/p99 and
//     fire-ratio-p50/p99 are fan-out over direct (goal ≤ 1.3);
//   - hub-MB: the hub's resident memory with every Pi joined (goal
//     ≤ 250), its binary a copy of its own, as on a machine of its own;
//   - pis-total-MB and pi-pss-MB: the hundred Pis' memory, their
//     proportional share (they share one binary on this machine), in all
//     and the median;
//   - pi-joined-MB and pi-alone-MB: one more Pi joined to the house and
//     the same daemon alone, each from a copy of the binary of its own,
//     once idle (goal ≤ 50 for a Pi joined);
//   - catch-up: each Pi journals about 1,000 events while the hub is
//     down; the hub comes back and the house stream copies them all
//     (house-events/s, from the first event stored to the last), next to
//     the same counts sourced by raw JetStream sources from a hundred
//     plain servers over plain leaf links (raw-events/s); ratio is house
//     over raw (goal ≥ 0.8).
func BenchmarkHouseHundred(b *testing.B) {
	n := housePis(b)
	hubData := b.TempDir()
	creds, lights := registerPis(b, hubData, n+1, 1) // the last: the idle Pi, apart
	bin := lumenBin(b)
	hubBin := privateCopy(b, bin)
	leaf := lumentest.FreeAddr(b)
	startHub := func() *daemon { return keep(b)(lumentest.LaunchHub(hubBin, hubData, "--leaf-listen", leaf)) }
	hub := startHub()

	t0 := time.Now()
	pis := make([]*daemon, n)
	var wg sync.WaitGroup
	slots := make(chan struct{}, 8)
	failed := make(chan error, n)
	for p := range n {
		dir := b.TempDir()
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			d, err := launch(bin, dir, "--light", lights[p][0], "--hub", "tls://"+leaf, "--creds", creds[p], "--sync", syncMode())
			if err != nil {
				failed <- err
				return
			}
			pis[p] = d
		})
	}
	wg.Wait()
	for _, d := range pis {
		if d != nil {
			b.Cleanup(func() { _ = d.Stop() })
		}
	}
	select {
	case err := <-failed:
		b.Fatal(err)
	default:
	}
	all := make([]string, n)
	for p := range n {
		all[p] = lights[p][0]
	}
	nc := connect(b, hub.URL)
	waitReachable(b, nc, all)
	join := time.Since(t0)
	for _, l := range all {
		if _, err := nc.Request(subject.Cmd(l, "apply"), []byte(benchConfig), requestTimeout); err != nil {
			b.Fatal(err)
		}
	}

	inbox := nc.NewRespInbox()
	replies, err := nc.SubscribeSync(inbox)
	if err != nil {
		b.Fatal(err)
	}
	// gather sends a request on each subject at once and waits for one
	// reply per light.
	gather := func(subjects []string, body []byte) time.Duration {
		t0 := time.Now()
		for _, s := range subjects {
			if err := nc.PublishRequest(s, inbox, body); err != nil {
				b.Fatal(err)
			}
		}
		for i := range n {
			m, err := replies.NextMsg(requestTimeout)
			if err != nil {
				b.Fatalf("%d of %d replies: %v", i, n, err)
			}
			if code := m.Header.Get("Nats-Service-Error-Code"); code != "" {
				b.Fatalf("a light refused: %s %s", code, m.Data)
			}
		}
		return time.Since(t0)
	}
	own := func(verb string) []string {
		out := make([]string, n)
		for i, l := range all {
			out[i] = subject.Cmd(l, verb)
		}
		return out
	}
	gets, fires := own("get"), own("fire")
	rounds := []struct {
		name string
		run  func() time.Duration
		l    latencies
	}{
		{"fleet-get-", func() time.Duration { return gather([]string{subject.FleetCmd("get")}, nil) }, nil},
		{"direct-get-", func() time.Duration { return gather(gets, nil) }, nil},
		{"fleet-fire-", func() time.Duration { return gather([]string{subject.FleetCmd("fire")}, tickRequest) }, nil},
		{"direct-fire-", func() time.Duration { return gather(fires, tickRequest) }, nil},
	}
	for range 5 { // warm up
		for _, r := range rounds {
			r.run()
		}
	}
	b.ResetTimer()
	for range b.N {
		for i := range rounds {
			rounds[i].l = append(rounds[i].l, rounds[i].run())
		}
	}
	b.StopTimer()
	for _, r := range rounds {
		r.l.report(b, r.name)
	}
	for i, what := range []string{"get-", "fire-"} {
		fan, direct := sorted(rounds[2*i].l), sorted(rounds[2*i+1].l)
		b.ReportMetric(float64(percentile(fan, 50))/float64(percentile(direct, 50)), what+"ratio-p50")
		b.ReportMetric(float64(percentile(fan, 99))/float64(percentile(direct, 99)), what+"ratio-p99")
	}
	b.ReportMetric(join.Seconds(), "join-s")

	// Memory, every Pi joined and idle again.
	time.Sleep(idleWait)
	if kb, err := lumentest.ProcStatusKB(hub.Pid(), "VmRSS"); err == nil {
		b.ReportMetric(float64(kb["VmRSS"])/1024, "hub-MB")
	}
	var pss []int64
	for _, d := range pis {
		kb, err := pssKB(d.Pid())
		if err != nil {
			b.Fatal(err)
		}
		pss = append(pss, kb)
	}
	slices.Sort(pss)
	var total int64
	for _, kb := range pss {
		total += kb
	}
	b.ReportMetric(float64(total)/1024, "pis-total-MB")
	b.ReportMetric(float64(pss[len(pss)/2])/1024, "pi-pss-MB")
	joined := keep(b)(launch(privateCopy(b, bin), b.TempDir(), "--light", lights[n][0], "--hub", "tls://"+leaf, "--creds", creds[n]))
	alone := keep(b)(launch(privateCopy(b, bin), b.TempDir(), "--light", lights[n][0]))
	lumentest.WaitFor(b, readyTimeout, "the idle Pi to join", func() bool { return strings.Contains(joined.Logs(), "joined the house") })
	time.Sleep(idleWait)
	for name, d := range map[string]*daemon{"pi-joined-MB": joined, "pi-alone-MB": alone} {
		if kb, err := lumentest.ProcStatusKB(d.Pid(), "VmRSS"); err == nil {
			b.ReportMetric(float64(kb["VmRSS"])/1024, name)
		}
		// Stopped: the idle Pi's own start, copied late, would count as
		// caught up below.
		if err := d.Stop(); err != nil {
			b.Fatal(err)
		}
	}

	// Catch-up: the hub away while every Pi journals.
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	hjs := newJetStream(b, nc)
	hs, err := hjs.Stream(ctx, house.Stream)
	if err != nil {
		b.Fatal(err)
	}
	// Every Pi's journal copied (no source lags) and still: what follows
	// is the catch-up alone. Stillness alone was not enough on a loaded
	// machine, whose copies pause for longer than its window.
	lumentest.WaitFor(b, drainTimeout, "the house to copy every Pi's journal", func() bool {
		info, err := hs.Info(ctx)
		if err != nil || len(info.Sources) < n {
			return false
		}
		for _, src := range info.Sources {
			if src.Lag > 0 {
				return false
			}
		}
		return true
	})
	waitStill(ctx, b, func() uint64 { return streamLast(ctx, hs) })
	houseBefore := streamLast(ctx, hs)
	nc.Close()
	if err := hub.Stop(); err != nil {
		b.Fatal(err)
	}
	added := make([]uint64, n)
	for p, d := range pis {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			added[p] = journalWhileAway(ctx, b, d.URL, all[p])
		})
	}
	wg.Wait()
	var want uint64
	for _, a := range added {
		want += a
	}
	hub = startHub()
	hjs = newJetStream(b, connect(b, hub.URL))
	ours := storedSince(ctx, b, hjs, house.Stream, houseBefore, want)
	raw := rawCatchUp(ctx, b, added)
	rate := func(d time.Duration) float64 { return float64(want) / d.Seconds() }
	b.ReportMetric(rate(ours), "house-events/s")
	b.ReportMetric(rate(raw), "raw-events/s")
	b.ReportMetric(rate(ours)/rate(raw), "ratio")
	b.ReportMetric(float64(want), "caught-up-events")
}

// keep stops a launched daemon when tb ends.
func keep(tb testing.TB) func(*daemon, error) *daemon {
	return func(d *daemon, err error) *daemon {
		tb.Helper()
		if err != nil {
			tb.Fatal(err)
		}
		tb.Cleanup(func() { _ = d.Stop() })
		return d
	}
}

// privateCopy copies the binary at bin: a process running it alone may
// give back the pages of its code it does not use (internal/memtrim),
// which pages another process maps keep resident.
func privateCopy(tb testing.TB, bin string) string {
	tb.Helper()
	in, err := os.Open(bin)
	if err != nil {
		tb.Fatal(err)
	}
	defer in.Close()
	path := filepath.Join(tb.TempDir(), "lumen")
	out, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		tb.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		tb.Fatal(err)
	}
	if err := out.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// pssKB is a process's proportional share of the memory it maps, in kB:
// pages shared with others counted in part.
func pssKB(pid int) (int64, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "Pss:"); ok {
			return strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
		}
	}
	return 0, fmt.Errorf("no Pss in /proc/%d/smaps_rollup", pid)
}

func streamLast(ctx context.Context, s jetstream.Stream) uint64 {
	info, err := s.Info(ctx)
	if err != nil {
		return 0
	}
	return info.State.LastSeq
}

// waitStill waits until last has not moved for half a second.
func waitStill(ctx context.Context, b *testing.B, last func() uint64) {
	b.Helper()
	prev, since := last(), time.Now()
	for time.Since(since) < 500*time.Millisecond {
		if ctx.Err() != nil {
			b.Fatal("a journal never stopped growing")
		}
		time.Sleep(50 * time.Millisecond)
		if l := last(); l != prev {
			prev, since = l, time.Now()
		}
	}
}

// journalWhileAway publishes catchUpInputs inputs to light at the Pi's
// server url, waits until the light has applied them, and returns how
// many events its journal gained.
func journalWhileAway(ctx context.Context, b *testing.B, url, light string) uint64 {
	pc := connect(b, url)
	defer pc.Close()
	s, err := newJetStream(b, pc).Stream(ctx, subject.Stream)
	if err != nil {
		b.Fatal(err)
	}
	before := streamLast(ctx, s)
	for range catchUpInputs {
		if err := pc.Publish(subject.In(light, "fired"), tickInput); err != nil {
			b.Fatal(err)
		}
	}
	if err := pc.Flush(); err != nil {
		b.Fatal(err)
	}
	waitStill(ctx, b, func() uint64 { return streamLast(ctx, s) })
	return streamLast(ctx, s) - before
}
