package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/service"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/wire"
)

// doorbellToken is the token the doorbell webhook of realLight is made
// with, by the person.
const doorbellToken = "0123456789abcdef0123456789abcdef"

// realLight starts a light on an embedded NATS server with a JetStream
// journal on disk, served as the daemon serves it, and gives it a state,
// a tool, a function, a token-protected webhook source and a schedule,
// made by the light's own verbs.
func realLight(t *testing.T) wire.Light {
	t.Helper()
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	nc := b.Conn(t)
	j := b.Journal
	sys := actor.NewActorSystem()
	lp, err := light.Props(light.Config{Name: "k", Journal: j, Clock: clock.System(clock.Trust), Logf: t.Logf})
	if err != nil {
		t.Fatal(err)
	}
	pid, err := sys.Root.SpawnNamed(lp, "light-k")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	if err := light.WaitApplied(ctx, sys.Root, pid, j, "k"); err != nil {
		t.Fatal(err)
	}
	svc, err := service.Serve(nc, sys.Root, pid, "k", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	lw := wire.New(nc).Light("k")
	for _, c := range []struct{ verb, body string }{
		{messages.VerbCreateState, `{"name":"evening","r":255,"g":120,"b":0}`},
		{messages.VerbDefineTool, `{"name":"chime","code":"return 1"}`},
		{messages.VerbDefineFunction, `{"name":"is_late","code":"return true;"}`},
		{messages.VerbCreateSource, `{"name":"doorbell","type":"webhook","token":"` + doorbellToken + `","fires":"ring"}`},
		{messages.VerbCreateSchedule, `{"name":"dusk","cron":"0 19 * * *","tz":"UTC","fires":"dusk"}`},
	} {
		if _, err := lw.Command(ctx, c.verb, []byte(c.body)); err != nil {
			t.Fatalf("%s %s: %v", c.verb, c.body, err)
		}
	}
	return lw
}

// lightConfig is what the agent may change of the light, as JSON.
func lightConfig(t *testing.T, l agent.Light) (string, messages.GetReply) {
	t.Helper()
	b, err := l.Command(context.Background(), messages.VerbGet, []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	var m messages.GetReply
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for i := range m.Schedules {
		m.Schedules[i].Next = nil
	}
	cfg, _ := json.Marshal(map[string]any{"states": m.States, "tools": m.Tools, "functions": m.Functions, "sources": m.Sources, "schedules": m.Schedules})
	return string(cfg), m
}

// sourceDef returns the light's data source name.
func sourceDef(t *testing.T, m messages.GetReply, name string) *datasource.Def {
	t.Helper()
	for _, raw := range m.Sources {
		var d datasource.Def
		if err := d.UnmarshalJSON(raw); err != nil {
			t.Fatalf("source %s: %v", raw, err)
		}
		if d.Name == name {
			return &d
		}
	}
	return nil
}

// A create under a name the light has replaces the old one, as a delete
// and a create would: it needs what the delete tool needs (approval, or
// nothing at all when the operator forbids the delete), and the person
// is told what it replaces. Rejected, the old one stays as it was: the
// webhook keeps its token. A create under a new name, or over what the
// same request made, keeps its own tier.
func TestCreateOverExistingNeedsTheDeleteTier(t *testing.T) {
	type call struct{ tool, args string }
	tests := []struct {
		name    string
		calls   []call
		forbid  []string
		approve bool
		tiers   []string // of the calls, in order
		notes   []string // the approvals' texts, in order
		result  string   // in the model's view of the last call's result
		same    bool     // the light's configuration is unchanged
		check   func(t *testing.T, before, after messages.GetReply, r messages.AskReply)
	}{
		{name: "webhook over webhook, rejected",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"doorbell","type":"webhook","fires":"ring"}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing data source "doorbell"`},
			result: `rejected this call, which replaces the existing data source \"doorbell\"`, same: true,
			check: func(t *testing.T, _, after messages.GetReply, r messages.AskReply) {
				if d := sourceDef(t, after, "doorbell"); d == nil || d.TokenSHA256 != datasource.HashToken(doorbellToken) {
					t.Errorf("the doorbell after a rejected replacement: %+v", d)
				}
				if len(r.Webhooks) != 0 {
					t.Errorf("a token was handed out: %+v", r.Webhooks)
				}
			}},
		{name: "webhook over webhook, approved",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"doorbell","type":"webhook","fires":"ring"}`}}, approve: true,
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing data source "doorbell"`}, result: `"ok":true`,
			check: func(t *testing.T, _, after messages.GetReply, r messages.AskReply) {
				d := sourceDef(t, after, "doorbell")
				if d == nil || d.TokenSHA256 == datasource.HashToken(doorbellToken) || len(r.Webhooks) != 1 || d.TokenSHA256 != datasource.HashToken(r.Webhooks[0].Token) {
					t.Errorf("the doorbell after an approved replacement: %+v, handed out %+v", d, r.Webhooks)
				}
			}},
		{name: "nats source over webhook",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"doorbell","type":"nats","subject":"home.bell","fires":"ring"}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing data source "doorbell"`}, result: "rejected", same: true},
		{name: "state over state, rejected",
			calls: []call{{agent.ToolCreateState, `{"name":"evening","r":0,"g":0,"b":255}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing state "evening"`},
			result: `replaces the existing state \"evening\"`, same: true},
		{name: "states in a batch, one existing",
			calls: []call{{agent.ToolCreateState, `{"states":[{"name":"night","r":0,"g":0,"b":40},{"name":"evening","r":0,"g":0,"b":255}]}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing state "evening"`}, result: "rejected", same: true},
		{name: "state over state, the name spelled otherwise",
			calls: []call{{agent.ToolCreateState, `{"Name":"evening","r":0,"g":0,"b":255}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing state "evening"`}, result: "rejected", same: true},
		{name: "tool over tool, rejected",
			calls: []call{{agent.ToolDefineTool, `{"name":"chime","code":"return 2"}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing tool "chime"`},
			result: `replaces the existing tool \"chime\"`, same: true},
		{name: "function over function, rejected",
			calls: []call{{agent.ToolDefineFunction, `{"name":"is_late","code":"return false;"}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing function "is_late"`}, result: "rejected", same: true},
		{name: "schedule over schedule, rejected",
			calls: []call{{agent.ToolCreateSchedule, `{"name":"dusk","cron":"0 20 * * *","tz":"UTC","fires":"dusk"}`}},
			tiers: []string{messages.TierConfirm}, notes: []string{`replaces the existing schedule "dusk"`}, result: "rejected", same: true},
		{name: "new webhook",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"porch","type":"webhook","fires":"porch"}`}},
			tiers: []string{messages.TierAutonomous}, result: `"ok":true`,
			check: func(t *testing.T, _, after messages.GetReply, _ messages.AskReply) {
				if sourceDef(t, after, "porch") == nil || sourceDef(t, after, "doorbell").TokenSHA256 != datasource.HashToken(doorbellToken) {
					t.Errorf("sources after a new webhook: %s", after.Sources)
				}
			}},
		{name: "new state",
			calls: []call{{agent.ToolCreateState, `{"name":"night","r":0,"g":0,"b":40}`}},
			tiers: []string{messages.TierAutonomous}, result: `"ok":true`},
		{name: "new function",
			calls: []call{{agent.ToolDefineFunction, `{"name":"is_early","code":"return false;"}`}},
			tiers: []string{messages.TierAutonomous}, result: `"ok":true`},
		{name: "new tool keeps its own tier",
			calls: []call{{agent.ToolDefineTool, `{"name":"bell","code":"return 2"}`}}, approve: true,
			tiers: []string{messages.TierConfirm}, notes: []string{""}, result: `"ok":true`},
		{name: "over what the same request made",
			calls: []call{{agent.ToolCreateState, `{"name":"night","r":0,"g":0,"b":40}`}, {agent.ToolCreateState, `{"name":"night","r":0,"g":0,"b":60}`}},
			tiers: []string{messages.TierAutonomous, messages.TierAutonomous}, result: `"ok":true`},
		{name: "the operator forbids the delete",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"doorbell","type":"webhook","fires":"ring"}`}}, forbid: []string{agent.ToolDeleteDataSource},
			tiers: []string{messages.TierForbidden}, result: `replaces the existing data source \"doorbell\", a deletion the operator does not allow`, same: true},
		{name: "the operator forbids the delete, a new name",
			calls: []call{{agent.ToolCreateDataSource, `{"name":"porch","type":"webhook","fires":"porch"}`}}, forbid: []string{agent.ToolDeleteDataSource},
			tiers: []string{messages.TierAutonomous}, result: `"ok":true`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lw := realLight(t)
			var calls []agenttest.Call
			for _, c := range tt.calls {
				calls = append(calls, agenttest.Call{Name: c.tool, Args: c.args})
			}
			last := fmt.Sprintf("call_1_%d", len(tt.calls)-1)
			srv := agenttest.New(agenttest.Step{Calls: calls},
				agenttest.Step{Calls: []agenttest.Call{{Name: agent.ToolDone, Args: `{"message":"ok"}`}}, Expect: func(r agenttest.ChatRequest) error {
					if res := r.ToolResult(last); !strings.Contains(res, tt.result) {
						return fmt.Errorf("the model read %s, want it to hold %s", res, tt.result)
					}
					return nil
				}})
			t.Cleanup(srv.Close)
			tools := &agent.Tools{Light: lw, Forbidden: tt.forbid}
			loop := &agent.Loop{Model: agent.NewOpenAI(agent.ModelConfig{BaseURL: srv.BaseURL(), Model: "scripted", MaxRetries: -1}), Tools: tools, CallTimeout: 5 * time.Second}
			env := &memEnv{s: agent.NewState("default"), decide: func(context.Context, string) (agent.Decision, error) {
				return agent.Decision{Approved: tt.approve, Who: "test"}, nil
			}}
			cfgBefore, before := lightConfig(t, lw)
			r := loop.Ask(context.Background(), env.s, env, "do it", "test")
			if err := srv.Err(); err != nil {
				t.Fatal(err)
			}
			if r.Status != messages.AgentDone {
				t.Fatalf("reply %+v", r)
			}
			var tiers []string
			for _, c := range r.Calls[:len(r.Calls)-1] { // without done
				tiers = append(tiers, c.Tier)
			}
			if fmt.Sprint(tiers) != fmt.Sprint(tt.tiers) {
				t.Errorf("tiers %v, want %v", tiers, tt.tiers)
			}
			var notes []string
			for _, ev := range env.events {
				if ev.Kind == messages.AgentKindApproval {
					notes = append(notes, ev.Text)
				}
			}
			if fmt.Sprintf("%q", notes) != fmt.Sprintf("%q", tt.notes) {
				t.Errorf("approvals say %q, want %q", notes, tt.notes)
			}
			cfgAfter, after := lightConfig(t, lw)
			if tt.same && cfgAfter != cfgBefore {
				t.Errorf("the light changed:\n%s\nwas\n%s", cfgAfter, cfgBefore)
			}
			if !tt.same && cfgAfter == cfgBefore {
				t.Errorf("the light did not change")
			}
			if tt.check != nil {
				tt.check(t, before, after, r)
			}
		})
	}
}

// What Permission says of a create depends on what the light has and on
// what the request made so far: a failed call made nothing, a light that
// cannot be read may have one, and a custom transition is replaced only
// by another.
func TestReplacePermission(t *testing.T) {
	var down bool
	l := lightFunc(func(verb string, _ []byte) ([]byte, error) {
		if down {
			return nil, &wire.Error{Code: 503, Msg: "no light"}
		}
		return json.Marshal(messages.GetReply{OK: true, States: []messages.State{{Name: "off"}},
			Sources: []json.RawMessage{json.RawMessage(`{"name":"door_open","type":"transition","interval_ms":5000,"fetch":{"tool":"door_open"},"fires":"door_open"}`)},
			Tools:   []messages.Tool{{Name: "door_open", Code: "return true"}}})
	})
	tools := &agent.Tools{Light: l}
	made := messages.ToolStep{Tool: agent.ToolCreateState, OK: true, Args: json.RawMessage(`{"name":"off","r":1,"g":1,"b":1}`)}
	failed := messages.ToolStep{Tool: agent.ToolCreateState, Args: json.RawMessage(`{"name":"off","r":2,"g":2,"b":2}`)}
	tests := []struct {
		tool, args string
		done       []messages.ToolStep
		down       bool
		tier, note string
	}{
		{agent.ToolCreateState, `{"name":"off","r":0,"g":0,"b":0}`, nil, false, messages.TierConfirm, `replaces the existing state "off"`},
		{agent.ToolCreateState, `{"name":"off","r":0,"g":0,"b":0}`, []messages.ToolStep{made}, false, messages.TierAutonomous, ""},
		{agent.ToolCreateState, `{"name":"off","r":0,"g":0,"b":0}`, []messages.ToolStep{failed}, false, messages.TierConfirm, `replaces the existing state "off"`},
		{agent.ToolCreateState, `{"name":"red","r":255,"g":0,"b":0}`, nil, true, messages.TierConfirm, "may replace an existing state"},
		{agent.ToolDefineTransition, `{"name":"door_open","code":"return false","poll_interval_ms":5000}`, nil, false, messages.TierConfirm, `replaces the existing custom transition "door_open"`},
		{agent.ToolDefineTransition, `{"name":"door_shut","code":"return false","poll_interval_ms":5000}`, nil, false, messages.TierConfirm, ""},
		{agent.ToolDefineTool, `{"name":"door_open","code":"return 1"}`, nil, false, messages.TierConfirm, `replaces the existing tool "door_open"`},
		{agent.ToolCreateDataSource, `{"name":"door_open","type":"nats","subject":"d","fires":"d"}`, nil, false, messages.TierConfirm, `replaces the existing data source "door_open"`},
		{agent.ToolCreateState, `{"name":"red","Name":"off","r":0,"g":0,"b":0}`, nil, false, messages.TierConfirm, `replaces the existing state "off"`},
		{agent.ToolCreateState, `{"states":[{"NAME":"off"}]}`, nil, false, messages.TierConfirm, `replaces the existing state "off"`},
		{agent.ToolSetState, `{"name":"off"}`, nil, false, messages.TierAutonomous, ""},
	}
	for _, tt := range tests {
		down = tt.down
		tier, note := tools.Permission(context.Background(), tt.tool, json.RawMessage(tt.args), tt.done)
		if tier != tt.tier || !strings.HasPrefix(note, tt.note) || (tt.note == "") != (note == "") {
			t.Errorf("%s %s after %d calls (light down %v): %s %q, want %s %q", tt.tool, tt.args, len(tt.done), tt.down, tier, note, tt.tier, tt.note)
		}
	}
}
