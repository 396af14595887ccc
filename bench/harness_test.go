// Package bench measures the lumen daemon end to end (the built binary,
// over NATS) next to raw JetStream baselines measured in the same run, for
// the figures the foundation issue asks for. Run it with
//
//	go test -run '^$' -bench . -benchtime 2000x ./bench/
//
// The binary is $LUMEN_BIN, or built once for the run. Only
// TestBenchHarness runs without -bench.
package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/subject"
)

// benchLight is the light every benchmark but the idle one runs.
const benchLight = "bench"

// benchConfig is the light the benchmarks drive: every "tick" is a
// self-transition to "on" whose action counts it in the variable n, so a
// lost or doubled input shows in n.
const benchConfig = `{"states":[{"name":"on","r":255,"g":255,"b":255}],
	"rules":[{"from":"*","on":"tick","to":"on","action":"setData('n', (getData('n')||0)+1)"}]}`

// tickRequest is the body of a fire command, and tickInput the bare payload
// journaled straight into evt.in.fired.
var (
	tickRequest = []byte(`{"transition":"tick"}`)
	tickInput   = []byte(`{"transition":"tick"}`)
)

// Timeouts that keep a broken daemon from hanging a benchmark.
const (
	readyTimeout   = lumentest.ReadyTimeout
	requestTimeout = 30 * time.Second
	eventTimeout   = 30 * time.Second
	drainTimeout   = 5 * time.Minute
	// stallWait is how long an async publish waits for a free slot when
	// too many await their acknowledgement (back-pressure, not an error).
	stallWait = 5 * time.Second
)

// shared holds what several benchmark invocations reuse (the replay data
// set, the idle daemon); TestMain releases it.
var shared struct {
	mu      sync.Mutex
	cleanup []func()
}

func atExit(f func()) {
	shared.mu.Lock()
	defer shared.mu.Unlock()
	shared.cleanup = append(shared.cleanup, f)
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.mu.Lock()
	for i := len(shared.cleanup) - 1; i >= 0; i-- {
		shared.cleanup[i]()
	}
	shared.mu.Unlock()
	os.Exit(code)
}

// The binary and the daemons come from lumentest, shared with the
// end-to-end tests.
type daemon = lumentest.Daemon

func lumenBin(tb testing.TB) string { return lumentest.Bin(tb) }

func launch(bin, dir string, args ...string) (*daemon, error) {
	return lumentest.Launch(bin, dir, args...)
}

func startDaemon(tb testing.TB, dir string, args ...string) *daemon {
	tb.Helper()
	return lumentest.Start(tb, dir, args...)
}

func connect(tb testing.TB, url string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	return lumentest.Connect(tb, url, opts...)
}

func newJetStream(tb testing.TB, nc *nats.Conn, opts ...jetstream.JetStreamOpt) jetstream.JetStream {
	tb.Helper()
	js, err := jetstream.New(nc, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return js
}

// mutationReply is the part of a command reply the benchmarks read.
type mutationReply struct {
	OK    bool   `json:"ok"`
	Seq   uint64 `json:"seq"`
	State string `json:"state"`
	Code  int    `json:"code"`
	Error string `json:"error"`
}

// command sends one command to the bench light and decodes its reply.
func command(nc *nats.Conn, verb string, body []byte) (mutationReply, error) {
	var r mutationReply
	m, err := nc.Request(subject.Cmd(benchLight, verb), body, requestTimeout)
	if err != nil {
		return r, fmt.Errorf("%s: %w", verb, err)
	}
	if err := json.Unmarshal(m.Data, &r); err != nil {
		return r, fmt.Errorf("%s: reply is not JSON: %s", verb, m.Data)
	}
	if !r.OK {
		return r, fmt.Errorf("%s: %s", verb, m.Data)
	}
	return r, nil
}

func mustCommand(tb testing.TB, nc *nats.Conn, verb string, body []byte) mutationReply {
	tb.Helper()
	r, err := command(nc, verb, body)
	if err != nil {
		tb.Fatal(err)
	}
	return r
}

// applyBenchConfig gives the bench light its configuration.
func applyBenchConfig(tb testing.TB, nc *nats.Conn) {
	tb.Helper()
	mustCommand(tb, nc, "apply", []byte(benchConfig))
}

// counter reads the bench light's variable n (0 when unset).
func counter(tb testing.TB, nc *nats.Conn) int64 {
	tb.Helper()
	m, err := nc.Request(subject.Cmd(benchLight, "get"), []byte(`{}`), requestTimeout)
	if err != nil {
		tb.Fatalf("get: %v", err)
	}
	var g struct {
		OK   bool           `json:"ok"`
		Vars map[string]any `json:"vars"`
	}
	if err := json.Unmarshal(m.Data, &g); err != nil || !g.OK {
		tb.Fatalf("get: %s (%v)", m.Data, err)
	}
	switch n := g.Vars["n"].(type) {
	case nil:
		return 0
	case float64:
		return int64(n)
	default:
		tb.Fatalf("get: n is %T %v, want a number: %s", n, n, m.Data)
		return 0
	}
}

// stateEvent is one evt.out.state event as seen by a core subscriber.
type stateEvent struct {
	Cause uint64
	To    string
	At    time.Time // when the subscriber received it
}

// stateWatch follows a light's evt.out.state events on a core NATS
// subscription: each event is queued for Next (dropped if nobody reads
// them), and the highest cause seen is kept for WaitCause.
type stateWatch struct {
	ch     chan stateEvent
	max    atomic.Uint64
	notify chan struct{}
	errs   atomic.Int64
	str    jetstream.Stream
}

func watchStates(tb testing.TB, url, light string) *stateWatch {
	tb.Helper()
	nc := connect(tb, url)
	w := &stateWatch{ch: make(chan stateEvent, 1024), notify: make(chan struct{}, 1)}
	sub, err := nc.Subscribe(subject.Out(light, "state"), func(m *nats.Msg) {
		at := time.Now()
		var env struct {
			Cause uint64 `json:"cause"`
			Data  struct {
				To string `json:"to"`
			} `json:"data"`
		}
		if err := json.Unmarshal(m.Data, &env); err != nil {
			w.errs.Add(1)
			return
		}
		for {
			old := w.max.Load()
			if env.Cause <= old || w.max.CompareAndSwap(old, env.Cause) {
				break
			}
		}
		select {
		case w.notify <- struct{}{}:
		default:
		}
		select {
		case w.ch <- stateEvent{Cause: env.Cause, To: env.Data.To, At: at}:
		default:
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := sub.SetPendingLimits(-1, -1); err != nil {
		tb.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	js := newJetStream(tb, nc)
	if w.str, err = js.Stream(context.Background(), subject.Stream); err != nil {
		tb.Fatal(err)
	}
	return w
}

// Next returns the state event caused by input seq, skipping older ones.
func (w *stateWatch) Next(seq uint64) (stateEvent, error) {
	deadline := time.NewTimer(eventTimeout)
	defer deadline.Stop()
	for {
		select {
		case e := <-w.ch:
			if e.Cause == seq {
				return e, nil
			}
			if e.Cause > seq {
				return e, fmt.Errorf("state event of input %d missed: next one is caused by %d", seq, e.Cause)
			}
		case <-deadline.C:
			return stateEvent{}, fmt.Errorf("no state event caused by input %d within %v", seq, eventTimeout)
		}
	}
}

// WaitCause waits until the state event of input seq is journaled: seen by
// the subscriber, or (should the subscriber miss it) read back from the
// stream, which it also confirms.
func (w *stateWatch) WaitCause(ctx context.Context, light string, seq uint64) error {
	ctx, cancel := context.WithTimeout(ctx, drainTimeout)
	defer cancel()
	poll := time.NewTicker(100 * time.Millisecond)
	defer poll.Stop()
	for {
		if w.max.Load() >= seq {
			if last, err := w.journaled(ctx, light); err == nil && last >= seq {
				return nil
			}
		}
		select {
		case <-w.notify:
		case <-poll.C:
			if last, err := w.journaled(ctx, light); err == nil && last >= seq {
				return nil
			}
		case <-ctx.Done():
			return fmt.Errorf("state event of input %d not journaled within %v (highest seen: %d)", seq, drainTimeout, w.max.Load())
		}
	}
}

// journaled is the cause of the light's last stored state event.
func (w *stateWatch) journaled(ctx context.Context, light string) (uint64, error) {
	m, err := w.str.GetLastMsgForSubject(ctx, subject.Out(light, "state"))
	if err != nil {
		return 0, err
	}
	var env struct {
		Cause uint64 `json:"cause"`
	}
	if err := json.Unmarshal(m.Data, &env); err != nil {
		return 0, err
	}
	return env.Cause, nil
}

// publishInputs journals n tick inputs straight into JetStream, pipelined,
// and returns the stream sequence of the last one once all are stored.
func publishInputs(ctx context.Context, js jetstream.JetStream, subj string, payload []byte, n int) (uint64, error) {
	var last jetstream.PubAckFuture
	for range n {
		f, err := js.PublishAsync(subj, payload, jetstream.WithStallWait(stallWait))
		if err != nil {
			return 0, err
		}
		last = f
	}
	if last == nil {
		return 0, errors.New("nothing published")
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		return 0, fmt.Errorf("async publishes not acknowledged: %w", ctx.Err())
	}
	select {
	case ack := <-last.Ok():
		return ack.Sequence, nil
	case err := <-last.Err():
		return 0, err
	}
}

// asyncErrors counts failed async publishes.
type asyncErrors struct {
	n     atomic.Int64
	first atomic.Value
}

func (e *asyncErrors) handler(_ jetstream.JetStream, _ *nats.Msg, err error) {
	if e.n.Add(1) == 1 {
		e.first.Store(err)
	}
}

func (e *asyncErrors) check(tb testing.TB) {
	tb.Helper()
	if n := e.n.Load(); n > 0 {
		tb.Fatalf("%d async publishes failed, the first: %v", n, e.first.Load())
	}
}

// latencies collects per-operation durations.
type latencies []time.Duration

// report adds the p50 and p99 in microseconds, as prefix+"p50-µs" and
// prefix+"p99-µs".
func (l latencies) report(b *testing.B, prefix string) {
	if len(l) == 0 {
		return
	}
	s := slices.Clone(l)
	slices.Sort(s)
	b.ReportMetric(float64(percentile(s, 50).Nanoseconds())/1e3, prefix+"p50-µs")
	b.ReportMetric(float64(percentile(s, 99).Nanoseconds())/1e3, prefix+"p99-µs")
}

// p50 is the median.
func (l latencies) p50() time.Duration {
	if len(l) == 0 {
		return 0
	}
	s := slices.Clone(l)
	slices.Sort(s)
	return percentile(s, 50)
}

// percentile of sorted durations, nearest rank.
func percentile(sorted []time.Duration, p int) time.Duration {
	i := (len(sorted)*p + 99) / 100
	if i < 1 {
		i = 1
	}
	return sorted[i-1]
}

// syncModes are the daemon's --sync values, each compared with a raw
// broker running the same mode.
var syncModes = []string{"always", "batch"}

func sorted(l latencies) []time.Duration {
	s := slices.Clone(l)
	slices.Sort(s)
	return s
}
