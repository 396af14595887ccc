package source

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/service"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// rig is one light "k" with its service, its tool manager (the built-in
// get_time needs no Wasmtime) and, once started, its source manager. The
// light and the manager share a fake clock: time passes only when the
// test ticks it, so a loaded machine cannot move a run.
type rig struct {
	t     *testing.T
	sys   *actor.ActorSystem
	nc    *nats.Conn
	j     *journal.Journal
	clock *clocktest.Clock
	tool  *actor.PID
	mgr   *actor.PID

	mu   sync.Mutex
	runs []time.Time // data inputs, as the light received them

	meter meter
}

// meter records what the sources count.
type meter struct {
	mu       sync.Mutex
	runs     map[string]int // by source, failed ones as "name!"
	restarts map[string]int // by role
}

func (m *meter) SourceRun(source string, failed bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if failed {
		source += "!"
	}
	m.runs[source]++
}

func (m *meter) Restarted(role string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.restarts[role]++
}

func (m *meter) counts() (runs, restarts map[string]int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return maps.Clone(m.runs), maps.Clone(m.restarts)
}

func newRig(t *testing.T) *rig {
	t.Helper()
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	nc := b.Conn(t)
	r := &rig{t: t, sys: actor.NewActorSystem(), nc: nc, j: b.Journal, clock: clocktest.New(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)),
		meter: meter{runs: map[string]int{}, restarts: map[string]int{}}}
	lp, err := light.Props(light.Config{Name: "k", Journal: r.j, Clock: r.clock, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	lpid, err := r.sys.Root.SpawnNamed(lp, "light-k")
	if err != nil {
		t.Fatal(err)
	}
	if err := light.WaitApplied(ctx, r.sys.Root, lpid, r.j, "k"); err != nil {
		t.Fatal(err)
	}
	svc, err := service.Serve(nc, r.sys.Root, lpid, "k", nil, 10*time.Second, service.WithSourceMinInterval(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	tp, err := tool.Props(tool.Config{Light: "k", Conn: nc, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	r.tool = r.sys.Root.Spawn(tp)
	if _, err := nc.Subscribe("lumen.k.evt.in.data", func(m *nats.Msg) {
		var env messages.Envelope
		if messages.DecodeEnvelope(m.Data, &env) == nil {
			r.mu.Lock()
			r.runs = append(r.runs, env.Time)
			r.mu.Unlock()
		}
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.sys.Root.StopFuture(lpid).Wait() })
	return r
}

// start spawns the source manager.
func (r *rig) start() {
	r.t.Helper()
	p, err := Props(Config{Light: "k", Tools: r.tool, Conn: r.nc, Journal: r.j, Tick: tickEvery, Clock: r.clock, Meter: &r.meter, Logf: r.t.Logf})
	if err != nil {
		r.t.Fatal(err)
	}
	if r.mgr, err = r.sys.Root.SpawnNamed(p, "sources-k"); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) stop() {
	_ = r.sys.Root.StopFuture(r.mgr).Wait()
}

func (r *rig) request(verb, body string) map[string]any {
	r.t.Helper()
	m, err := r.nc.Request("lumen.k.cmd."+verb, []byte(body), 10*time.Second)
	if err != nil {
		r.t.Fatal(err)
	}
	var out map[string]any
	if err := json.Unmarshal(m.Data, &out); err != nil || out["ok"] != true {
		r.t.Fatalf("%s %s: %s", verb, body, m.Data)
	}
	return out
}

func (r *rig) runCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.runs)
}

func (r *rig) runTimes() []time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]time.Time(nil), r.runs...)
}

// tickEvery is how often the manager checks the schedules.
const tickEvery = 20 * time.Millisecond

// tick moves the clock by one check of the schedules, once the manager
// waits for it; a run the check starts is given a moment to reach the
// light before time moves on, so that it is stamped with this instant.
func (r *rig) tick() {
	r.t.Helper()
	if !r.clock.WaitArmed(r.clock.Now().Add(tickEvery), 10*time.Second) {
		r.t.Fatal("the source manager does not check its schedules")
	}
	n := r.runCount()
	r.clock.Advance(tickEvery)
	lumentest.Within(20*time.Millisecond, func() bool { return r.runCount() != n })
}

// tickUntil ticks until the clock reaches at.
func (r *rig) tickUntil(at time.Time) {
	r.t.Helper()
	for r.clock.Now().Before(at) {
		r.tick()
	}
}

// waitRuns ticks until n runs are journaled, or fails after within of
// the source's time.
func (r *rig) waitRuns(n int, within time.Duration) {
	r.t.Helper()
	end := r.clock.Now().Add(within)
	for r.runCount() < n {
		if r.clock.Now().After(end) {
			r.t.Fatalf("%d runs after %v, want %d", r.runCount(), within, n)
		}
		r.tick()
	}
}

// gaps checks that no two runs came closer than the earliest slot
// (90% of the interval): nothing ran twice for one slot.
func (r *rig) gaps(interval time.Duration) {
	r.t.Helper()
	runs := r.runTimes()
	for i := 1; i < len(runs); i++ {
		if d := runs[i].Sub(runs[i-1]); d < interval*9/10 {
			r.t.Fatalf("runs %d and %d only %v apart (interval %v): a slot ran twice", i, i+1, d, interval)
		}
	}
}

const clockSource = `{"name":"clock","interval_ms":%d,"fetch":{"tool":"get_time","args":{"tz":"UTC"}},"store":{"t":"result.unix_ms"},"fires":"tick"}`

// A source's actor that crashes is restarted by the manager, the restart
// is journaled, and the source carries on from its last run: no slot runs
// twice.
func TestSourceActorRestart(t *testing.T) {
	r := newRig(t)
	restarts := make(chan *nats.Msg, 4)
	if _, err := r.nc.ChanSubscribe("lumen.k.evt.out.restart", restarts); err != nil {
		t.Fatal(err)
	}
	r.start()
	defer r.stop()
	const iv = 300 * time.Millisecond
	r.request("create_source", fmt.Sprintf(clockSource, iv.Milliseconds()))
	r.waitRuns(2, 5*time.Second)

	// A nil webhook request makes the source's actor panic.
	r.sys.Root.Send(actor.NewPID(r.sys.Address(), "sources-k/source-clock"), (*Hook)(nil))
	select {
	case m := <-restarts:
		var env messages.Envelope
		var d messages.OutRestartData
		if err := messages.DecodeEnvelope(m.Data, &env); err != nil || json.Unmarshal(env.Data, &d) != nil ||
			d.Actor != "sources-k/source-clock" || d.Restarts != 1 || env.Cause != 0 {
			t.Fatalf("restart event %s", m.Data)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no restart event for the crashed source")
	}
	n := r.runCount()
	r.waitRuns(n+2, 5*time.Second)
	r.gaps(iv)
	if vars, _ := r.request("get", "{}")["vars"].(map[string]any); vars["t"] == nil {
		t.Fatalf("no value stored: %v", vars)
	}
	// The daemon's metrics count the restart and the runs.
	runs, restarted := r.meter.counts()
	if restarted["source"] != 1 || runs["clock"] < n || runs["clock!"] != 0 {
		t.Errorf("counted restarts %v and runs %v; want one restart of a source, at least %d runs, none failed", restarted, runs, n)
	}
}

// A new manager (a restart of the daemon) resumes each source from its
// last run as the light recorded it: not before its next slot, and at
// once when that slot passed while it was down.
func TestSourceResumesFromLastRun(t *testing.T) {
	r := newRig(t)
	r.start()
	const iv = time.Second
	r.request("create_source", fmt.Sprintf(clockSource, iv.Milliseconds()))
	r.waitRuns(1, 5*time.Second)
	first := r.runTimes()[0]
	// The input is seen once journaled; the light applies it a moment
	// later.
	lumentest.WaitFor(t, 5*time.Second, fmt.Sprintf("list_sources's last run of clock at %v", first), func() bool {
		runs, _ := r.request("list_sources", "{}")["last_runs"].(map[string]any)
		at, _ := time.Parse(time.RFC3339Nano, fmt.Sprint(runs["clock"]))
		return at.Equal(first)
	})

	// Restarted inside the interval: nothing until the slot.
	r.stop()
	r.start()
	r.tickUntil(first.Add(iv * 8 / 10))
	if n := r.runCount(); n != 1 {
		t.Fatalf("%d runs before the slot: the restart ran it again", n)
	}
	r.waitRuns(2, 3*time.Second)

	// Down past a slot: it runs at once.
	r.stop()
	last := r.runTimes()[1]
	r.clock.Set(last.Add(iv * 12 / 10))
	started := r.clock.Now()
	r.start()
	defer r.stop()
	r.waitRuns(3, 3*time.Second)
	if d := r.runTimes()[2].Sub(started); d > 5*tickEvery {
		t.Fatalf("the missed slot ran %v after the start; want at once", d)
	}
	r.gaps(iv)
}

// Deleting a source stops its actor; a run of a deleted source is refused
// by the light and changes nothing.
func TestDeletedSourceStops(t *testing.T) {
	r := newRig(t)
	r.start()
	defer r.stop()
	r.request("create_source", fmt.Sprintf(clockSource, 100))
	r.waitRuns(2, 5*time.Second)
	r.request("delete_source", `{"name":"clock"}`)
	// The manager stops the source's actor once it has read the change.
	child := actor.NewPID(r.sys.Address(), "sources-k/source-clock")
	lumentest.WaitFor(t, 10*time.Second, "the deleted source's actor to stop", func() bool {
		_, alive := r.sys.ProcessRegistry.GetLocal(child.Id)
		return !alive
	})
	n := r.runCount()
	r.tickUntil(r.clock.Now().Add(400 * time.Millisecond))
	if got := r.runCount(); got != n {
		t.Fatalf("%d runs after the delete", got-n)
	}
	m, err := r.nc.Request("lumen.k.cmd.data", []byte(`{"source":"clock","vars":{"t":1}}`), 5*time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"code":404`) {
		t.Fatalf("a run of the deleted source: %s, %v", m.Data, err)
	}
}

// A pin's change that reaches the manager right after the configuration
// change that created its source, before the manager has read it, waits
// for the definitions. The test plays the fastest device: it hears the
// light's configuration change on the manager's connection, as the
// hardware actor does, and publishes the new pin's edge at once, as a PIR
// that sees someone the moment it is set up.
func TestGPIOEdgeAfterItsSourceIsCreated(t *testing.T) {
	r := newRig(t)
	changes, err := wire.New(r.nc).Light("k").Changes(messages.OutConfig, messages.OutIntent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(changes.Stop)
	var (
		mu  sync.Mutex
		pin int // the pin of the source being created; 0: none
	)
	sub, err := r.nc.Subscribe("lumen.k.evt.out.config", func(*nats.Msg) {
		mu.Lock()
		p := pin
		pin = 0
		mu.Unlock()
		if p != 0 {
			edge, _ := json.Marshal(messages.GPIOEvent{Pin: p, Level: 1, Edge: "rising", At: r.clock.Now()})
			_ = r.nc.Publish(subject.GPIO("k", p), edge)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	p, err := Props(Config{Light: "k", Tools: r.tool, Conn: r.nc, Changes: changes, Journal: r.j, Tick: tickEvery, Clock: r.clock, Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	if r.mgr, err = r.sys.Root.SpawnNamed(p, "sources-k"); err != nil {
		t.Fatal(err)
	}
	defer r.stop()
	// The manager follows the pins from its start, which Spawn does not
	// wait for: an answer from it says it has started.
	if _, err := r.sys.Root.RequestFuture(r.mgr, &Hook{Source: "none"}, 10*time.Second).Result(); err != nil {
		t.Fatal(err)
	}
	const rounds = 20
	for i := range rounds {
		mu.Lock()
		pin = 5 + i
		mu.Unlock()
		r.request("create_source", fmt.Sprintf(`{"name":"pir%d","type":"gpio","pin":%d,"fires":"motion"}`, i, 5+i))
		lumentest.WaitFor(t, 10*time.Second, fmt.Sprintf("source pir%d to take its first edge", i), func() bool { return r.runCount() == i+1 })
	}
}
