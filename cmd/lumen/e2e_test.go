package main_test

import (
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// subscribeEvents collects every event of a light.
func subscribeEvents(t *testing.T, nc *nats.Conn, light string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 4096)
	sub, err := nc.ChanSubscribe("lumen."+light+".evt.>", ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func waitEvent(t *testing.T, ch chan *nats.Msg, subj string, contains string) *nats.Msg {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-ch:
			if m.Subject == subj && strings.Contains(string(m.Data), contains) {
				return m
			}
		case <-deadline:
			t.Fatalf("no event on %s containing %q", subj, contains)
		}
	}
}

func TestDemoLightOverNATS(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "demo")

	g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`))
	if g.Body["state"] != "off" {
		t.Fatalf("demo starts off, got %v", g.Body["state"])
	}
	if states := g.Body["states"].([]any); len(states) < 3 {
		t.Fatalf("demo has colors, got %v", states)
	}

	r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	if r.Body["state"] == "off" || r.Body["changed"] != true || r.Body["rule"] == nil {
		t.Fatalf("a click leaves off by a rule: %s", r.Raw)
	}
	seq := r.Body["seq"].(float64)
	if len(r.Outputs) == 0 {
		t.Fatalf("no outputs: %s", r.Raw)
	}
	for i, o := range r.Outputs {
		if o["cause"].(float64) != seq || o["id"] != fmt.Sprintf("demo:%d:%d", int(seq), i) {
			t.Errorf("output %d: cause/id not derived from input %v: %v", i, seq, o)
		}
	}
	waitEvent(t, events, "lumen.demo.evt.in.fired", `"button_click"`)
	waitEvent(t, events, "lumen.demo.evt.out.state", fmt.Sprintf(`"cause":%d`, int(seq)))

	// A hold turns it off from any state (the demo's wildcard rule).
	r = mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_hold"}`))
	if r.Body["state"] != "off" {
		t.Fatalf("hold: %s", r.Raw)
	}
	// An unmatched transition changes nothing and says so.
	r = mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"nothing_listens"}`))
	if r.Body["changed"] != false || r.Body["rule"] != nil {
		t.Fatalf("unmatched: %s", r.Raw)
	}
}

func TestBadInputGetsClearErrors(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{
		"states":[{"name":"red","r":255,"g":0,"b":0}],
		"rules":[{"from":"off","on":"button_click","to":"red"}]}`))

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
			r := request(t, nc, "lumen.demo.cmd."+tt.verb, tt.body)
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
	g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`))
	if n := len(g.Body["rules"].([]any)); n != 1 {
		t.Fatalf("rules changed by refused commands: %s", g.Raw)
	}
	if vars, _ := g.Body["vars"].(map[string]any); len(vars) != 0 {
		t.Fatalf("variables set by refused commands: %s", g.Raw)
	}
	// An unknown light has no responder.
	if _, err := nc.Request("lumen.nosuch.cmd.get", []byte(`{}`), 2*time.Second); err != nats.ErrNoResponders {
		t.Fatalf("unknown light: %v, want no responders", err)
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	out, code := runCLI(t, d.URL, "fire", "button_click")
	if code != 0 || !strings.Contains(out, "off → ") {
		t.Fatalf("fire: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "state")
	if code != 0 || strings.TrimSpace(out) == "off" {
		t.Fatalf("state: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "state", "nosuch")
	if code != 1 || !strings.Contains(out, "nosuch") {
		t.Fatalf("unknown state: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "fire")
	if code != 2 {
		t.Fatalf("usage error exit 2, got %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "fire", "x", "--light", "nosuch")
	if code != 1 || !strings.Contains(out, "no light named") {
		t.Fatalf("unknown light: %d %s", code, out)
	}
	// export → apply round trip.
	exp, code := runCLI(t, d.URL, "export", "--format", "json")
	if code != 0 {
		t.Fatalf("export: %s", exp)
	}
	for _, cmd := range []string{"fire", "up", "replay", "tail", "apply", "export", "get", "state"} {
		out, code := runCLI(t, d.URL, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help has no example: %s", cmd, out)
		}
	}
}

func TestSchedulesAndTimers(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "sched")
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.sched.cmd.apply", durConfig))
	r := mustOK(t, request(t, nc, "lumen.sched.cmd.create_schedule", `{"name":"every","cron":"@every 1s","fires":"tick"}`))
	if !strings.Contains(string(r.Raw), `"next"`) {
		t.Fatalf("create_schedule reply has no next tick: %s", r.Raw)
	}
	bad := request(t, nc, "lumen.sched.cmd.create_schedule", `{"name":"x","cron":"not a cron","fires":"tick"}`)
	if bad.Code != "400" {
		t.Fatalf("bad cron: %s", bad.Raw)
	}
	mustOK(t, request(t, nc, "lumen.sched.cmd.fire", `{"transition":"arm"}`))
	g := mustOK(t, request(t, nc, "lumen.sched.cmd.get", `{}`))
	if timers := g.Body["timers"].([]any); len(timers) != 1 {
		t.Fatalf("pending timer not listed: %s", g.Raw)
	}
	lumentest.WaitFor(t, 15*time.Second, "the schedule and the timer to fire", func() bool {
		g = mustOK(t, request(t, nc, "lumen.sched.cmd.get", `{}`))
		vars := g.Body["vars"].(map[string]any)
		n, _ := vars["n"].(float64)
		return n >= 2 && vars["dinged"] == true
	})
	// Their inputs say who made them, and why names them.
	out, code := runCLI(t, d.URL, "why", "--light", "sched", "--json")
	var w messages.WhyReply
	if code != 0 || json.Unmarshal([]byte(out), &w) != nil {
		t.Fatalf("lumen why: exit %d\n%s", code, out)
	}
	reads := map[string]string{}
	for _, r := range w.Reads {
		if r.SetBy != nil {
			reads[r.Name] = r.SetBy.By
		}
	}
	if w.Input.By != "schedule:every" && w.Input.By != "timer:ding" {
		t.Errorf("the last state's input is by %q, want schedule:every or timer:ding", w.Input.By)
	}
	if w.Input.By == "schedule:every" && reads["n"] != "schedule:every" {
		t.Errorf("n read by the tick was set by %q", reads["n"])
	}
	mustOK(t, request(t, nc, "lumen.sched.cmd.delete_schedule", `{"name":"every"}`))
	if r := request(t, nc, "lumen.sched.cmd.delete_schedule", `{"name":"every"}`); r.Code != "404" {
		t.Fatalf("deleting a missing schedule: %s", r.Raw)
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	cmd := exec.Command(lumenBin(t), "tail", "--server", d.URL)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	nc := connect(t, d.URL)
	lumentest.WaitFor(t, 15*time.Second, "tail to start", func() bool { return strings.Contains(out.String(), "following") })
	mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	lumentest.WaitFor(t, 15*time.Second, "tail's state line", func() bool {
		return strings.Contains(out.String(), "state  off → red  [button_click by rule r1]")
	})
	if !strings.Contains(out.String(), "demo in  fired") {
		t.Fatalf("tail shows no input line: %s", out)
	}
}
