package bench

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
)

// TestBenchHarness checks the harness itself: a daemon starts, takes the
// bench configuration, and a fire request and an input journaled straight
// into JetStream each produce the state event the benchmarks wait for.
func TestBenchHarness(t *testing.T) {
	d := startDaemon(t, t.TempDir(), "--light", benchLight, "--sync", "batch")
	nc := connect(t, d.URL)
	applyBenchConfig(t, nc)
	w := watchStates(t, d.URL, benchLight)

	r := mustCommand(t, nc, "fire", tickRequest)
	if r.State != "on" {
		t.Fatalf("fire tick: state %q, want on", r.State)
	}
	e, err := w.Next(r.Seq)
	if err != nil {
		t.Fatal(err)
	}
	if e.To != "on" {
		t.Fatalf("state event of input %d goes to %q, want on", r.Seq, e.To)
	}

	js := newJetStream(t, nc)
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	ack, err := js.Publish(ctx, subject.In(benchLight, "fired"), tickInput)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WaitCause(ctx, benchLight, ack.Sequence); err != nil {
		t.Fatal(err)
	}
	if n := counter(t, nc); n != 2 {
		t.Fatalf("n = %d after two ticks", n)
	}
}

// BenchmarkFireLatency measures one fire request until the state event it
// caused reaches a core NATS subscriber. Baseline:
// BenchmarkRawPublishLatency.
func BenchmarkFireLatency(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", mode)
			nc := connect(b, d.URL)
			applyBenchConfig(b, nc)
			w := watchStates(b, d.URL, benchLight)
			// fire returns the time until the state event arrived and
			// until the reply did.
			fire := func() (event, reply time.Duration) {
				t0 := time.Now()
				r := mustCommand(b, nc, "fire", tickRequest)
				reply = time.Since(t0)
				e, err := w.Next(r.Seq)
				if err != nil {
					b.Fatal(err)
				}
				return e.At.Sub(t0), reply
			}
			eventAndReply(b, fire, "reply-")
		})
	}
}

// BenchmarkInputLatency measures one input published by a client
// (lumen.<light>.evt.in.fired, acknowledged: since the daemon's own
// account holds the journal, through its ingress) until the state event
// it caused reaches a core NATS subscriber, and until the publish was
// acknowledged. Baseline: BenchmarkDaemonPublishLatency, and the same
// benchmark on the version before the ingress (LUMEN_BIN).
func BenchmarkInputLatency(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", mode)
			nc := connect(b, d.URL)
			applyBenchConfig(b, nc)
			w := watchStates(b, d.URL, benchLight)
			js := newJetStream(b, nc)
			ctx := context.Background()
			subj := subject.In(benchLight, "fired")
			publish := func() (event, ack time.Duration) {
				t0 := time.Now()
				a, err := js.Publish(ctx, subj, tickInput)
				if err != nil {
					b.Fatal(err)
				}
				ack = time.Since(t0)
				e, err := w.Next(a.Sequence)
				if err != nil {
					b.Fatal(err)
				}
				return e.At.Sub(t0), ack
			}
			eventAndReply(b, publish, "ack-")
		})
	}
}

// eventAndReply runs op 20 times to warm up (compile, caches, consumer),
// then b.N times, and reports the latencies it returns: until the event
// it caused, and until its reply (under prefix).
func eventAndReply(b *testing.B, op func() (event, reply time.Duration), prefix string) {
	twoLatencies(b, 20, op, "", prefix)
}

// twoLatencies runs op warm times, then b.N times, and reports the two
// latencies it returns, each under its prefix.
func twoLatencies(b *testing.B, warm int, op func() (time.Duration, time.Duration), prefix1, prefix2 string) {
	for range warm {
		op()
	}
	first := make(latencies, 0, b.N)
	second := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		a, c := op()
		first = append(first, a)
		second = append(second, c)
	}
	b.StopTimer()
	first.report(b, prefix1)
	second.report(b, prefix2)
}

// rawEnvelope is a journaled fire input of the usual size (an envelope with
// a nuid id and a timestamp), the baseline's payload.
var rawEnvelope = []byte(`{"v":1,"id":"Xq3mV8cR2bN7kLpT9wYz4e","type":"fired","light":"bench","time":"2026-11-22T02:22:57.123456789Z","data":{"transition":"tick"}}`)

// startRawBroker runs the embedded broker the daemon uses, with the same
// settings, and connects to it over TCP like the daemon's clients do.
func startRawBroker(b *testing.B, mode string) (*broker.Broker, *nats.Conn) {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), readyTimeout)
	defer cancel()
	br, err := broker.Start(ctx, broker.Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", Sync: mode})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(br.Shutdown)
	return br, connect(b, br.ClientURL())
}

// BenchmarkRawPublishLatency is the baseline of BenchmarkFireLatency: one
// acknowledged JetStream publish of a fire-input-sized message to the
// embedded broker in the same sync mode.
func BenchmarkRawPublishLatency(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			_, nc := startRawBroker(b, mode)
			js := newJetStream(b, nc)
			publishLatency(b, js, subject.In(benchLight, "fired"))
			b.ReportMetric(float64(len(rawEnvelope)), "msg-bytes")
		})
	}
}

// BenchmarkDaemonPublishLatency is the cross-process baseline of
// BenchmarkFireLatency: the same acknowledged JetStream publish as
// BenchmarkRawPublishLatency, but to the daemon's own embedded server (the
// daemon running, its light idle), so that it crosses processes as a
// fire does. BenchmarkRawPublishLatency's broker runs inside the
// benchmark process, where handing a message between the client's and
// the server's goroutines is far cheaper than waking another process: on
// a small VM that alone is several times the raw figure.
func BenchmarkDaemonPublishLatency(b *testing.B) {
	for _, mode := range syncModes {
		b.Run(mode, func(b *testing.B) {
			// The stream journals only the inputs of lights that run: the
			// publishes go to a second light of the daemon.
			d := startDaemon(b, b.TempDir(), "--light", benchLight, "--light", baselineLight, "--sync", mode)
			js := newJetStream(b, connect(b, d.URL))
			publishLatency(b, js, subject.In(baselineLight, "fired"))
		})
	}
}

// publishLatency reports the latency of b.N acknowledged publishes of a
// fire-input-sized message on subj, after 20 to warm up.
func publishLatency(b *testing.B, js jetstream.JetStream, subj string) {
	ctx := context.Background()
	publish := func() time.Duration {
		t0 := time.Now()
		if _, err := js.Publish(ctx, subj, rawEnvelope); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	for range 20 {
		publish()
	}
	lat := make(latencies, 0, b.N)
	b.ResetTimer()
	for range b.N {
		lat = append(lat, publish())
	}
	b.StopTimer()
	lat.report(b, "")
}

// BenchmarkInputThroughput journals b.N inputs straight into JetStream,
// pipelined (--sync batch), and stops when the output of the last one is
// journaled. Baseline: BenchmarkRawAsyncPublish.
func BenchmarkInputThroughput(b *testing.B) {
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", "batch")
	nc := connect(b, d.URL)
	applyBenchConfig(b, nc)
	w := watchStates(b, d.URL, benchLight)
	var errs asyncErrors
	js := newJetStream(b, nc, jetstream.WithPublishAsyncErrHandler(errs.handler))
	ctx := context.Background()
	subj := subject.In(benchLight, "fired")
	pctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()

	b.ResetTimer()
	last, err := publishInputs(pctx, js, subj, tickInput, b.N)
	if err != nil {
		b.Fatal(err)
	}
	published := b.Elapsed()
	if err := w.WaitCause(ctx, benchLight, last); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	errs.check(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
	// How fast the inputs themselves were stored, while the light was
	// already applying them: the publishing side of the same run.
	b.ReportMetric(float64(b.N)/published.Seconds(), "journaled-inputs/s")
	if n := counter(b, nc); n != int64(b.N) {
		b.Fatalf("n = %d after %d inputs", n, b.N)
	}
	// What a burst costs in memory: the peak, and what is still held a
	// few seconds after it.
	time.Sleep(3 * time.Second)
	if kb, err := lumentest.ProcStatusKB(d.Pid(), "VmRSS", "VmHWM"); err == nil {
		b.ReportMetric(float64(kb["VmHWM"])/1024, "peak-MB")
		b.ReportMetric(float64(kb["VmRSS"])/1024, "after-MB")
	}
}

// BenchmarkRawAsyncPublish is the baseline of BenchmarkInputThroughput:
// the same pipelined publishes to the embedded broker (sync batch), until
// all are acknowledged.
func BenchmarkRawAsyncPublish(b *testing.B) {
	_, nc := startRawBroker(b, "batch")
	var errs asyncErrors
	js := newJetStream(b, nc, jetstream.WithPublishAsyncErrHandler(errs.handler))
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	b.ResetTimer()
	if _, err := publishInputs(ctx, js, subject.In(benchLight, "fired"), tickInput, b.N); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	errs.check(b)
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}

// concurrentSenders is how many clients fire at once in
// BenchmarkFsyncedConcurrent.
const concurrentSenders = 16

// BenchmarkFsyncedConcurrent has 16 clients fire b.N requests in total at a
// --sync always daemon, then checks that the light counted every
// acknowledged fire exactly once.
func BenchmarkFsyncedConcurrent(b *testing.B) {
	d := startDaemon(b, b.TempDir(), "--light", benchLight, "--sync", "always")
	conns := make([]*nats.Conn, concurrentSenders)
	for i := range conns {
		conns[i] = connect(b, d.URL)
	}
	applyBenchConfig(b, conns[0])

	var (
		next, acked atomic.Int64
		errMu       sync.Mutex
		firstErr    error
		wg          sync.WaitGroup
		lats        = make([]latencies, concurrentSenders)
	)
	b.ResetTimer()
	for i, nc := range conns {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := command(nc, "fire", tickRequest); err != nil {
					errMu.Lock()
					if firstErr == nil {
						firstErr = err
					}
					errMu.Unlock()
					continue
				}
				lats[i] = append(lats[i], time.Since(t0))
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if firstErr != nil {
		b.Errorf("%d of %d fires failed, the first: %v", int64(b.N)-acked.Load(), b.N, firstErr)
	}
	b.ReportMetric(float64(acked.Load())/b.Elapsed().Seconds(), "inputs/s")
	slices.Concat(lats...).report(b, "reply-")
	if n := counter(b, conns[0]); n != acked.Load() {
		b.Fatalf("n = %d, but %d fires were acknowledged: updates lost or doubled", n, acked.Load())
	}
}

// BenchmarkRawFsyncedConcurrent is the baseline of
// BenchmarkFsyncedConcurrent: 16 clients make b.N acknowledged JetStream
// publishes in total to the embedded broker with sync always, each on its
// own connection. It bounds what any design that journals each input
// individually can reach on this disk.
func BenchmarkRawFsyncedConcurrent(b *testing.B) {
	br, _ := startRawBroker(b, "always")
	subj := subject.In(benchLight, "fired")
	streams := make([]jetstream.JetStream, concurrentSenders)
	for i := range streams {
		streams[i] = newJetStream(b, connect(b, br.ClientURL()))
	}
	var (
		next, acked atomic.Int64
		failed      atomic.Int64
		wg          sync.WaitGroup
		lats        = make([]latencies, concurrentSenders)
	)
	ctx := context.Background()
	b.ResetTimer()
	for i, js := range streams {
		wg.Go(func() {
			for next.Add(1) <= int64(b.N) {
				t0 := time.Now()
				if _, err := js.Publish(ctx, subj, rawEnvelope); err != nil {
					failed.Add(1)
					continue
				}
				lats[i] = append(lats[i], time.Since(t0))
				acked.Add(1)
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	if n := failed.Load(); n > 0 {
		b.Errorf("%d of %d publishes failed", n, b.N)
	}
	b.ReportMetric(float64(acked.Load())/b.Elapsed().Seconds(), "msgs/s")
	slices.Concat(lats...).report(b, "reply-")
}

// replayInputs is how many tick inputs the replay data set journals.
const replayInputs = 20_000

// replaySet is a stopped daemon's data directory holding replayInputs
// ticks of the bench light and their outputs, shared by every invocation
// of BenchmarkReplay.
type replaySet struct {
	dir  string
	last uint64 // last stream sequence
}

var (
	replayOnce sync.Once
	replayData *replaySet
)

func replayDataSet(b *testing.B) *replaySet {
	replayOnce.Do(func() {
		d, dir, last := tickedDaemon(b, "lumen-bench-replay-", replayInputs)
		if err := d.Stop(); err != nil {
			b.Fatal(err)
		}
		replayData = &replaySet{dir: dir, last: last}
	})
	if replayData == nil {
		b.Fatal("the replay data set could not be built (see the first failure)")
	}
	return replayData
}

// tickedDaemon starts a daemon on a fresh data directory (removed at the
// end of the run) whose bench light has applied n tick inputs, and
// returns it with its directory and the stream's last sequence.
func tickedDaemon(b *testing.B, prefix string, n int) (*daemon, string, uint64) {
	dir, err := os.MkdirTemp("", prefix)
	if err != nil {
		b.Fatal(err)
	}
	atExit(func() { _ = os.RemoveAll(dir) })
	d, err := launch(lumenBin(b), dir, "--light", benchLight, "--sync", "batch")
	if err != nil {
		b.Fatal(err)
	}
	atExit(d.Kill)
	nc, err := nats.Connect(d.URL)
	if err != nil {
		b.Fatal(err)
	}
	defer nc.Close()
	applyBenchConfig(b, nc)
	w := watchStates(b, d.URL, benchLight)
	var errs asyncErrors
	js := newJetStream(b, nc, jetstream.WithPublishAsyncErrHandler(errs.handler))
	ctx, cancel := context.WithTimeout(context.Background(), 3*drainTimeout)
	defer cancel()
	// In rounds, so that the publisher never runs far ahead of the light.
	for done := 0; done < n; done += 50_000 {
		last, err := publishInputs(ctx, js, subject.In(benchLight, "fired"), tickInput, min(50_000, n-done))
		if err != nil {
			b.Fatal(err)
		}
		errs.check(b)
		if err := w.WaitCause(ctx, benchLight, last); err != nil {
			b.Fatal(err)
		}
	}
	if got := counter(b, nc); got != int64(n) {
		b.Fatalf("n = %d after %d inputs", got, n)
	}
	str, err := js.Stream(ctx, subject.Stream)
	if err != nil {
		b.Fatal(err)
	}
	info, err := str.Info(ctx)
	if err != nil {
		b.Fatal(err)
	}
	return d, dir, info.State.LastSeq
}

// BenchmarkReplayOnline times `lumen replay --server URL --quiet` against
// a running daemon holding the data set of BenchmarkReplay: the CLI reads
// the journal as a client (batched direct gets through the clients'
// account, since issue 27). One op is one journaled input replayed.
// Compare with the same benchmark on the version before (LUMEN_BIN).
func BenchmarkReplayOnline(b *testing.B) {
	bin := lumenBin(b)
	set := replayDataSet(b)
	dir := b.TempDir()
	if err := os.CopyFS(dir, os.DirFS(set.dir)); err != nil {
		b.Fatal(err)
	}
	d := startDaemon(b, dir, "--light", benchLight, "--sync", "batch")
	b.ResetTimer()
	var inputs int
	for inputs < b.N {
		ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
		cmd := exec.CommandContext(ctx, bin, "--server", d.URL, "replay", "--light", benchLight, "--quiet")
		cmd.SysProcAttr = childAttr()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			b.Fatalf("lumen replay: %v\n%s", err, out)
		}
		m := replaySummary.FindSubmatch(out)
		if m == nil {
			b.Fatalf("lumen replay printed no summary:\n%s", out)
		}
		n, _ := strconv.Atoi(string(m[1]))
		if n < replayInputs {
			b.Fatalf("lumen replay applied %d inputs, want at least %d", n, replayInputs)
		}
		inputs += n
	}
	b.StopTimer()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(inputs), "ns/op")
}

var replaySummary = regexp.MustCompile(`(\d+) inputs applied, (\d+) outputs`)

// runReplay runs `lumen replay --quiet` on the stopped data directory and
// returns how many inputs and outputs it replayed.
func runReplay(b *testing.B, bin, dir string) (inputs, outputs int) {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "replay", "--data", dir, "--light", benchLight, "--quiet")
	cmd.Env = append(os.Environ(), "NATS_URL=")
	cmd.SysProcAttr = childAttr()
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("lumen replay: %v\n%s", err, out)
	}
	m := replaySummary.FindSubmatch(out)
	if m == nil {
		b.Fatalf("lumen replay printed no summary:\n%s", out)
	}
	inputs, _ = strconv.Atoi(string(m[1]))
	outputs, _ = strconv.Atoi(string(m[2]))
	return inputs, outputs
}

// rawReplay reads every event of the bench light, up to last, through an
// ordered consumer of the embedded broker opened on dir: the baseline of
// lumen replay. It returns how many it read, the time to read them, and
// the time including opening and closing the data directory.
func rawReplay(b *testing.B, dir string, last uint64) (n int, read, total time.Duration) {
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	t0 := time.Now()
	br, err := broker.Start(ctx, broker.Config{DataDir: dir, Listen: "127.0.0.1:0", Sync: "batch"})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Shutdown()
	t1 := time.Now()
	str, err := br.JetStream().Stream(ctx, subject.Stream)
	if err != nil {
		b.Fatal(err)
	}
	cons, err := str.OrderedConsumer(ctx, jetstream.OrderedConsumerConfig{
		FilterSubjects: []string{subject.Events(benchLight)},
		DeliverPolicy:  jetstream.DeliverAllPolicy,
	})
	if err != nil {
		b.Fatal(err)
	}
	iter, err := cons.Messages(jetstream.PullMaxMessages(2000))
	if err != nil {
		b.Fatal(err)
	}
	for {
		m, err := iter.Next(jetstream.NextContext(ctx))
		if err != nil {
			b.Fatalf("raw replay after %d events: %v", n, err)
		}
		md, err := m.Metadata()
		if err != nil {
			b.Fatal(err)
		}
		n++
		if md.Sequence.Stream >= last || md.NumPending == 0 {
			break
		}
	}
	iter.Stop()
	read = time.Since(t1)
	br.Shutdown()
	return n, read, time.Since(t0)
}

// BenchmarkReplay times `lumen replay --data DIR --quiet` (a whole
// process: open the stopped data directory, read the light's journal, fold
// it through the machine) over replayInputs journaled ticks, next to a raw
// ordered consumer reading the same events through the embedded broker.
// One op is one journaled input replayed (with its outputs): the journal is
// replayed as many times as b.N needs, at least once.
func BenchmarkReplay(b *testing.B) {
	bin := lumenBin(b)
	set := replayDataSet(b)
	b.ResetTimer()
	var inputs, msgs, reps int
	var lumenTime time.Duration
	for inputs < b.N {
		reps++
		t0 := time.Now()
		in, out := runReplay(b, bin, set.dir)
		lumenTime += time.Since(t0)
		inputs += in
		msgs += in + out
		if in < replayInputs {
			b.Fatalf("lumen replay applied %d inputs, want at least %d", in, replayInputs)
		}
	}
	b.StopTimer()

	var rawN int
	var rawRead, rawTotal time.Duration
	for range reps {
		n, read, total := rawReplay(b, set.dir, set.last)
		rawN += n
		rawRead += read
		rawTotal += total
	}
	if rawN != msgs {
		b.Errorf("lumen replay read %d events, the raw consumer %d", msgs, rawN)
	}
	b.ReportMetric(float64(lumenTime.Nanoseconds())/float64(inputs), "ns/op")
	b.ReportMetric(float64(msgs)/lumenTime.Seconds(), "msgs/s")
	b.ReportMetric(float64(rawN)/rawTotal.Seconds(), "raw-msgs/s")
	b.ReportMetric(float64(rawN)/rawRead.Seconds(), "raw-read-msgs/s")
}

// idleDaemons are the daemons of BenchmarkIdleRSS, by case, shared by
// every invocation of a case (the testing package calls it again with a
// larger b.N).
var (
	idleMu      sync.Mutex
	idleDaemons = map[string]*idleDaemon{}
)

type idleDaemon struct {
	d     *daemon
	since time.Time
	err   error
}

// idleWait is how long the daemon idles before its memory is read.
const idleWait = 3 * time.Second

// BenchmarkIdleRSS reads the resident memory of `lumen up` with its HTTP
// port on, after it has idled for 3 s: one light, ten lights, and one
// light on a first start (an empty plugin cache: the tool engine is
// compiled while it starts). One op is one read of /proc/<pid>/status;
// MB is MiB (VmRSS kB / 1024), the median of the reads; anon-MB and
// file-MB split it into the process's own memory and the pages of its
// binary; peak-MB is VmHWM.
func BenchmarkIdleRSS(b *testing.B) {
	bin := lumenBin(b)
	cases := []struct {
		name   string
		lights int
		fresh  bool
	}{{"one-light", 1, false}, {"ten-lights", 10, false}, {"first-start", 1, true}}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			idleMu.Lock()
			idle := idleDaemons[c.name]
			if idle == nil {
				idle = &idleDaemon{}
				idleDaemons[c.name] = idle
				idle.d, idle.err = launchIdle(bin, c.lights, c.fresh)
				idle.since = time.Now()
			}
			idleMu.Unlock()
			if idle.err != nil {
				b.Fatal(idle.err)
			}
			time.Sleep(time.Until(idle.since.Add(idleWait)))
			select {
			case <-idle.d.Exited():
				b.Fatalf("lumen up exited while idle:\n%s", idle.d.Logs())
			default:
			}
			var rss, anon, file []int64
			b.ResetTimer()
			for range b.N {
				kb, err := lumentest.ProcStatusKB(idle.d.Pid(), "VmRSS", "RssAnon", "RssFile")
				if err != nil {
					b.Fatal(err)
				}
				rss, anon, file = append(rss, kb["VmRSS"]), append(anon, kb["RssAnon"]), append(file, kb["RssFile"])
			}
			b.StopTimer()
			for unit, v := range map[string][]int64{"MB": rss, "anon-MB": anon, "file-MB": file} {
				slices.Sort(v)
				b.ReportMetric(float64(v[len(v)/2])/1024, unit)
			}
			if kb, err := lumentest.ProcStatusKB(idle.d.Pid(), "VmHWM"); err == nil {
				b.ReportMetric(float64(kb["VmHWM"])/1024, "peak-MB")
			}
		})
	}
}

// launchIdle starts `lumen up` with n lights and its HTTP port, in a
// data directory of its own; fresh gives it an empty plugin cache. It is
// stopped when the benchmarks end.
func launchIdle(bin string, n int, fresh bool) (*daemon, error) {
	dir, err := os.MkdirTemp("", "lumen-bench-idle-")
	if err != nil {
		return nil, err
	}
	atExit(func() { _ = os.RemoveAll(dir) })
	args := []string{"--http", "127.0.0.1:0"}
	for i := range n {
		args = append(args, "--light", fmt.Sprintf("light%d", i+1))
	}
	if fresh {
		cache := filepath.Join(dir, "plugin-cache")
		prev, had := os.LookupEnv("LUMEN_PLUGIN_CACHE")
		os.Setenv("LUMEN_PLUGIN_CACHE", cache)
		defer func() {
			if had {
				os.Setenv("LUMEN_PLUGIN_CACHE", prev)
			} else {
				os.Unsetenv("LUMEN_PLUGIN_CACHE")
			}
		}()
	}
	d, err := launch(bin, filepath.Join(dir, "data"), args...)
	if err != nil {
		return nil, err
	}
	atExit(func() { _ = d.Stop() })
	if fresh {
		// Idle begins once the tool engine is compiled.
		deadline := time.After(5 * time.Minute)
		for !strings.Contains(d.Logs(), "the tool engine is ready") {
			select {
			case <-d.Exited():
				return nil, fmt.Errorf("lumen up exited while compiling the tool engine:\n%s", d.Logs())
			case <-deadline:
				return nil, fmt.Errorf("the tool engine was not compiled after 5 minutes:\n%s", d.Logs())
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	return d, nil
}
