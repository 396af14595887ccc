package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// fakeLight answers the light's commands from memory. The real light is
// exercised by the end-to-end tests in cmd/lumen; here the loop's own
// logic is under test.
type fakeLight struct {
	mu    sync.Mutex
	cmds  []string
	model messages.GetReply
}

func newFakeLight() *fakeLight {
	return &fakeLight{model: messages.GetReply{OK: true, Light: "demo", State: "off",
		States: []messages.State{{Name: "off"}}, Vars: map[string]json.RawMessage{}}}
}

func (f *fakeLight) Command(_ context.Context, verb string, body []byte) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cmds = append(f.cmds, verb+" "+string(body))
	switch verb {
	case messages.VerbGet:
		return json.Marshal(f.model)
	case messages.VerbCreateState:
		var s messages.State
		if err := json.Unmarshal(body, &s); err != nil {
			return nil, &wire.Error{Code: 400, Msg: "create_state: " + err.Error()}
		}
		f.model.States = append(f.model.States, s)
	case messages.VerbAppendRules:
		var r messages.RulesRequest
		if err := json.Unmarshal(body, &r); err != nil {
			return nil, &wire.Error{Code: 400, Msg: "append_rules: " + err.Error()}
		}
		for _, rule := range r.Rules {
			if !f.hasState(rule.To) {
				return nil, &wire.Error{Code: 404, Msg: fmt.Sprintf("rule targets unknown state %q; create it first", rule.To)}
			}
		}
		f.model.Rules = append(f.model.Rules, r.Rules...)
	case messages.VerbSetState:
		var n messages.NameRequest
		_ = json.Unmarshal(body, &n)
		if !f.hasState(n.Name) {
			return nil, &wire.Error{Code: 404, Msg: fmt.Sprintf("no state %q", n.Name)}
		}
		f.model.State = n.Name
	case messages.VerbPower:
		var p messages.PowerRequest
		_ = json.Unmarshal(body, &p)
		if p.On != nil && !*p.On {
			f.model.State = "off"
		}
	case messages.VerbLearnIntent:
		var in messages.LearnIntentRequest
		if err := json.Unmarshal(body, &in); err != nil {
			return nil, &wire.Error{Code: 400, Msg: "learn_intent: " + err.Error()}
		}
		f.model.Intents = append(f.model.Intents, messages.Intent{Phrase: in.Phrase, Verb: in.Verb, Arg: in.Arg})
	case messages.VerbWhatIf:
		w := messages.WhatIfReply{OK: true, Light: "demo", Replayed: 40, Differ: 7}
		for i := range 7 {
			w.Differences = append(w.Differences, messages.Difference{Seq: uint64(10 + i), Recorded: "off", Proposed: "red"})
		}
		return json.Marshal(w)
	}
	return []byte(`{"ok":true,"state":"` + f.model.State + `","changed":true,"outputs":[{"big":"noise"}]}`), nil
}

func (f *fakeLight) hasState(name string) bool {
	for _, s := range f.model.States {
		if s.Name == name {
			return true
		}
	}
	return false
}

func (f *fakeLight) commands(verb string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.cmds {
		if strings.HasPrefix(c, verb+" ") {
			out = append(out, c)
		}
	}
	return out
}

// memEnv journals to memory; crashAt makes Record fail from that step on,
// as a SIGKILL would.
type memEnv struct {
	s       *agent.State
	events  []messages.OutAgentData
	crashAt int
	decide  func(ctx context.Context, id string) (agent.Decision, error)
}

func (e *memEnv) Record(_ context.Context, ev messages.OutAgentData) error {
	ev.Session, ev.Step = e.s.ID, e.s.Step+1
	if e.crashAt > 0 && ev.Step >= e.crashAt {
		return errors.New("crashed")
	}
	b, _ := json.Marshal(ev) // what the journal stores
	var stored messages.OutAgentData
	if err := json.Unmarshal(b, &stored); err != nil {
		return err
	}
	e.events = append(e.events, stored)
	e.s.Apply(stored, time.Now())
	return nil
}

func (e *memEnv) Decide(ctx context.Context, id string) (agent.Decision, error) {
	if e.decide == nil {
		return agent.Decision{}, errors.New("no approvals in this test")
	}
	return e.decide(ctx, id)
}

func (e *memEnv) kinds() string {
	var k []string
	for _, ev := range e.events {
		k = append(k, ev.Kind)
	}
	return strings.Join(k, " ")
}

type fixture struct {
	srv   *agenttest.Server
	light *fakeLight
	loop  *agent.Loop
	env   *memEnv
}

func newFixture(t *testing.T, cfg agent.ModelConfig, script ...agenttest.Step) *fixture {
	t.Helper()
	srv := agenttest.New(script...)
	t.Cleanup(srv.Close)
	cfg.BaseURL, cfg.Model = srv.BaseURL(), "scripted"
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = -1 // no retries: each scripted failure is seen once
	}
	light := newFakeLight()
	tools := &agent.Tools{Light: light}
	loop := &agent.Loop{Model: agent.NewOpenAI(cfg), Tools: tools, Prompt: agent.LightPrompt("demo", tools), CallTimeout: 5 * time.Second}
	return &fixture{srv: srv, light: light, loop: loop, env: &memEnv{s: agent.NewState("default")}}
}

func (f *fixture) ask(t *testing.T, text string) messages.AskReply {
	t.Helper()
	r := f.loop.Ask(context.Background(), f.env.s, f.env, text, "test")
	if err := f.srv.Err(); err != nil {
		t.Fatal(err)
	}
	return r
}

func call(name, args string) agenttest.Call { return agenttest.Call{Name: name, Args: args} }

// The seed's counter flow: look up the pattern, create the state and the
// rules in one turn (executed in order), finish.
func TestCounterFlow(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			f := newFixture(t, agent.ModelConfig{Stream: stream},
				agenttest.Step{Calls: []agenttest.Call{call("getPattern", `{"name":"counter"}`)},
					Expect: func(r agenttest.ChatRequest) error {
						if len(r.Tools) < 15 || r.Messages[0].Role != "system" || !strings.Contains(r.Messages[0].Text(), "Current state: off") {
							return fmt.Errorf("first request: %d tools, system %q", len(r.Tools), r.Messages[0].Text())
						}
						if r.Stream != stream {
							return fmt.Errorf("stream %v", r.Stream)
						}
						return nil
					}},
				agenttest.Step{Calls: []agenttest.Call{
					call("createState", `{"name":"red","r":255,"g":0,"b":0}`),
					call("appendRules", `{"rules":[{"from":"*","on":"button_click","to":"red","condition":"getData('counter') === undefined","action":"setData('counter', 2)","priority":10}]}`),
				}, Expect: func(r agenttest.ChatRequest) error {
					if res := r.Last().Text(); !strings.Contains(res, `"template"`) || !strings.Contains(res, "next 3 clicks") {
						return fmt.Errorf("the pattern did not reach the model: %s", res)
					}
					return nil
				}},
				agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"The next 3 clicks show red."}`)},
					Expect: func(r agenttest.ChatRequest) error {
						if !strings.Contains(r.Messages[0].Text(), `"red"`) {
							return errors.New("the prompt does not show the new state")
						}
						n := len(r.Messages)
						if r.Messages[n-2].Role != "tool" || r.Messages[n-1].Role != "tool" || strings.Contains(r.Messages[n-1].Text(), "noise") {
							return fmt.Errorf("want two trimmed tool results last, got %+v", r.Messages[n-2:])
						}
						return nil
					}},
			)
			r := f.ask(t, "next 3 clicks red, then back to normal")
			if r.Status != messages.AgentDone || r.Answer != "The next 3 clicks show red." || r.Steps != 3 {
				t.Fatalf("reply %+v", r)
			}
			if got := f.light.commands("create_state"); len(got) != 1 {
				t.Fatalf("create_state: %v", got)
			}
			cmds := strings.Join(f.light.cmds, "\n")
			if strings.Index(cmds, "create_state") > strings.Index(cmds, "append_rules") {
				t.Fatalf("calls of one turn ran out of order:\n%s", cmds)
			}
			if len(r.Calls) != 4 || !r.Calls[1].OK || r.Calls[1].Tier != messages.TierAutonomous {
				t.Fatalf("calls %+v", r.Calls)
			}
			if want := "ask model tool model tool call tool model tool end"; f.env.kinds() != want {
				t.Fatalf("journal %s, want %s", f.env.kinds(), want)
			}
		})
	}
}

// Garbage arguments and a tool error go back to the model, which
// corrects itself; an unknown tool too.
func TestToolErrorsGoBackToTheModel(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("createState", `{"name":"red","r":`), call("fly", `{}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("appendRules", `{"rules":[{"from":"off","on":"button_click","to":"red"}]}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.ToolResult("call_1_0"); !strings.Contains(res, "not a JSON object") || !strings.Contains(res, `"ok":false`) {
					return fmt.Errorf("malformed arguments: %s", res)
				}
				if res := r.ToolResult("call_1_1"); !strings.Contains(res, `there is no tool \"fly\"`) {
					return fmt.Errorf("unknown tool: %s", res)
				}
				return nil
			}},
		agenttest.Step{Calls: []agenttest.Call{call("createState", `{"name":"red","r":255,"g":0,"b":0}`), call("appendRules", `{"rules":[{"from":"off","on":"button_click","to":"red"}]}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.Last().Text(); !strings.Contains(res, `unknown state \"red\"`) {
					return fmt.Errorf("light's refusal: %s", res)
				}
				return nil
			}},
		agenttest.Step{Content: "Clicking turns it red now."},
	)
	r := f.ask(t, "click for red")
	if r.Status != messages.AgentDone || r.Answer != "Clicking turns it red now." {
		t.Fatalf("reply %+v", r)
	}
	if n := len(f.light.commands("append_rules")); n != 2 {
		t.Fatalf("append_rules sent %d times", n)
	}
	if r.Calls[0].OK || !json.Valid(r.Calls[0].Args) {
		t.Fatalf("malformed call journaled as %+v", r.Calls[0])
	}
}

// The same call with the same arguments twice in one request is blocked,
// with an explanation; a read after a change is allowed again.
func TestDuplicateCallBlocked(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("getStates", `{}`), call("createState", `{"name":"red","r":255,"g":0,"b":0}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("createState", `{"g":0, "name":"red","r":255,"b":0}`), call("getStates", `{}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"ok"}`)}, Expect: func(r agenttest.ChatRequest) error {
			n := len(r.Messages)
			if res := r.Messages[n-2].Text(); !strings.Contains(res, "blocked: you already called createState") {
				return fmt.Errorf("duplicate not blocked: %s", res)
			}
			if res := r.Messages[n-1].Text(); !strings.Contains(res, `"red"`) || strings.Contains(res, "blocked") {
				return fmt.Errorf("a read after a change must run: %s", res)
			}
			return nil
		}},
	)
	if r := f.ask(t, "create a state red"); r.Status != messages.AgentDone || !r.Calls[2].Blocked {
		t.Fatalf("reply %+v", r)
	}
	if n := len(f.light.commands("create_state")); n != 1 {
		t.Fatalf("create_state sent %d times", n)
	}
}

// A model that never calls done is stopped after MaxTurns with a clear
// answer.
func TestMaxTurns(t *testing.T) {
	for _, tc := range []struct {
		set, want int // set 0: the default
	}{{4, 4}, {0, agent.DefaultMaxTurns}} {
		t.Run(fmt.Sprint(tc.want), func(t *testing.T) {
			n := 0
			f := newFixture(t, agent.ModelConfig{}, agenttest.Step{Repeat: true, Func: func(agenttest.ChatRequest) agenttest.Step {
				n++
				return agenttest.Step{Calls: []agenttest.Call{call("getState", fmt.Sprintf(`{"name":"s%d"}`, n))}}
			}})
			f.loop.MaxTurns = tc.set
			r := f.ask(t, "think forever")
			if r.Status != messages.AgentStopped || !strings.Contains(r.Answer, fmt.Sprintf("stopped after %d steps", tc.want)) || !strings.Contains(r.Answer, "Nothing was changed") {
				t.Fatalf("reply %+v", r)
			}
			if got := len(f.srv.Requests()); got != tc.want {
				t.Fatalf("%d model calls, want %d", got, tc.want)
			}
		})
	}
}

// API failures end the request with a short spoken-style answer.
func TestModelFailures(t *testing.T) {
	cases := []struct {
		name string
		step agenttest.Step
		want string
	}{
		{"500", agenttest.Step{Status: 500}, "failed (HTTP 500)"},
		{"401", agenttest.Step{Status: 401}, "refused the API key"},
		{"hang", agenttest.Step{Hang: true}, "did not answer within 300ms"},
		{"garbage", agenttest.Step{Garbage: true}, "could not reach the language model"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, agent.ModelConfig{},
				agenttest.Step{Calls: []agenttest.Call{call("createState", `{"name":"red","r":255,"g":0,"b":0}`)}}, tc.step)
			f.loop.CallTimeout = 300 * time.Millisecond
			r := f.ask(t, "make a red state")
			if r.Status != messages.AgentFailed || !strings.Contains(r.Answer, tc.want) || !strings.Contains(r.Answer, "What I did so far stays (createState)") {
				t.Fatalf("reply %+v", r)
			}
		})
	}
}

// A new input cancels the request in flight at once: the loop returns
// cancelled without another model call, and the next request's
// conversation has a result for every call.
func TestCancelMidTurn(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("getStates", `{}`)}},
		agenttest.Step{Hang: true},
		agenttest.Step{Content: "Fine.", Expect: func(r agenttest.ChatRequest) error {
			for i, m := range r.Messages {
				if m.Role == "assistant" && len(m.ToolCalls) > 0 && (i+1 >= len(r.Messages) || r.Messages[i+1].Role != "tool") {
					return fmt.Errorf("call without result at %d", i)
				}
			}
			return nil
		}},
	)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan messages.AskReply)
	go func() { done <- f.loop.Ask(ctx, f.env.s, f.env, "slow", "test") }()
	lumentest.Within(5*time.Second, func() bool { return len(f.srv.Requests()) >= 2 })
	start := time.Now()
	cancel()
	r := <-done
	if r.Status != messages.AgentCancelled || r.Answer != "" || time.Since(start) > time.Second {
		t.Fatalf("reply %+v after %v", r, time.Since(start))
	}
	if r := f.ask(t, "never mind"); r.Status != messages.AgentDone {
		t.Fatalf("next request %+v", r)
	}
}

// Confirm-tier calls wait for a decision; a rejection goes back to the
// model; forbidden tools never run.
func TestPermissionTiers(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{
			call("defineTool", `{"name":"w","code":"return 1","hosts":["api.example.com"]}`),
			call("deleteRules", `{"ids":["r1"]}`),
			call("setState", `{"name":"off"}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"ok"}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.ToolResult("call_1_1"); !strings.Contains(res, "rejected") {
				return fmt.Errorf("rejection: %s", res)
			}
			if res := r.ToolResult("call_1_2"); !strings.Contains(res, "does not allow setState") {
				return fmt.Errorf("forbidden: %s", res)
			}
			return nil
		}},
	)
	f.loop.Tools.Forbidden = []string{"setState"}
	var asked []string
	f.env.decide = func(_ context.Context, id string) (agent.Decision, error) {
		asked = append(asked, id)
		return agent.Decision{Approved: len(asked) == 1, Who: "button"}, nil
	}
	r := f.ask(t, "do things")
	if strings.Join(asked, ",") != "default-3,default-6" {
		t.Fatalf("approvals asked: %v (journal %s)", asked, f.env.kinds())
	}
	c := r.Calls
	if len(c) != 4 || c[0].Tier != "confirm" || c[0].ApprovedBy != "button" || c[1].RejectedBy != "button" || c[1].OK || c[2].Tier != "forbidden" {
		t.Fatalf("calls %+v", c)
	}
	if len(f.light.commands("delete_rules")) != 0 || len(f.light.commands("set_state")) != 0 || len(f.light.commands("define_tool")) != 1 {
		t.Fatalf("commands %v", f.light.cmds)
	}
}

// A crash while an approval is pending: the session folded from its
// journal waits for the same approval, does not ask the model again for
// the turn it has, runs the call once approved and carries on. A call
// journaled as started without a result is reported as interrupted, not
// run again.
func TestResumeAfterCrash(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{
			call("createState", `{"name":"red","r":255,"g":0,"b":0}`),
			call("defineTool", `{"name":"w","code":"return 1","hosts":["api.example.com"]}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"ready"}`)}},
	)
	blocked := make(chan struct{})
	f.env.decide = func(ctx context.Context, _ string) (agent.Decision, error) {
		close(blocked)
		<-ctx.Done()
		return agent.Decision{}, ctx.Err()
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-blocked; f.env.crashAt = f.env.s.Step + 1; cancel() }()
	_ = f.loop.Ask(ctx, f.env.s, f.env, "tool please", "test")

	// Restart: fold the journal into a fresh session.
	s := agent.NewState("default")
	for _, ev := range f.env.events {
		s.Apply(ev, time.Now())
	}
	if s.Status != messages.AgentPending || s.Pending == nil || s.Pending.Tool != "defineTool" {
		t.Fatalf("restored %+v", s)
	}
	env := &memEnv{s: s, events: f.env.events, decide: func(_ context.Context, id string) (agent.Decision, error) {
		if id != "default-4" {
			return agent.Decision{}, fmt.Errorf("approval id %s", id)
		}
		return agent.Decision{Approved: true, Who: "cli"}, nil
	}}
	r := f.loop.Continue(context.Background(), s, env)
	if r.Status != messages.AgentDone || r.Answer != "ready" {
		t.Fatalf("reply %+v", r)
	}
	if got := len(f.srv.Requests()); got != 2 {
		t.Fatalf("%d model calls, want 2", got)
	}
	if len(f.light.commands("define_tool")) != 1 || len(f.light.commands("create_state")) != 1 {
		t.Fatalf("commands %v", f.light.cmds)
	}

	// Interrupted: a change journaled as started, never finished.
	s2 := agent.NewState("x")
	for _, ev := range []messages.OutAgentData{
		{Step: 1, Kind: "ask", Text: "red"},
		{Step: 2, Kind: "model", Message: &messages.AgentMessage{Role: "assistant", ToolCalls: []messages.AgentToolCall{{ID: "c1", Name: "appendRules", Args: `{"rules":[]}`}}}},
		{Step: 3, Kind: "call", Call: &messages.ToolStep{ID: "c1", Tool: "appendRules"}},
	} {
		s2.Apply(ev, time.Now())
	}
	f.srv.Push(agenttest.Step{Calls: []agenttest.Call{call("done", `{"message":"checked"}`)}, Expect: func(r agenttest.ChatRequest) error {
		if res := r.ToolResult("c1"); !strings.Contains(res, "interrupted by a restart") {
			return fmt.Errorf("interrupted call: %s", res)
		}
		return nil
	}})
	if r := f.loop.Continue(context.Background(), s2, &memEnv{s: s2}); r.Status != messages.AgentDone {
		t.Fatalf("reply %+v", r)
	}
	if err := f.srv.Err(); err != nil {
		t.Fatal(err)
	}
	if len(f.light.commands("append_rules")) != 0 {
		t.Fatalf("an interrupted call ran again: %v", f.light.cmds)
	}
}

// A data source reaching a host no source reaches yet needs approval;
// one more source on a known host does not.
func TestSourceTier(t *testing.T) {
	light := newFakeLight()
	light.model.Tools = []messages.Tool{{Name: "weather", Hosts: []string{"api.weather.example"}}}
	tools := &agent.Tools{Light: light}
	src := `{"name":"w","interval_ms":60000,"fetch":{"tool":"weather"},"store":{"t":"result.t"}}`
	if tier := tools.Tier(context.Background(), "createDataSource", json.RawMessage(src), nil); tier != messages.TierConfirm {
		t.Fatalf("new host: %s", tier)
	}
	light.model.Sources = []json.RawMessage{json.RawMessage(src)}
	if tier := tools.Tier(context.Background(), "createDataSource", json.RawMessage(`{"name":"w2","fetch":{"tool":"weather"}}`), nil); tier != messages.TierAutonomous {
		t.Fatalf("known host: %s", tier)
	}
	if tier := tools.Tier(context.Background(), "createDataSource", json.RawMessage(`{"name":"w3","fetch":{"tool":"fetch_json","args":{"url":"https://other.example/x"}}}`), nil); tier != messages.TierConfirm {
		t.Fatalf("built-in fetch to a new host: %s", tier)
	}
	if tier := tools.Tier(context.Background(), "createDataSource", json.RawMessage(`{"name":"bell","type":"mqtt","topic":"home/bell"}`), nil); tier != messages.TierAutonomous {
		t.Fatalf("a push source reaches no host: %s", tier)
	}
}

// A test call to a host that neither the light's sources nor its tools
// (approved when defined) reach needs approval, as a source would.
func TestTestToolTier(t *testing.T) {
	light := newFakeLight()
	light.model.Tools = []messages.Tool{{Name: "weather", Hosts: []string{"api.weather.example"}}, {Name: "dice"}}
	light.model.Sources = []json.RawMessage{json.RawMessage(`{"name":"s","fetch":{"tool":"fetch_json","args":{"url":"https://known.example/a"}}}`)}
	tools := &agent.Tools{Light: light}
	for _, tc := range []struct{ args, want string }{
		{`{"name":"weather"}`, messages.TierAutonomous},
		{`{"name":"dice","args":{}}`, messages.TierAutonomous},
		{`{"name":"fetch_json","args":{"url":"https://known.example/b"}}`, messages.TierAutonomous},
		{`{"name":"fetch_json","args":{"url":"https://api.weather.example/now"}}`, messages.TierAutonomous},
		{`{"name":"fetch_json","args":{"url":"https://new.example/x"}}`, messages.TierConfirm},
		{`{"name":"fetch_text","args":{"url":"http://203.0.113.5/upload"}}`, messages.TierConfirm},
		{`not json`, messages.TierConfirm},
	} {
		if tier := tools.Tier(context.Background(), "testTool", json.RawMessage(tc.args), nil); tier != tc.want {
			t.Errorf("testTool %s: tier %s, want %s", tc.args, tier, tc.want)
		}
	}
}

// A call marked speak_directly answers by itself: no further model call.
// When it fails, the model hears about it as usual.
func TestSpeakDirectly(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("setState", `{"name":"red","speak_directly":true}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("createState", `{"name":"red","r":255,"g":0,"b":0}`), call("setState", `{"name":"red","speak_directly":true}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if !strings.Contains(r.Last().Text(), `no state \"red\"`) {
					return fmt.Errorf("the failure did not go back: %s", r.Last().Text())
				}
				return nil
			}},
	)
	r := f.ask(t, "make a red state")
	if r.Status != messages.AgentDone || r.Answer != "The light is red now." || len(f.srv.Requests()) != 2 {
		t.Fatalf("reply %+v after %d model calls", r, len(f.srv.Requests()))
	}
	for _, c := range f.light.commands("set_state") {
		if strings.Contains(c, "speak_directly") {
			t.Fatalf("the flag reached the light: %s", c)
		}
	}
}

// A session's snapshot decodes to the same state, so a session restored
// from it (after the journal's retention purged its events) is the one
// that was saved.
func TestStateSnapshotRoundTrip(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{},
		agenttest.Step{Calls: []agenttest.Call{call("getStates", `{}`), call("createState", `{"name":"red","r":255,"g":0,"b":0}`)}},
		agenttest.Step{Calls: []agenttest.Call{call("createState", `{"name":"red","r":255,"g":0,"b":0}`), call("done", `{"message":"ok"}`)}},
	)
	f.ask(t, "make a red state")
	b, err := json.Marshal(f.env.s)
	if err != nil {
		t.Fatal(err)
	}
	var back agent.State
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if string(again) != string(b) || back.Seen == nil || len(back.Calls) != 4 || back.Status != "done" {
		t.Fatalf("round trip:\n%s\n%s", b, again)
	}
}

// A server that reuses call ids every turn (some local servers do) still
// gets each result paired with its own call.
func TestReusedCallIDs(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{}, agenttest.Step{Calls: []agenttest.Call{{Name: "getStates", Args: `{}`, ID: "call_0"}}},
		agenttest.Step{Calls: []agenttest.Call{{Name: "getRules", Args: `{}`, ID: "call_0"}}, Expect: func(r agenttest.ChatRequest) error {
			if n := len(r.Messages); r.Messages[n-1].Role != "tool" || !strings.Contains(r.Messages[n-1].Text(), `"current"`) {
				return fmt.Errorf("getStates' result: %+v", r.Messages[n-1])
			}
			return nil
		}},
		agenttest.Step{Calls: []agenttest.Call{{Name: "done", Args: `{"message":"ok"}`, ID: "call_0"}}, Expect: func(r agenttest.ChatRequest) error {
			if !strings.Contains(r.Last().Text(), `"rules"`) {
				return fmt.Errorf("getRules' result: %s", r.Last().Text())
			}
			return nil
		}})
	r := f.ask(t, "look")
	if r.Status != messages.AgentDone || len(r.Calls) != 3 || r.Calls[1].ID == r.Calls[0].ID || r.Calls[2].ID == r.Calls[1].ID {
		t.Fatalf("reply %+v", r)
	}
}

// simulate sends the current configuration with the proposed states and
// rules, minus the rules left out, as a whatif, and gives the model the
// count and the first differences.
func TestSimulate(t *testing.T) {
	light := newFakeLight()
	light.model.Rules = []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "off", Enabled: true},
		{ID: "r2", From: "*", On: "button_hold", To: "off", Enabled: true}}
	tools := &agent.Tools{Light: light}
	res, err := tools.Run(context.Background(), agent.ToolSimulate, json.RawMessage(`{"states":[{"name":"red","r":255,"g":0,"b":0}],
		"rules":[{"from":"off","on":"button_click","to":"red"}],"delete_rules":["r1"],"since":"2h"}`))
	if err != nil {
		t.Fatal(err)
	}
	var w messages.WhatIfReply
	if err := json.Unmarshal(res, &w); err != nil || w.Differ != 7 || len(w.Differences) != 5 {
		t.Errorf("simulate answered %s (%v)", res, err)
	}
	sent := light.commands(messages.VerbWhatIf)
	if len(sent) != 1 {
		t.Fatalf("whatif sent %d times", len(sent))
	}
	var req messages.WhatIfRequest
	if err := json.Unmarshal([]byte(strings.TrimPrefix(sent[0], messages.VerbWhatIf+" ")), &req); err != nil {
		t.Fatal(err)
	}
	var cfg messages.ApplyRequest
	if err := json.Unmarshal(req.Config, &cfg); err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, r := range cfg.Rules {
		rules = append(rules, r.ID+":"+r.From+">"+r.To)
	}
	if req.Since != "2h" || len(cfg.States) != 2 || fmt.Sprint(rules) != "[r2:*>off :off>red]" || cfg.Vars != nil {
		t.Errorf("whatif request: since %q, %d states, rules %v", req.Since, len(cfg.States), rules)
	}
	if n := len(light.commands(messages.VerbAppendRules)); n != 0 {
		t.Errorf("simulate changed the light: %d append_rules", n)
	}
}
