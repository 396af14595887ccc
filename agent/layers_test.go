package agent_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
)

// lightFunc is a Light answering every command with its function.
type lightFunc func(verb string, body []byte) ([]byte, error)

func (f lightFunc) Command(_ context.Context, verb string, body []byte) ([]byte, error) {
	return f(verb, body)
}

// Switching rules and ending a layer need the person's approval, except
// on rules and layers the same request created: a request may adjust or
// undo its own work.
func TestLayerToolTiers(t *testing.T) {
	tools := &agent.Tools{Light: newFakeLight()}
	appended := messages.ToolStep{Tool: agent.ToolAppendRules, OK: true,
		Result: json.RawMessage(`{"ok":true,"state":"off","changed":false,"rule":null,"config":{"op":"append_rules","rules":["r7","r8"],"layers":["next3"]}}`)}
	failed := messages.ToolStep{Tool: agent.ToolAppendRules, OK: false,
		Result: json.RawMessage(`{"config":{"op":"append_rules","rules":["r9"],"layers":["other"]}}`)}
	done := []messages.ToolStep{appended, failed}
	tests := []struct {
		tool, args string
		done       []messages.ToolStep
		want       string
	}{
		{agent.ToolDisableRules, `{"ids":["r7"]}`, nil, messages.TierConfirm},
		{agent.ToolDisableRules, `{"ids":["r7","r8"]}`, done, messages.TierAutonomous},
		{agent.ToolEnableRules, `{"ids":["r8"]}`, done, messages.TierAutonomous},
		{agent.ToolDisableRules, `{"ids":["r7","r1"]}`, done, messages.TierConfirm}, // r1 is the light's
		{agent.ToolDisableRules, `{"ids":["r9"]}`, done, messages.TierConfirm},      // that call failed
		{agent.ToolDisableRules, `{"ids":[]}`, done, messages.TierConfirm},
		{agent.ToolDeleteLayer, `{"name":"next3"}`, done, messages.TierAutonomous},
		{agent.ToolDeleteLayer, `{"name":"next3"}`, nil, messages.TierConfirm},
		{agent.ToolDeleteLayer, `{"name":"other"}`, done, messages.TierConfirm},
		{agent.ToolDeleteRules, `{"ids":["r7"]}`, done, messages.TierConfirm}, // deleting stays confirmed
		{agent.ToolAppendRules, `{"rules":[],"layer":{"fires":3}}`, nil, messages.TierAutonomous},
	}
	for _, tt := range tests {
		if got := tools.Tier(context.Background(), tt.tool, json.RawMessage(tt.args), tt.done); got != tt.want {
			t.Errorf("%s %s after %d calls: %s, want %s", tt.tool, tt.args, len(tt.done), got, tt.want)
		}
	}
	forbidding := &agent.Tools{Light: newFakeLight(), Forbidden: []string{agent.ToolDeleteLayer}}
	if got := forbidding.Tier(context.Background(), agent.ToolDeleteLayer, json.RawMessage(`{"name":"next3"}`), done); got != messages.TierForbidden {
		t.Errorf("a forbidden tool on the request's own layer: %s", got)
	}
}

// The tools go to the light's verbs; the result of a change keeps what
// the light says it did (the ids of the rules added, the layer, how a
// layer ended) and drops the rest of the outputs; getRules shows the
// layers apart from the light's own rules.
func TestLayerToolsRun(t *testing.T) {
	var cmds []string
	two := 2
	light := lightFunc(func(verb string, body []byte) ([]byte, error) {
		cmds = append(cmds, verb+" "+string(body))
		switch verb {
		case messages.VerbGet:
			return json.Marshal(messages.GetReply{OK: true, State: "red",
				Rules:  []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "white", Enabled: true}},
				Layers: []messages.Layer{{Name: "next3", FiresLeft: &two, Restore: true, BeganState: "off", Rules: []messages.Rule{{ID: "r3", From: "*", On: "button_click", To: "red", Enabled: true}}}}})
		case messages.VerbDeleteLayer:
			return []byte(`{"ok":true,"seq":9,"state":"off","changed":true,"rule":null,"outputs":[
				{"v":1,"id":"k:9:0","type":"config","light":"k","time":"2026-11-24T12:00:00Z","cause":9,"data":{"op":"delete_layer","layers":["next3"]}},
				{"v":1,"id":"k:9:1","type":"layer","light":"k","time":"2026-11-24T12:00:00Z","cause":9,"data":{"name":"next3","ended_by":"delete","restored":true}},
				{"v":1,"id":"k:9:2","type":"state","light":"k","time":"2026-11-24T12:00:00Z","cause":9,"data":{"from":"red","to":"off","rule":null,"changed":true}}]}`), nil
		}
		return []byte(`{"ok":true,"seq":8,"state":"off","changed":false,"rule":null,"outputs":[
			{"v":1,"id":"k:8:0","type":"config","light":"k","time":"2026-11-24T12:00:00Z","cause":8,"data":{"op":"append_rules","rules":["r3"],"layers":["next3"]}}]}`), nil
	})
	tools := &agent.Tools{Light: light}
	ctx := context.Background()
	res, err := tools.Run(ctx, agent.ToolAppendRules, json.RawMessage(`{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"next3","fires":3},"speak_directly":true}`))
	if err != nil || string(res) != `{"changed":false,"config":{"op":"append_rules","rules":["r3"],"layers":["next3"]},"ok":true,"rule":null,"state":"off"}` {
		t.Errorf("appendRules: %s %v", res, err)
	}
	if res, err = tools.Run(ctx, agent.ToolDeleteLayer, json.RawMessage(`{"name":"next3"}`)); err != nil || !strings.Contains(string(res), `"layer":{"name":"next3","ended_by":"delete","restored":true}`) || strings.Contains(string(res), `"from":"red"`) {
		t.Errorf("deleteLayer: %s %v", res, err)
	}
	for _, c := range []struct{ tool, args string }{{agent.ToolDisableRules, `{"ids":["r1"]}`}, {agent.ToolEnableRules, `{"ids":["r1"]}`}} {
		if _, err := tools.Run(ctx, c.tool, json.RawMessage(c.args)); err != nil {
			t.Errorf("%s: %v", c.tool, err)
		}
	}
	res, err = tools.Run(ctx, agent.ToolGetRules, json.RawMessage(`{}`))
	if err != nil || !strings.Contains(string(res), `"layers":[{"name":"next3","rules":[{"id":"r3"`) || !strings.Contains(string(res), `"rules":[{"id":"r1"`) {
		t.Errorf("getRules: %s %v", res, err)
	}
	want := []string{
		`append_rules {"layer":{"name":"next3","fires":3},"rules":[{"from":"*","on":"button_click","to":"red"}]}`,
		`delete_layer {"name":"next3"}`,
		`disable_rules {"ids":["r1"]}`,
		`enable_rules {"ids":["r1"]}`,
		`get {}`,
	}
	if got := strings.Join(cmds, "\n"); got != strings.Join(want, "\n") {
		t.Errorf("commands:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
	said := agent.Confirmation(messages.ToolStep{Tool: agent.ToolAppendRules, OK: true, Args: json.RawMessage(`{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"fires":3}}`)})
	if said != "I added the rule for a while; then the light goes back to what it did before." {
		t.Errorf("confirmation: %s", said)
	}
}

// The prompt says when to use a layer, and shows the light's layers with
// what is left of them.
func TestPromptLayers(t *testing.T) {
	two := 2
	at := time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)
	m := &messages.GetReply{State: "red", States: []messages.State{{Name: "off"}, {Name: "red"}},
		Rules: []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "red", Enabled: true}},
		Layers: []messages.Layer{
			{Name: "next3", FiresLeft: &two, Restore: true, BeganState: "off", Rules: []messages.Rule{{ID: "r3"}, {ID: "r4"}}},
			{Name: "party", Deadline: &at, BeganState: "red", Rules: []messages.Rule{{ID: "r5"}}},
		}}
	p := agent.Prompt("kitchen", m)
	for _, want := range []string{
		`"the next 3 clicks …, then back to normal"`, "layer {fires: N}", "no counter variables",
		"deleteLayer(name)", "disableRules(ids) and enableRules(ids)",
		"Temporary layers (tried before the rules, newest first):\n- next3: rules r3, r4, 2 more firings, then back to off\n- party: rules r5, until 2026-11-24T20:00:00Z, then the light keeps its state",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("prompt lacks %q:\n%s", want, p)
		}
	}
	if p := agent.Prompt("kitchen", &messages.GetReply{State: "off"}); strings.Contains(p, "Temporary layers (") {
		t.Errorf("a light without layers lists them:\n%s", p)
	}
}

// In a request, the agent switches and ends what the request itself
// added without asking; the light's own rules still need the person.
func TestLayerToolTiersInARequest(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("appendRules", `{"rules":[{"from":"*","on":"button_click","to":"off"}],"layer":{"name":"tmp","fires":2}}`)}},
		agenttest.Step{Calls: []agenttest.Call{
			call("disableRules", `{"ids":["r9"]}`),
			call("enableRules", `{"ids":["r9"]}`),
			call("deleteLayer", `{"name":"tmp"}`),
			call("disableRules", `{"ids":["r1"]}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"ok"}`)}},
	)
	var cmds []string
	f.loop.Tools.Light = lightFunc(func(verb string, body []byte) ([]byte, error) {
		if verb == messages.VerbGet {
			return []byte(`{"ok":true,"state":"off","states":[{"name":"off","r":0,"g":0,"b":0}]}`), nil
		}
		cmds = append(cmds, verb)
		return []byte(`{"ok":true,"seq":8,"state":"off","changed":false,"rule":null,"outputs":[
			{"v":1,"id":"k:8:0","type":"config","light":"k","time":"2026-11-24T12:00:00Z","cause":8,"data":{"op":"append_rules","rules":["r9"],"layers":["tmp"]}}]}`), nil
	})
	var asked []string
	f.env.decide = func(_ context.Context, id string) (agent.Decision, error) {
		asked = append(asked, f.env.s.Pending.Tool+" "+string(f.env.s.Pending.Args))
		return agent.Decision{Approved: false, Who: "cli"}, nil
	}
	if r := f.ask(t, "red for two clicks, then actually no"); r.Status != messages.AgentDone {
		t.Fatalf("reply %+v", r)
	}
	if got := strings.Join(asked, "\n"); got != `disableRules {"ids":["r1"]}` {
		t.Errorf("approvals asked for: %s", got)
	}
	if got := strings.Join(cmds, " "); got != "append_rules disable_rules enable_rules delete_layer" {
		t.Errorf("commands: %s", got)
	}
}
