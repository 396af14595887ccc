package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/wire"
)

// start runs a daemon in process on data with lights, on loopback with a
// free port and simulated hardware; it is closed when the test ends.
func start(t *testing.T, data string, lights ...string) *daemon.Daemon {
	t.Helper()
	return startWith(t, func(c *daemon.Config) { c.Data = data }, lights...)
}

// testLog is t.Logf until the test has ended: the daemon's background
// work (the tool engine's compile) may still log after it is closed.
func testLog(t *testing.T) func(string, ...any) {
	var mu sync.Mutex
	ended := false
	t.Cleanup(func() { mu.Lock(); ended = true; mu.Unlock() }) // registered first, so run last
	return func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if !ended {
			t.Logf(format, args...)
		}
	}
}

// copyDir copies the directory tree from into to.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, e os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if e.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o700)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o600)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A data directory written by lumen before the daemon became a library
// (commit 0e16483: two lights, one of them desk-light-1, with states,
// rules, variables, a schedule, a tool, a data source and its runs, a
// snapshot, a restart, a render error, a bare input from `nats pub`, and
// a timer pending at shutdown) starts, the late timer fires, it takes
// functions and a layer, and replay
// recomputes every recorded output byte for byte. Every later change must
// keep it so.
func TestOldDataDirStartsAndReplays(t *testing.T) {
	data := t.TempDir()
	copyDir(t, filepath.Join("testdata", "datadir-0e16483"), data)
	d := start(t, data, "kitchen", "desk-light-1")
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc)
	ctx := context.Background()
	get := func(light string) messages.GetReply {
		t.Helper()
		var g messages.GetReply
		if err := c.Call(ctx, light, messages.VerbGet, nil, &g); err != nil {
			t.Fatal(err)
		}
		return g
	}

	// The timer set by the last click, pending at shutdown, fires late:
	// color/blue → off by rule r9. (The nightly schedule's tick, due at
	// 03:00 Paris after the fixture was made, may fire late too, and take
	// the light on to party: the journal, not the state, says the timer
	// fired.)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(js)
	lumentest.WaitFor(t, 30*time.Second, "the late timer to fire", func() bool {
		m, err := j.LastMsg(ctx, "lumen.kitchen.evt.out.timer")
		return err == nil && strings.Contains(string(m.Data), `"op":"fire","name":"back"`) && strings.Contains(string(m.Data), `"late":true`)
	})
	g := get("kitchen")
	var states, rules, tools []string
	for _, s := range g.States {
		states = append(states, s.Name)
	}
	for _, r := range g.Rules {
		rules = append(rules, r.ID)
	}
	for _, tl := range g.Tools {
		tools = append(tools, tl.Name)
	}
	vars := map[string]string{}
	for k, v := range g.Vars {
		vars[k] = string(v)
	}
	switch {
	case !slices.Equal(states, []string{"off", "red", "green", "color/blue", "party", "broken"}):
		t.Errorf("states %v", states)
	case !slices.Equal(rules, []string{"r6", "r7", "r8", "r9", "r10", "r11", "r12"}):
		t.Errorf("rules %v", rules)
	case vars["greeting"] != `"héllo wörld"` || vars["temp"] != "12.5" || vars["temp_prev"] != "30" || vars["note"] != `{"a":[1,2,"ü"]}` || vars["limit"] != "":
		t.Errorf("vars %v", vars)
	case !slices.Equal(tools, []string{"double"}) || len(g.Sources) != 1 || g.LastRuns["weather"].IsZero():
		t.Errorf("tools %v, sources %s, last runs %v", tools, g.Sources, g.LastRuns)
	case len(g.Schedules) != 1 || g.Schedules[0].Name != "nightly" || g.Schedules[0].Next == nil:
		t.Errorf("schedules %+v", g.Schedules)
	}
	if s := get("desk-light-1").State; s != "green" {
		t.Errorf("desk-light-1 is %s, want green", s)
	}
	// More inputs, through the new code.
	if err := c.Call(ctx, "kitchen", messages.VerbSetState, messages.SetStateRequest{Name: "off"}, nil); err != nil {
		t.Fatal(err)
	}
	if err := c.Call(ctx, "kitchen", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, nil); err != nil {
		t.Fatal(err)
	}
	if s := get("kitchen").State; s != "red" {
		t.Errorf("a click from off gives %s, want red", s)
	}
	// The old light takes custom functions, which its rules call; the
	// replay below covers them too.
	fn := messages.Function{Name: "to_green", Params: []string{"t"}, Code: "return t === 'paint' && getData('temp') < 20;"}
	if err := c.Call(ctx, "kitchen", messages.VerbDefineFunction, fn, nil); err != nil {
		t.Fatal(err)
	}
	paint := messages.RulesRequest{Rules: []messages.Rule{{From: "*", On: "paint", To: "green", Condition: "to_green(transition)", Enabled: true}}}
	if err := c.Call(ctx, "kitchen", messages.VerbAppendRules, paint, nil); err != nil {
		t.Fatal(err)
	}
	var r messages.Reply
	if err := c.Call(ctx, "kitchen", messages.VerbFire, messages.FireRequest{Transition: "paint"}, &r); err != nil || r.State != "green" {
		t.Errorf("a rule calling a function: %+v %v", r, err)
	}
	// It takes a temporary layer too, which ends within the replay below:
	// one paint is red, the next only ends the layer, back to green.
	once := 1
	layer := messages.RulesRequest{Rules: []messages.Rule{{From: "*", On: "paint", To: "red", Enabled: true}}, Layer: &messages.LayerSpec{Name: "once", Fires: &once}}
	if err := c.Call(ctx, "kitchen", messages.VerbAppendRules, layer, nil); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"red", "green"} {
		if err := c.Call(ctx, "kitchen", messages.VerbFire, messages.FireRequest{Transition: "paint"}, &r); err != nil || r.State != want {
			t.Errorf("paint in the layer: %+v %v, want %s", r, err, want)
		}
	}
	if g := get("kitchen"); len(g.Layers) != 0 || r.Rule != nil {
		t.Errorf("the layer did not end: %+v, rule %v", g.Layers, r.Rule)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// The stopped directory replays, old events and new.
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	for _, l := range []string{"kitchen", "desk-light-1"} {
		sum, err := past.Replay{Light: l, Verify: true}.Run(ctx, journal.New(b.JetStream()))
		if err != nil {
			t.Errorf("replay --verify %s: %v", l, err)
		}
		if sum.Inputs == 0 || sum.Pending != 0 {
			t.Errorf("replay %s: %+v", l, sum)
		}
	}
}

// A data directory written by lumen at check level 1 (commit 0eec906: on
// light demo, state red, the export applied back, which moved it to off;
// state green, an apply removing green with initial blue, which moved it
// to blue; state red) starts at level 2: the export applied again keeps
// red, and replay recomputes the level-1 applies as they were.
func TestLevel1DataDirKeepsItsApplies(t *testing.T) {
	data := t.TempDir()
	copyDir(t, filepath.Join("testdata", "datadir-0eec906"), data)
	d := start(t, data, "demo")
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc)
	ctx := context.Background()
	var g messages.GetReply
	if err := c.Call(ctx, "demo", messages.VerbGet, nil, &g); err != nil || g.State != "red" || g.Initial != "blue" {
		t.Fatalf("the old light: %s, initial %s (%v)", g.State, g.Initial, err)
	}
	var r messages.Reply
	if err := c.Call(ctx, "demo", messages.VerbApply, g.Config(), &r); err != nil || r.State != "red" || r.Changed {
		t.Errorf("its export applied again: %+v %v", r, err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	sum, err := past.Replay{Light: "demo", Verify: true}.Run(ctx, journal.New(b.JetStream()))
	if err != nil {
		t.Fatalf("replay --verify: %v", err)
	}
	defer sum.Machine.Close()
	if sum.Pending != 0 || sum.State != "red" || sum.Machine.Level() != machine.Level {
		t.Errorf("replay: %+v, level %d", sum, sum.Machine.Level())
	}
}

// The daemon in process answers on the wire like the binary: every light
// is a micro service instance, with its groups.
func TestDaemonInProcess(t *testing.T) {
	cfg := daemon.DefaultConfig(t.TempDir())
	cfg.Listen, cfg.Lights, cfg.Sync, cfg.Hardware.Driver = "127.0.0.1:0", []string{"kitchen", "hall"}, broker.SyncBatch, "sim"
	cfg.Groups = map[string][]string{"downstairs": {"hall"}}
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if err := d.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := len(d.Lights()); n != 2 {
		t.Fatalf("%d lights", n)
	}
	for _, l := range d.Lights() {
		if l.Machine == nil || l.Device == nil || l.Tools == nil || l.Sources == nil || l.Agent == nil || l.Service == nil {
			t.Fatalf("light %s lacks an actor: %+v", l.Name, l)
		}
	}
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	msg, err := nc.Request("lumen.group.downstairs.cmd.fire", []byte(`{"transition":"button_click"}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r messages.Reply
	if err := json.Unmarshal(msg.Data, &r); err != nil || !r.OK || r.State != "red" {
		t.Fatalf("group fire: %s", msg.Data)
	}
	var g messages.GetReply
	if err := wire.New(nc).Call(context.Background(), "kitchen", messages.VerbGet, nil, &g); err != nil || g.State != "off" {
		t.Fatalf("kitchen, not in the group: %+v %v", g, err)
	}
}

// Replay stops at --to-seq (the outputs of later inputs are not fed to
// it), and refuses a light the journal does not have, naming those it
// has.
func TestReplayToSeqAndUnknownLight(t *testing.T) {
	data := t.TempDir()
	d := start(t, data, "demo", "hall")
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	c := wire.New(nc)
	ctx := context.Background()
	var seqs []uint64
	for range 4 {
		var r messages.Reply
		if err := c.Call(ctx, "demo", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, &r); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, r.Seq)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	j := journal.New(b.JetStream())
	all, err := past.Replay{Light: "demo", Verify: true}.Run(ctx, j)
	if err != nil {
		t.Fatal(err)
	}
	half, err := past.Replay{Light: "demo", Verify: true, ToSeq: seqs[1]}.Run(ctx, j)
	if err != nil {
		t.Fatalf("replay --to-seq %d: %v", seqs[1], err)
	}
	if half.Inputs != all.Inputs-2 || half.State != "green" {
		t.Fatalf("to input %d: %+v; all: %+v", seqs[1], half, all)
	}
	_, err = past.Replay{Light: "kichen"}.Run(ctx, j)
	if err == nil || !strings.Contains(err.Error(), `no light "kichen" in the journal; it has demo, hall`) {
		t.Fatalf("replay of a light that does not exist: %v", err)
	}
}

// A new light's journal starts with its upgrade to this lumen's level,
// and the limits hold on the wire: an oversized body is a 413, a name past
// the limit a 400 that names it, and neither is journaled.
func TestLimitsOnTheWire(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	ctx := context.Background()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	j := journal.New(js)
	first, err := j.LastMsg(ctx, "lumen.demo.evt.out.upgrade")
	if err != nil || !strings.Contains(string(first.Data), fmt.Sprintf(`"data":{"from":0,"to":%d}`, machine.Level)) {
		t.Fatalf("the upgrade output of a new light: %s %v", first.Data, err)
	}
	last, err := j.LastSeq(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		verb, body, code, says string
	}{
		{"fire", `{"transition":"` + strings.Repeat("x", 65) + `"}`, "400", "the transition name"},
		{"set_var", `{"name":"v","value":"` + strings.Repeat("x", 64<<10) + `"}`, "400", "a variable holds at most 64 KiB"},
		{"apply", `{"states":[{"name":"a","description":"` + strings.Repeat("x", 1<<20) + `"}]}`, "413", "a request is at most 1048576 bytes"},
		{"run_tool", strings.Repeat(" ", 1<<20+1), "413", "a request is at most 1048576 bytes"},
		{"ask", strings.Repeat(" ", 1<<20+1), "413", "a request is at most 1048576 bytes"},
	} {
		msg, err := nc.Request("lumen.demo.cmd."+tt.verb, []byte(tt.body), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if code := msg.Header.Get("Nats-Service-Error-Code"); code != tt.code || !strings.Contains(string(msg.Data), tt.says) || len(msg.Data) > 1000 {
			t.Errorf("%s: %s %.300s", tt.verb, code, msg.Data)
		}
	}
	if now, err := j.LastSeq(ctx); err != nil || now != last {
		t.Errorf("refused requests were journaled: last sequence %d, was %d (%v)", now, last, err)
	}
}

// A light whose durable consumer is deleted under it (no client may: the
// daemon's own connection does it here) crashes, is restarted by its
// supervisor, journals the restart, and carries on where it was.
func TestLightRestartIsJournaled(t *testing.T) {
	data := t.TempDir()
	var mu sync.Mutex
	var logs strings.Builder
	d := startWith(t, func(c *daemon.Config) {
		c.Data = data
		c.Logf = func(format string, args ...any) {
			mu.Lock()
			defer mu.Unlock()
			fmt.Fprintf(&logs, format+"\n", args...)
		}
	}, "porch")
	ctx := context.Background()
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	restarts, err := nc.SubscribeSync("lumen.porch.evt.out.restart")
	if err != nil {
		t.Fatal(err)
	}
	c := wire.New(nc)
	fire := func() (messages.Reply, error) {
		var r messages.Reply
		err := c.Call(ctx, "porch", messages.VerbFire, messages.FireRequest{Transition: "button_click"}, &r)
		return r, err
	}
	if r, err := fire(); err != nil || r.State != "red" {
		t.Fatalf("first click: %+v %v", r, err)
	}
	js := d.JetStream()
	if err := js.DeleteConsumer(ctx, "LUMEN", "light-porch"); err != nil {
		t.Fatal(err)
	}
	m, err := restarts.NextMsg(30 * time.Second)
	if err != nil || !strings.Contains(string(m.Data), `"restarts":1`) || !strings.Contains(string(m.Data), "light-porch") || !strings.Contains(string(m.Data), "deleted") {
		t.Fatalf("the restart event does not say which actor and why: %s %v", m.Data, err)
	}
	mu.Lock()
	logged := logs.String()
	mu.Unlock()
	if !strings.Contains(logged, "light porch crashed") {
		t.Fatalf("the daemon does not log the crash:\n%s", logged)
	}
	// Restarted, it resumes from the journal: the next click goes on
	// from red, and its consumer exists again.
	var r messages.Reply
	lumentest.WaitFor(t, 15*time.Second, "the light to come back", func() bool {
		var err error
		r, err = fire()
		return err == nil
	})
	if r.State != "green" {
		t.Fatalf("after the restart the click went to %s, want green", r.State)
	}
	if _, err := js.Consumer(ctx, "LUMEN", "light-porch"); err != nil {
		t.Fatalf("the consumer was not created again: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	if _, err := (past.Replay{Light: "porch", Verify: true}).Run(ctx, journal.New(b.JetStream())); err != nil {
		t.Fatalf("replay --verify after a restart: %v", err)
	}
}
