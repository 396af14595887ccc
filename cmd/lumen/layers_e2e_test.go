package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// plainYAML is the light of issue 17's acceptance: a click toggles white.
const plainYAML = `initial: off
states:
  - {name: white, r: 255, g: 255, b: 255}
rules:
  - {from: off, on: button_click, to: white}
  - {from: white, on: button_click, to: off}
`

// stateEvents follows a light's state outputs.
type stateEvents struct {
	ch chan messages.OutStateData
}

func watchStates(t *testing.T, nc *nats.Conn, light string) *stateEvents {
	t.Helper()
	w := &stateEvents{ch: make(chan messages.OutStateData, 64)}
	sub, err := nc.Subscribe("lumen."+light+".evt.out.state", func(m *nats.Msg) {
		var env messages.Envelope
		var d messages.OutStateData
		if messages.DecodeEnvelope(m.Data, &env) == nil && json.Unmarshal(env.Data, &d) == nil {
			w.ch <- d
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// lastEvent is the data of the last event journaled on subj.
func lastEvent(t *testing.T, nc *nats.Conn, subj string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	stream, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	m, err := stream.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	var env messages.Envelope
	if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
		t.Fatalf("%s: %v", subj, err)
	}
	return string(env.Data)
}

func (w *stateEvents) next(t *testing.T) messages.OutStateData {
	t.Helper()
	select {
	case d := <-w.ch:
		return d
	case <-time.After(15 * time.Second):
		t.Fatal("no state output")
	}
	return messages.OutStateData{}
}

// Issue 17 §1's acceptance: on a light whose own rules toggle white, the
// agent (the scripted model, following the counter pattern) sets up "next
// 3 clicks red, then back to normal" without asking for approval; seven
// presses of the button give red red red off white off white, the LED
// showing each, through a power cut in the middle of the layer; then get
// shows the light's own rules only, the history shows the layer come and
// go, and replay --verify recomputes every output across the layer's end.
func TestAgentNextClicksThenBackToNormal(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("getPattern", `{"name":"counter"}`)}},
		agenttest.Step{
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.Last().Text(); !strings.Contains(res, `"layer":{"fires":3}`) {
					return fmt.Errorf("the counter pattern does not show a layer: %s", res)
				}
				return nil
			},
			Calls: []agenttest.Call{
				scripted("createState", `{"name":"red","r":255,"g":0,"b":0}`),
				scripted("appendRules", `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"next3","fires":3}}`),
			}},
		agenttest.Step{
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.Last().Text(); !strings.Contains(res, `"layers":["next3"]`) {
					return fmt.Errorf("appendRules' result does not name the layer: %s", res)
				}
				if p := string(r.Messages[0].Content); !strings.Contains(p, "- next3: rules r") || !strings.Contains(p, "3 more firings, then back to off") {
					return fmt.Errorf("the prompt does not show the layer:\n%s", p)
				}
				return nil
			},
			Calls: []agenttest.Call{scripted("done", `{"message":"The next three clicks are red, then clicks work as before."}`)}},
	)
	defer srv.Close()
	dir := t.TempDir()
	d := startDaemon(t, dir, agentArgs(srv, "--hardware", "sim")...)
	file := filepath.Join(t.TempDir(), "plain.yaml")
	if err := os.WriteFile(file, []byte(plainYAML), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 {
		t.Fatalf("apply: %s", out)
	}
	nc := connect(t, d.URL)
	own := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["rules"]

	out, code := runCLI(t, d.URL, "ask", "next 3 clicks red, then back to normal")
	if code != 0 || !strings.Contains(out, "✓ appendRules") || strings.Contains(out, "approval") || !strings.Contains(out, "The next three clicks are red") {
		t.Fatalf("lumen ask: exit %d\n%s\n%s", code, out, d.Logs())
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	if out, _ := runCLI(t, d.URL, "layers"); !strings.Contains(out, "next3") || !strings.Contains(out, "after 3 more firings") || !strings.Contains(out, "yes       off") {
		t.Errorf("lumen layers:\n%s", out)
	}

	states := watchStates(t, nc, "demo")
	press := func(want string) {
		t.Helper()
		if out, code := runCLI(t, d.URL, "press"); code != 0 {
			t.Fatalf("press: %s", out)
		}
		if got := states.next(t); got.To != want {
			t.Fatalf("a press gives %s, want %s (%+v)", got.To, want, got)
		}
		lumentest.WaitFor(t, 10*time.Second, "the LED to show "+want, func() bool {
			s, _, _ := led(t, nc, "demo")
			return s == want
		})
	}
	press("red")
	press("red")
	// A power cut in the middle of the layer.
	nc.Close()
	d.Kill()
	d = startDaemon(t, dir, agentArgs(srv, "--hardware", "sim")...)
	nc = connect(t, d.URL)
	states = watchStates(t, nc, "demo")
	for _, want := range []string{"red", "off", "white", "off", "white"} {
		press(want)
	}

	g := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body
	if a, b := fmt.Sprint(g["rules"]), fmt.Sprint(own); a != b || g["layers"] != nil {
		t.Errorf("after the layer: rules %s (want %s), layers %v", a, b, g["layers"])
	}
	if out, _ := runCLI(t, d.URL, "layers"); !strings.Contains(out, "light demo has no layers") {
		t.Errorf("lumen layers after the layer:\n%s", out)
	}
	if out, _ := runCLI(t, d.URL, "history"); !strings.Contains(out, "+layer next3") || !strings.Contains(out, "-layer next3") {
		t.Errorf("lumen history does not show the layer come and go:\n%s", out)
	}
	if got := lastEvent(t, nc, "lumen.demo.evt.out.layer"); got != `{"name":"next3","ended_by":"fires","restored":true}` {
		t.Errorf("the layer's end: %s", got)
	}
}

// A person adds layers with lumen rule add, lists them, switches their
// rules and ends them, or gives them a deadline; refusals say what is
// wrong in the CLI's words. (What the daemon does with layers:
// actors/daemon's TestLayersAddEndAndRefuse.)
func TestLayerCLI(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir)
	file := filepath.Join(t.TempDir(), "plain.yaml")
	yaml := strings.Replace(plainYAML, "  - {name: white, r: 255, g: 255, b: 255}\n", "  - {name: white, r: 255, g: 255, b: 255}\n  - {name: red, r: 255, g: 0, b: 0}\n", 1)
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 {
		t.Fatalf("apply: %s", out)
	}
	nc := connect(t, d.URL)
	out, code := runCLI(t, d.URL, "rule", "add", "*", "button_click", "red", "--fires", "2", "--layer", "two", "--json")
	var rep messages.Reply
	if err := json.Unmarshal([]byte(out), &rep); code != 0 || err != nil || len(rep.Outputs) == 0 {
		t.Fatalf("rule add --fires --json: exit %d, %v\n%s", code, err, out)
	}
	var added messages.OutConfigData
	if err := json.Unmarshal(rep.Outputs[0].Data, &added); err != nil || fmt.Sprint(added.Layers) != "[two]" || len(added.Rules) != 1 {
		t.Fatalf("rule add --fires: %+v %v", added, err)
	}
	id := added.Rules[0]
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"layers"}, 0, "two   after 2 more firings  yes       off"},
		{[]string{"rules"}, 0, "(and a temporary layer of rules, tried before these: lumen layers)"},
		{[]string{"layer", "ls", "--json"}, 0, `"name": "two",`},
		{[]string{"rule", "add", "*", "x", "red", "--fires", "1", "--for", "1m"}, 2, "give one of --fires, --for and --until: how the layer ends"},
		{[]string{"rule", "add", "*", "x", "red", "--layer", "solo"}, 2, "say how it ends with --fires, --for or --until"},
		{[]string{"rule", "add", "*", "x", "red", "--until", "getData('a') ==="}, 1, "'s until has a syntax error"},
		{[]string{"rule", "rm", id}, 1, "rule " + id + " belongs to layer two"},
		{[]string{"layer", "rm", "nope"}, 1, `layer "nope" does not exist (it may have ended already); the light's layers are two (code 404)`},
		{[]string{"rule", "disable", id}, 0, "config disable rules: rule " + id},
		{[]string{"rule", "enable", id}, 0, "config enable rules: rule " + id},
	} {
		out, got := runCLI(t, d.URL, tc.args...)
		if got != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("lumen %s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), got, tc.code, tc.want, out)
		}
	}
	if out, code := runCLI(t, d.URL, "layer", "rm", "two"); code != 0 || !strings.Contains(out, "layer  two ended: it was deleted, back to the state it began in") {
		t.Fatalf("layer rm: exit %d\n%s", code, out)
	}
	// --for: a layer that ends at a deadline, that long after it began.
	// (Its end: actors/daemon's TestLayersAddEndAndRefuse and, late after
	// the daemon was down at its deadline, TestLayerDeadlinePassesWhileDown,
	// on a fake clock.)
	before := time.Now()
	if out, code := runCLI(t, d.URL, "rule", "add", "*", "button_click", "red", "--for", "1h", "--layer", "short"); code != 0 {
		t.Fatalf("rule add --for: %s", out)
	}
	after := time.Now()
	var g struct{ Layers []messages.Layer }
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)); json.Unmarshal(r.Raw, &g) != nil || len(g.Layers) != 1 || g.Layers[0].Name != "short" ||
		g.Layers[0].Deadline == nil || g.Layers[0].Deadline.Before(before.Add(time.Hour)) || g.Layers[0].Deadline.After(after.Add(time.Hour)) {
		t.Fatalf("after rule add --for 1h (at %v): %s", before, r.Raw)
	}
}
