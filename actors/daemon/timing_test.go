package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
)

// The daemon's timers on a clock the test moves: deadlines, intervals and
// slots that pass while the daemon is up or down, without sleeping.

// timedRig is the demo light on a fake clock in a data directory that
// outlives a daemon: restart stops it and starts another on the same
// directory and clock, after the clock moved as the test says.
type timedRig struct {
	t      *testing.T
	clock  *clocktest.Clock
	dir    string
	change func(*daemon.Config)
	d      *daemon.Daemon
	nc     *nats.Conn
}

func newTimedRig(t *testing.T, change func(*daemon.Config)) *timedRig {
	t.Helper()
	r := &timedRig{t: t, clock: clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)), dir: t.TempDir(), change: change}
	r.start()
	return r
}

func (r *timedRig) start() {
	r.t.Helper()
	r.d = startWith(r.t, func(c *daemon.Config) {
		c.Data, c.Clock = r.dir, r.clock
		if r.change != nil {
			r.change(c)
		}
	}, "demo")
	r.nc = connectTo(r.t, r.d)
}

// restart stops the daemon, lets down pass on the clock while it is
// down, and starts it again.
func (r *timedRig) restart(down time.Duration) {
	r.t.Helper()
	r.nc.Close()
	if err := r.d.Close(); err != nil {
		r.t.Fatal(err)
	}
	r.clock.Advance(down)
	r.start()
}

// ok sends body to verb and returns the reply's body, failing the test on
// an error reply.
func (r *timedRig) ok(verb, body string) map[string]any {
	r.t.Helper()
	return mustOK(r.t, r.nc, verb, body)
}

// step moves the clock a second at a time (the source manager's tick)
// until ok holds, giving the daemon a moment after each step; a slow
// daemon costs more steps, never a wrong answer, since what the tests
// assert is the clock's time of what ran.
func (r *timedRig) step(what string, ok func() bool) {
	r.t.Helper()
	for range 120 {
		if lumentest.Within(500*time.Millisecond, ok) {
			return
		}
		r.clock.Advance(time.Second)
	}
	r.t.Fatalf("%s: not in two minutes of the clock", what)
}

// lastRun is when the light says source last ran (its latest data input,
// on the daemon's clock).
func (r *timedRig) lastRun(source string) time.Time {
	r.t.Helper()
	runs, _ := r.ok(messages.VerbListSources, `{}`)["last_runs"].(map[string]any)
	at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(runs[source]))
	if err != nil {
		r.t.Fatalf("list_sources: last_runs %v: %v", runs, err)
	}
	return at
}

// lastEvent is the data of the journal's last event on subj (within its
// envelope).
func (r *timedRig) lastEvent(subj string) string {
	r.t.Helper()
	js, err := jetstream.New(r.nc)
	if err != nil {
		r.t.Fatal(err)
	}
	m, err := journal.New(js).LastMsg(context.Background(), subj)
	if err != nil {
		r.t.Fatalf("the last event on %s: %v", subj, err)
	}
	var env messages.Envelope
	if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
		r.t.Fatalf("the last event on %s: %v: %s", subj, err, m.Data)
	}
	return string(env.Data)
}

// verify replays the light's journal, failing on an output that differs
// from the one recorded.
func (r *timedRig) verify() {
	r.t.Helper()
	verifyReplay(r.t, r.nc, "demo")
}

// verifyReplay replays light's journal, failing on an output that differs
// from the one recorded: what lumen replay --verify does.
func verifyReplay(t *testing.T, nc *nats.Conn, light string) {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (past.Replay{Light: light, Verify: true}).Run(context.Background(), journal.New(js)); err != nil {
		t.Fatalf("replay --verify of %s: %v", light, err)
	}
}

// A layer for two seconds outlives the daemon: its deadline passes while
// the daemon is down, and it ends late when the daemon is back, the
// light returning to where the layer began.
func TestLayerDeadlinePassesWhileDown(t *testing.T) {
	r := newTimedRig(t, nil)
	if s := r.ok(messages.VerbFire, `{"transition":"button_click"}`)["state"]; s != "red" {
		t.Fatalf("a click on the demo: %v", s)
	}
	r.ok(messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"blue"}],"layer":{"name":"short","ms":2000}}`)
	if s := r.ok(messages.VerbFire, `{"transition":"button_click"}`)["state"]; s != "blue" {
		t.Fatalf("a click in the short layer: %v", s)
	}
	// Up, short of the deadline: the layer stays.
	r.clock.Advance(1500 * time.Millisecond)
	if g := r.ok(messages.VerbGet, `{}`); g["layers"] == nil || g["state"] != "blue" {
		t.Fatalf("the layer ended before its deadline: layers %v, state %v", g["layers"], g["state"])
	}

	r.restart(time.Second) // past the deadline while the daemon is down
	lumentest.WaitFor(t, 15*time.Second, "the late layer to end", func() bool {
		g := r.ok(messages.VerbGet, `{}`)
		return g["layers"] == nil && g["state"] == "red"
	})
	if got := r.lastEvent("lumen.demo.evt.in.layer"); !strings.HasPrefix(got, `{"name":"short","deadline":`) || !strings.HasSuffix(got, `"late":true}`) {
		t.Errorf("the late layer input: %s", got)
	}
	if got := r.lastEvent("lumen.demo.evt.out.layer"); got != `{"name":"short","ended_by":"ms","restored":true,"late":true}` {
		t.Errorf("the late layer's end: %s", got)
	}
	r.verify()
}

// A restart in the middle of a polled source's interval does not run the
// source (and fire its transition) again before its next slot; a daemon
// down past the slot runs it at its first tick, not a whole interval
// later, keeping price_prev; the runs replay without the network.
func TestPollSourceRestartNoDoubleFire(t *testing.T) {
	lumentest.NeedGuest(t)
	var calls atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"price":%d}`, 100+calls.Add(1))
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	r := newTimedRig(t, func(c *daemon.Config) { c.AllowNet, c.SourceMinInterval = []string{host}, 100*time.Millisecond })
	def, _ := json.Marshal(map[string]any{"name": "price", "hosts": []string{host},
		"code": fmt.Sprintf("return await (await fetch('http://%s/')).json();", host)})
	r.ok(messages.VerbDefineTool, string(def))
	const interval = 4 * time.Second
	r.ok(messages.VerbCreateSource, fmt.Sprintf(`{"name":"p","interval_ms":%d,"fetch":{"tool":"price"},"store":{"price":"result.price"}}`, interval.Milliseconds()))
	price := func(want float64) func() bool {
		return func() bool { return r.ok(messages.VerbGet, `{}`)["vars"].(map[string]any)["price"] == want }
	}
	// The first run is journaled, not merely fetched.
	r.step("the new source's first run", price(101))
	first := r.lastRun("p")

	// Restarted inside the interval: the next run comes at the slot
	// (no earlier than 90% of the interval after the first), not at the
	// start.
	r.restart(0)
	if v := r.ok(messages.VerbGet, `{}`)["vars"].(map[string]any)["price"]; v != 101.0 {
		t.Fatalf("the value of the first run is not kept: price %v", v)
	}
	r.step("the second run", price(102))
	second := r.lastRun("p")
	if earliest := first.Add(interval * 9 / 10); second.Before(earliest) {
		t.Fatalf("the source ran again %v after its first run, across a restart; want its slot, at least %v after", second.Sub(first), earliest.Sub(first))
	}
	if n := calls.Load(); n != 2 {
		t.Fatalf("the source called its API %d times for two runs", n)
	}

	// Down past its next slot: it runs at the first tick after the start.
	r.restart(interval + interval/10 + time.Second)
	started := r.clock.Now()
	r.step("the missed slot's run", price(103))
	if since := r.lastRun("p").Sub(started); since > time.Second {
		t.Fatalf("the slot missed while down ran %v after the start; want at the first tick", since)
	}
	if v := r.ok(messages.VerbGet, `{}`)["vars"].(map[string]any)["price_prev"]; v != 102.0 {
		t.Fatalf("price_prev not kept across the restart: %v", v)
	}
	api.Close()
	r.verify()
}
