package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
)

// The light's core on the wire, in process: fire, get, state, rules,
// schedules and timers, refusals, re-applying an export, and the
// journal's retention.

// coreDurConfig counts ticks and arms a timer.
const coreDurConfig = `{
  "states":[{"name":"on","r":255,"g":255,"b":255}],
  "rules":[
    {"from":"*","on":"tick","to":"on","action":"setData('n', (getData('n') || 0) + 1)"},
    {"from":"*","on":"arm","to":"on","action":"startTimer('ding', 1500)"},
    {"from":"*","on":"ding","to":"off","action":"setData('dinged', true)"}
  ]}`

// The demo light: a click leaves off by a rule, its outputs derive their
// cause and id from the input, and the events say so; a hold turns it off
// from any state; a transition no rule takes changes nothing.
func TestDemoLightOverNATS(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	events := lumentest.Events(t, nc, "demo")

	g := mustOK(t, nc, messages.VerbGet, `{}`)
	if g["state"] != "off" {
		t.Fatalf("demo starts off, got %v", g["state"])
	}
	if states := g["states"].([]any); len(states) < 3 {
		t.Fatalf("demo has colors, got %v", states)
	}

	r := requestTo(t, nc, "demo", messages.VerbFire, `{"transition":"button_click"}`)
	if r.Code != "" || r.Body["state"] == "off" || r.Body["changed"] != true || r.Body["rule"] == nil {
		t.Fatalf("a click leaves off by a rule: %s", r.Raw)
	}
	seq := r.Body["seq"].(float64)
	outs, _ := r.Body["outputs"].([]any)
	if len(outs) == 0 {
		t.Fatalf("no outputs: %s", r.Raw)
	}
	for i, o := range outs {
		o := o.(map[string]any)
		if o["cause"].(float64) != seq || o["id"] != fmt.Sprintf("demo:%d:%d", int(seq), i) {
			t.Errorf("output %d: cause/id not derived from input %v: %v", i, seq, o)
		}
	}
	lumentest.WaitEvent(t, events, "lumen.demo.evt.in.fired", `"button_click"`)
	lumentest.WaitEvent(t, events, "lumen.demo.evt.out.state", fmt.Sprintf(`"cause":%d`, int(seq)))

	// A hold turns it off from any state (the demo's wildcard rule).
	if m := mustOK(t, nc, messages.VerbFire, `{"transition":"button_hold"}`); m["state"] != "off" {
		t.Fatalf("hold: %v", m)
	}
	// An unmatched transition changes nothing and says so.
	if m := mustOK(t, nc, messages.VerbFire, `{"transition":"nothing_listens"}`); m["changed"] != false || m["rule"] != nil {
		t.Fatalf("unmatched: %v", m)
	}
}

// Bad input gets a code and a sentence naming what is wrong, in the
// header and the body alike, and changes nothing.
func TestBadInputGetsClearErrors(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	mustOK(t, nc, messages.VerbApply, `{
		"states":[{"name":"red","r":255,"g":0,"b":0}],
		"rules":[{"from":"off","on":"button_click","to":"red"}]}`)

	tests := []struct {
		name, verb, body, code, contains string
	}{
		{"malformed JSON", "fire", `{"transition":`, "400", "JSON"},
		{"unknown field", "fire", `{"transition":"x","bogus":1}`, "400", "bogus"},
		{"missing transition", "fire", `{}`, "400", "transition"},
		{"unknown state", "set_state", `{"name":"purple"}`, "404", "purple"},
		{"rule to unknown state", "append_rules", `{"rules":[{"from":"off","on":"x","to":"nowhere"}]}`, "404", "nowhere"},
		{"bad expression", "append_rules", `{"rules":[{"from":"off","on":"x","to":"red","condition":"getData('a') >"}]}`, "400", "condition"},
		{"bad priority", "append_rules", `{"rules":[{"from":"off","on":"x","to":"red","priority":1.5}]}`, "400", "priority"},
		{"duplicate state", "apply", `{"states":[{"name":"a","r":1,"g":1,"b":1},{"name":"a","r":1,"g":1,"b":1}],"rules":[]}`, "409", "a"},
		{"delete referenced state", "delete_state", `{"name":"red"}`, "409", "r1"},
		{"delete off", "delete_state", `{"name":"off"}`, "409", "off"},
		{"unknown rule id", "delete_rules", `{"ids":["r99"]}`, "404", "r99"},
		{"data of an unknown source", "data", `{"source":"nope","vars":{"x":1}}`, "404", "nope"},
		{"data without a source", "data", `{"vars":{"x":1}}`, "400", "source"},
		{"data with an empty variable name", "data", `{"source":"nope","vars":{"":1}}`, "400", "empty name"},
		{"data with a broken value", "data", `{"source":"nope","vars":{"x":01}}`, "400", "data"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := requestTo(t, nc, "demo", tt.verb, tt.body)
			if r.Code != tt.code {
				t.Fatalf("code %q, want %s: %s", r.Code, tt.code, r.Raw)
			}
			if r.Body["ok"] != false || fmt.Sprint(r.Body["code"]) != tt.code || !strings.Contains(fmt.Sprint(r.Body["error"]), tt.contains) {
				t.Fatalf("body %s, want error mentioning %q", r.Raw, tt.contains)
			}
			if r.Header != r.Body["error"] {
				t.Errorf("header %q and body error %q differ", r.Header, r.Body["error"])
			}
		})
	}
	// Nothing was half-applied: the configuration is as before.
	g := mustOK(t, nc, messages.VerbGet, `{}`)
	if n := len(g["rules"].([]any)); n != 1 {
		t.Fatalf("rules changed by refused commands: %v", g)
	}
	if vars, _ := g["vars"].(map[string]any); len(vars) != 0 {
		t.Fatalf("variables set by refused commands: %v", g)
	}
	// An unknown light has no responder.
	if _, err := nc.Request("lumen.nosuch.cmd.get", []byte(`{}`), 2*time.Second); err != nats.ErrNoResponders {
		t.Fatalf("unknown light: %v, want no responders", err)
	}
}

// A schedule and a durable timer fire on the daemon's clock; their
// inputs say who made them, and why names them.
func TestSchedulesAndTimers(t *testing.T) {
	r := newTimedRig(t, nil)
	r.ok(messages.VerbApply, coreDurConfig)
	// The clock stands at 20:00:00: the next tick is a second later.
	if b, code := request(t, r.nc, messages.VerbCreateSchedule, `{"name":"every","cron":"@every 1s","fires":"tick"}`); code != "" || !strings.Contains(string(b), `"next":"2026-11-24T20:00:01Z"`) {
		t.Fatalf("create_schedule reply has no next tick: %s %s", code, b)
	}
	if _, code := request(t, r.nc, messages.VerbCreateSchedule, `{"name":"x","cron":"not a cron","fires":"tick"}`); code != "400" {
		t.Fatalf("bad cron: code %q", code)
	}
	r.ok(messages.VerbFire, `{"transition":"arm"}`)
	if timers := r.ok(messages.VerbGet, `{}`)["timers"].([]any); len(timers) != 1 {
		t.Fatalf("pending timer not listed: %v", timers)
	}
	r.step("the schedule and the timer to fire", func() bool {
		vars := r.ok(messages.VerbGet, `{}`)["vars"].(map[string]any)
		n, _ := vars["n"].(float64)
		return n >= 2 && vars["dinged"] == true
	})
	// Their inputs say who made them, and why names them.
	b, code := request(t, r.nc, messages.VerbWhy, `{}`)
	var w messages.WhyReply
	if code != "" || json.Unmarshal(b, &w) != nil {
		t.Fatalf("why: %s %s", code, b)
	}
	reads := map[string]string{}
	for _, rd := range w.Reads {
		if rd.SetBy != nil {
			reads[rd.Name] = rd.SetBy.By
		}
	}
	if w.Input.By != "schedule:every" && w.Input.By != "timer:ding" {
		t.Errorf("the last state's input is by %q, want schedule:every or timer:ding", w.Input.By)
	}
	if w.Input.By == "schedule:every" && reads["n"] != "schedule:every" {
		t.Errorf("n read by the tick was set by %q", reads["n"])
	}
	r.ok(messages.VerbDeleteSchedule, `{"name":"every"}`)
	if body, code := request(t, r.nc, messages.VerbDeleteSchedule, `{"name":"every"}`); code != "404" {
		t.Fatalf("deleting a missing schedule: %s %s", code, body)
	}
}

// coreExport is the light's configuration as lumen export writes it to
// a YAML file and lumen apply -f reads it back: an apply body.
func coreExport(t *testing.T, nc *nats.Conn) []byte {
	t.Helper()
	b, code := request(t, nc, messages.VerbGet, `{}`)
	var g messages.GetReply
	if code != "" || json.Unmarshal(b, &g) != nil {
		t.Fatalf("get: %s %s", code, b)
	}
	yaml, err := messages.ToYAML(g.Config())
	if err != nil {
		t.Fatal(err)
	}
	body, err := messages.ToJSON(yaml, ".yaml")
	if err != nil {
		t.Fatalf("the export does not read back: %v\n%s", err, yaml)
	}
	return body
}

// Re-applying an exported configuration leaves the light where it is
// (issue 26, item 1): the dry run and the apply both say the state
// stays, apply with "state" moves it, and a rollback keeps it too, as
// does the page's editor applying back what it shows.
func TestReapplyExportKeepsState(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) { c.HTTP = "127.0.0.1:0" }, "demo")
	nc := connectTo(t, d)
	state := func() string { return fmt.Sprint(mustOK(t, nc, messages.VerbGet, `{}`)["state"]) }
	changedState := func(m map[string]any) any {
		ch, _ := m["changes"].(map[string]any)
		return ch["state"]
	}
	mustOK(t, nc, messages.VerbSetState, `{"name":"red"}`)
	file := coreExport(t, nc)
	if m := mustOK(t, nc, messages.VerbApply, string(messages.WithTrue(file, "dry_run"))); changedState(m) != nil {
		t.Errorf("the dry run says the state moves: %v", m)
	}
	if m := mustOK(t, nc, messages.VerbApply, string(file)); changedState(m) != nil || state() != "red" {
		t.Fatalf("re-applying the export moved the light to %s: %v", state(), m)
	}
	// The dry run says what apply with a state would do, and it does it.
	withState := func(s string) []byte { return messages.WithField(file, "state", s) }
	if m := mustOK(t, nc, messages.VerbApply, string(messages.WithTrue(withState("blue"), "dry_run"))); fmt.Sprint(changedState(m)) != "map[from:red to:blue]" || state() != "red" {
		t.Errorf("apply state blue, dry run (state %s): %v", state(), m)
	}
	if m := mustOK(t, nc, messages.VerbApply, string(withState("blue"))); fmt.Sprint(changedState(m)) != "map[from:red to:blue]" || state() != "blue" {
		t.Fatalf("apply state blue: the light is %s: %v", state(), m)
	}
	if r := requestTo(t, nc, "demo", messages.VerbApply, string(withState("purple"))); r.Code == "" || !strings.Contains(r.Header, `"purple"`) || state() != "blue" {
		t.Errorf("apply state purple: code %q, state %s: %s", r.Code, state(), r.Raw)
	}
	// A rollback to the demo's configuration keeps the state.
	h := mustOK(t, nc, messages.VerbHistory, `{}`)["changes"].([]any)
	first := fmt.Sprint(h[0].(map[string]any)["seq"])
	mustOK(t, nc, messages.VerbRollback, `{"seq":`+first+`}`)
	if s := state(); s != "blue" {
		t.Fatalf("rollback %s moved the light to %s", first, s)
	}
	// The page's editor: the configuration it shows, applied back.
	config := d.WebhookURL() + "/api/v1/lights/demo/config"
	res, err := http.Get(config)
	if err != nil {
		t.Fatal(err)
	}
	yaml, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, query := range []string{"?dry_run=1", ""} {
		req, _ := http.NewRequest(http.MethodPut, config+query, bytes.NewReader(yaml))
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if res.StatusCode != 200 || strings.Contains(string(b), `"state":{`) || state() != "blue" {
			t.Fatalf("the page's Apply%s: %d, the light is %s\n%s", query, res.StatusCode, state(), b)
		}
	}
	// "state" in the body names a state to go to; a removed state gives
	// way to initial, and the dry run says so.
	m := mustOK(t, nc, messages.VerbApply, `{"states":[{"name":"red","r":255},{"name":"green","g":255}],"rules":[],"initial":"green","dry_run":true}`)
	if fmt.Sprint(changedState(m)) != "map[from:blue to:green]" {
		t.Errorf("dry run removing the current state: %v", m)
	}
	mustOK(t, nc, messages.VerbApply, `{"states":[{"name":"red","r":255},{"name":"blue","b":255}],"rules":[],"state":"red"}`)
	if s := state(); s != "red" {
		t.Errorf(`apply {"state":"red"}: the light is %s`, s)
	}
	verifyReplay(t, nc, "demo")
}

// A layer that ends after 0 fires or lasts 0s is refused with the range
// it takes (issue 26, item 2): it used to be a permanent rule.
func TestLayerOfNothingRefusedOnTheWire(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	rules := func() int { return len(mustOK(t, nc, messages.VerbGet, `{}`)["rules"].([]any)) }
	before := rules()
	for _, tc := range []struct{ layer, want string }{
		{`{"fires":0}`, "fires is 0; give how many times the layer's rules fire before it ends, at least 1"},
		{`{"ms":0}`, "ms is 0; give how long the layer lasts in milliseconds, from 1 to 1000000000000"},
	} {
		r := requestTo(t, nc, "demo", messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":`+tc.layer+`}`)
		if r.Code != "400" || !strings.Contains(r.Header, tc.want) || rules() != before {
			t.Errorf("append_rules layer %s: %s %s", tc.layer, r.Code, r.Raw)
		}
	}
}

// Past its budget the journal drops only what snapshots cover; the light
// still recovers exactly after a restart and replays from its snapshot,
// and its past stays answerable back to the oldest kept snapshot.
func TestRetentionKeepsWithinBudget(t *testing.T) {
	const budget = 200_000
	dir := t.TempDir()
	change := func(c *daemon.Config) { c.Data, c.MaxBytes, c.SnapshotEvery = dir, budget, 5 }
	d := startWith(t, change, "dur")
	nc := connectTo(t, d)
	ok := func(verb, body string) map[string]any {
		t.Helper()
		r := requestTo(t, nc, "dur", verb, body)
		if r.Code != "" || r.Body["ok"] != true {
			t.Fatalf("%s %s: %s %s", verb, body, r.Code, r.Raw)
		}
		return r.Body
	}
	ok(messages.VerbApply, coreDurConfig)
	const fires = 1600
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range fires / 4 {
				m, err := nc.Request("lumen.dur.cmd.fire", []byte(`{"transition":"tick"}`), 10*time.Second)
				if err != nil {
					t.Errorf("fire: %v", err)
					return
				}
				if code := m.Header.Get(micro.ErrorCodeHeader); code != "" {
					t.Errorf("fire: %s %s", code, m.Data)
					return
				}
			}
		}()
	}
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lumentest.WaitFor(t, 30*time.Second, fmt.Sprintf("the journal to hold at most 3/4 of its budget %d", budget), func() bool {
		s, err := js.Stream(ctx, "LUMEN")
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().State.Bytes <= budget*3/4
	})
	nc.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d = startWith(t, change, "dur")
	nc = connectTo(t, d)
	g := ok(messages.VerbGet, `{}`)
	if n := g["vars"].(map[string]any)["n"]; n != float64(fires) {
		t.Fatalf("after compaction and restart n = %v, want %d", n, fires)
	}
	// The past before the latest snapshot stays answerable from the kept
	// past snapshots; before the oldest, a sentence says how far back.
	r := requestTo(t, nc, "dur", messages.VerbGet, `{"seq":3}`)
	m := regexp.MustCompile(`its journal starts at (\d+)`).FindStringSubmatch(r.Header)
	if r.Code != "404" || m == nil {
		t.Fatalf("get seq 3 of a compacted journal: %s %s", r.Code, r.Raw)
	}
	oldest, _ := strconv.ParseUint(m[1], 10, 64)
	then := ok(messages.VerbGet, fmt.Sprintf(`{"seq":%d}`, oldest))
	n, _ := then["vars"].(map[string]any)["n"].(float64)
	if n < 1 || n >= fires || uint64(g["seq"].(float64))-oldest < 100 {
		t.Errorf("the light at input %d: n = %v (now %v at input %v): the kept past is too short", oldest, n, fires, g["seq"])
	}
	ok(messages.VerbHistory, `{}`)
	if w := ok(messages.VerbWhy, `{}`); w["rule"] == nil {
		t.Errorf("why on a compacted journal names no rule: %v", w)
	}
	nc.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	// The snapshots are the daemon's: read them from its stopped data
	// directory.
	ib, err := broker.Inspect(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ib.Shutdown()
	kv, err := ib.JetStream().KeyValue(ctx, "LUMEN_SNAP")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeysFiltered(ctx, "past.dur.>")
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for range keys.Keys() {
		kept++
	}
	if kept == 0 || kept > 32 {
		t.Errorf("%d past snapshots kept, want 1 to 32", kept)
	}
	if _, err := (past.Replay{Light: "dur", Verify: true, FromSnapshot: true}).Run(ctx, journal.New(ib.JetStream())); err != nil {
		t.Fatalf("replay --from-snapshot --verify: %v", err)
	}
	if _, err := (past.Replay{Light: "dur"}).Run(ctx, journal.New(ib.JetStream())); err == nil || !strings.Contains(err.Error(), "--from-snapshot") {
		t.Fatalf("replay from the start of a compacted journal must say to use the snapshot: %v", err)
	}
}
