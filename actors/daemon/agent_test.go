package daemon_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// The agent in process, against a scripted OpenAI-compatible model
// (agenttest): what it does to the light, its approvals, its faults.

func agentScripted(name, args string) agenttest.Call { return agenttest.Call{Name: name, Args: args} }

// agentStart runs lights with the agent on srv's scripted model; change,
// if not nil, changes the configuration further.
func agentStart(t *testing.T, srv *agenttest.Server, change func(*daemon.Config), lights ...string) *daemon.Daemon {
	t.Helper()
	return startWith(t, func(c *daemon.Config) {
		if srv != nil {
			c.Agent.BaseURL, c.Agent.Model = srv.BaseURL(), "scripted"
		}
		if change != nil {
			change(c)
		}
	}, lights...)
}

// agentReply is a reply with its error code and description ("" for a
// success).
type agentReply struct {
	Body       map[string]any
	Raw        []byte
	Code, Desc string
}

// agentCall sends body to lumen.<light>.cmd.<verb>, waiting up to wait
// (an ask may take long).
func agentCall(t *testing.T, nc *nats.Conn, light, verb, body string, wait time.Duration) agentReply {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), wait)
	if err != nil {
		t.Fatalf("%s on %s: %v", verb, light, err)
	}
	r := agentReply{Raw: m.Data, Code: m.Header.Get("Nats-Service-Error-Code"), Desc: m.Header.Get("Nats-Service-Error")}
	_ = json.Unmarshal(m.Data, &r.Body)
	return r
}

// agentOK is agentCall for a reply that must be a success.
func agentOK(t *testing.T, nc *nats.Conn, light, verb, body string) agentReply {
	t.Helper()
	r := agentCall(t, nc, light, verb, body, 2*time.Minute)
	if r.Code != "" || r.Body["ok"] != true {
		t.Fatalf("%s %s on %s: %s %s %s", verb, body, light, r.Code, r.Desc, r.Raw)
	}
	return r
}

// agentPress presses the demo light's simulated button as lumen press
// does (click or hold), its edges on clk: through debounce and gesture
// detection like a real button's.
func agentPress(t *testing.T, nc *nats.Conn, clk *clocktest.Clock, gesture string) {
	t.Helper()
	edge := func(e string) { agentOK(t, nc, "demo", messages.VerbButton, fmt.Sprintf(`{"edge":%q}`, e)) }
	edge("down")
	switch gesture {
	case "click":
		clk.Advance(40 * time.Millisecond)
	case "hold":
		clk.Advance(time.Second)
	default:
		t.Fatalf("no gesture %s", gesture)
	}
	edge("up")
	clk.Advance(500 * time.Millisecond) // past a double-click window
}

// The counter flow: "next 3 clicks random colors, then back to normal"
// asked over NATS, then four real clicks of the simulated button. The
// history names the agent's session and step, why the button and the
// rule the agent added; replay rebuilds the light without calling the
// model; the session keeps its transcript.
func TestAgentCounterFlow(t *testing.T) {
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("getPattern", `{"name":"counter"}`)}},
		agenttest.Step{Calls: []agenttest.Call{
			agentScripted("createState", `{"name":"party","r":"random()*255","g":"random()*255","b":"random()*255"}`),
			agentScripted("appendRules", `{"rules":[
				{"from":"*","on":"button_click","to":"party","condition":"getData('clicks') === undefined","action":"setData('clicks', 2)","priority":10},
				{"from":"party","on":"button_click","to":"party","condition":"getData('clicks') > 0","action":"setData('clicks', getData('clicks') - 1)","priority":10},
				{"from":"party","on":"button_click","to":"off","condition":"getData('clicks') === 0","action":"setData('clicks', undefined); setData('party_done', true)","priority":10}]}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("done", `{"message":"The next 3 clicks show random colors, then the light goes back to off."}`)}},
	)
	defer srv.Close()
	clk := clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC))
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) { c.Clock = clk }, "demo"))
	r := agentOK(t, nc, "demo", messages.VerbAsk, `{"text":"next 3 clicks random colors then back to normal"}`)
	if r.Body["status"] != "done" || !strings.HasPrefix(fmt.Sprint(r.Body["answer"]), "The next 3 clicks show random colors") {
		t.Fatalf("ask: %s", r.Raw)
	}
	var tools []string
	calls, _ := r.Body["calls"].([]any)
	for _, c := range calls {
		if c := c.(map[string]any); c["ok"] == true {
			tools = append(tools, fmt.Sprint(c["tool"]))
		}
	}
	if got := strings.Join(tools, ","); !strings.HasPrefix(got, "getPattern,createState,appendRules") {
		t.Fatalf("the calls that ran: %s\n%s", got, r.Raw)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	get := func() map[string]any { return mustOK(t, nc, messages.VerbGet, `{}`) }
	for i, want := range []any{2.0, 1.0, 0.0, nil} {
		agentPress(t, nc, clk, "click")
		lumentest.WaitFor(t, 10*time.Second, fmt.Sprintf("click %d to be applied", i+1), func() bool {
			vars, _ := get()["vars"].(map[string]any)
			if want == nil {
				return vars["party_done"] == true
			}
			return vars["clicks"] == want
		})
		state := get()["state"]
		if (want == nil && state != "off") || (want != nil && state != "party") {
			t.Fatalf("after click %d the light is %v", i+1, state)
		}
	}
	var hist messages.HistoryReply
	if b, code := request(t, nc, messages.VerbHistory, `{}`); code != "" || json.Unmarshal(b, &hist) != nil {
		t.Fatalf("history: %s %s", code, b)
	}
	step := regexp.MustCompile(`^agent:default:\d+$`)
	named := false
	for _, c := range hist.Changes {
		named = named || (step.MatchString(c.By) && strings.HasPrefix(c.Summary, "+rule"))
	}
	if !named {
		t.Errorf("the history does not name the agent's step: %+v", hist.Changes)
	}
	var why messages.WhyReply
	if b, code := request(t, nc, messages.VerbWhy, `{}`); code != "" || json.Unmarshal(b, &why) != nil || why.Input.By != messages.WhoButton ||
		why.Rule == nil || len(why.Reads) == 0 || why.Reads[0].SetBy == nil || why.Reads[0].SetBy.By != messages.WhoButton {
		t.Errorf("why after the last click: %s %s", code, b)
	}
	n := len(srv.Requests())
	verifyReplay(t, nc, "demo")
	if len(srv.Requests()) != n {
		t.Fatal("replay called the model")
	}
	var sessions messages.SessionsReply
	if b, code := request(t, nc, messages.VerbSessions, `{"session":"default"}`); code != "" || json.Unmarshal(b, &sessions) != nil || len(sessions.Sessions) != 1 {
		t.Fatalf("sessions default: %s %s", code, b)
	}
	s := sessions.Sessions[0]
	asked, appended := false, false
	for _, m := range s.Transcript {
		asked = asked || (m.Role == "user" && strings.HasPrefix(m.Content, "next 3 clicks"))
		for _, c := range m.ToolCalls {
			appended = appended || c.Name == "appendRules"
		}
	}
	if !asked || !appended || !strings.HasPrefix(s.LastAnswer, "The next 3 clicks") {
		t.Fatalf("the session's transcript: %+v", s)
	}
}

// The seed's weather flow, approvals over NATS: defineTool and a data
// source reaching a new host need approval, and so does re-creating the
// light's own blue and red states (the approval says what each
// replaces); then a data update turns the light blue or red.
func TestAgentWeatherFlow(t *testing.T) {
	lumentest.NeedGuest(t)
	var temp atomic.Int64
	temp.Store(5)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintf(w, `{"current":{"temperature":%d}}`, temp.Load())
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	code := fmt.Sprintf("const r = await fetch('http://%s/weather'); return {temp: JSON.parse(r.body).current.temperature};", host)
	tool, _ := json.Marshal(map[string]any{"name": "get_weather", "description": "current temperature", "hosts": []string{host}, "code": code})
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("defineTool", string(tool))}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("createDataSource", `{"name":"weather","interval_ms":300,"fetch":{"tool":"get_weather"},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if !strings.Contains(r.Last().Text(), `"ok":true`) {
					return fmt.Errorf("defineTool after approval: %s", r.Last().Text())
				}
				return nil
			}},
		agenttest.Step{Calls: []agenttest.Call{
			agentScripted("createState", `{"name":"blue","r":0,"g":0,"b":255}`),
			agentScripted("createState", `{"name":"red","r":255,"g":0,"b":0}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("appendRules", `{"rules":[
			{"from":"*","on":"weather_updated","to":"blue","condition":"getData('temperature') < 15"},
			{"from":"*","on":"weather_updated","to":"red","condition":"getData('temperature') >= 15"}]}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("done", `{"message":"Blue when it is cold, red when it is warm."}`)}},
	)
	defer srv.Close()
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) {
		c.AllowNet, c.SourceMinInterval = []string{host}, 100*time.Millisecond
	}, "demo"))
	events := lumentest.WatchAgent(t, nc, "demo")

	done := make(chan agentReply, 1)
	go func() {
		m, err := nc.Request("lumen.demo.cmd.ask", []byte(`{"text":"blue when it is cold outside, red when it is warm"}`), 2*time.Minute)
		var r agentReply
		if err == nil {
			r.Raw = m.Data
			_ = json.Unmarshal(m.Data, &r.Body)
		} else {
			r.Desc = err.Error()
		}
		done <- r
	}()
	for _, want := range []struct{ tool, text string }{
		{"defineTool", ""},
		{"createDataSource", ""},
		{"createState", `replaces the existing state "blue"`},
		{"createState", `replaces the existing state "red"`},
	} {
		ev := events.Next(t, messages.AgentKindApproval)
		if ev.Call == nil || ev.Call.Tool != want.tool || ev.Call.Tier != messages.TierConfirm || ev.Text != want.text {
			t.Fatalf("approval %+v, want %s (%q)", ev, want.tool, want.text)
		}
		r := mustOK(t, nc, messages.VerbApprove, fmt.Sprintf(`{"id":%q,"who":"test"}`, ev.Approval))
		if r["decision"] != "approved" || r["tool"] != want.tool {
			t.Fatalf("approve: %v", r)
		}
	}
	res := <-done
	if res.Desc != "" {
		t.Fatalf("ask: %s", res.Desc)
	}
	if res.Body["status"] != "done" || res.Body["answer"] != "Blue when it is cold, red when it is warm." {
		t.Fatalf("ask reply: %s", res.Raw)
	}
	calls, _ := res.Body["calls"].([]any)
	if len(calls) != 6 {
		t.Fatalf("calls: %s", res.Raw)
	}
	for _, c := range calls[:4] {
		if c := c.(map[string]any); c["approved_by"] != "test" || c["ok"] != true {
			t.Fatalf("audit of an approved call: %v", c)
		}
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	state := func() any { return mustOK(t, nc, messages.VerbGet, `{}`)["state"] }
	lumentest.WaitFor(t, 60*time.Second, "the light to turn blue in the cold", func() bool { return state() == "blue" })
	temp.Store(25)
	lumentest.WaitFor(t, 30*time.Second, "the light to turn red in the warmth", func() bool { return state() == "red" })
}

// reject refuses a pending call, which goes back to the model as
// rejected; a tool the
// operator forbids (--agent-forbid) never runs, and the model is told so.
func TestAgentRejectAndForbid(t *testing.T) {
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("deleteRules", `{"on":"button_hold"}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("deleteState", `{"name":"blue"}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "rejected") {
				return fmt.Errorf("reject: the model was told %s", res)
			}
			return nil
		}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("done", `{"message":"Nothing changed."}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "operator does not allow deleteState") {
				return fmt.Errorf("forbidden tool: the model was told %s", res)
			}
			return nil
		}},
	)
	defer srv.Close()
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) { c.Agent.Forbid = []string{"deleteState"} }, "demo"))
	events := lumentest.WatchAgent(t, nc, "demo")
	mustOK(t, nc, messages.VerbAsk, `{"text":"simplify","async":true}`)
	ev := events.Next(t, messages.AgentKindApproval)
	body := fmt.Sprintf(`{"id":%q}`, ev.Approval)
	if r := mustOK(t, nc, messages.VerbReject, body); r["decision"] != "rejected" || r["tool"] != "deleteRules" {
		t.Fatalf("reject: %v", r)
	}
	// A second decision of the decided call, right after the first
	// one's reply (before its decision is journaled), is refused.
	for _, verb := range []string{messages.VerbReject, messages.VerbApprove} {
		if r := requestTo(t, nc, "demo", verb, body); r.Code != "404" {
			t.Errorf("a second %s of a decided call: %s, want 404", verb, r.Raw)
		}
	}
	call := events.Next(t, messages.AgentKindTool)
	for call.Call.Tool != "deleteState" {
		call = events.Next(t, messages.AgentKindTool)
	}
	if call.Call.OK || call.Call.Tier != messages.TierForbidden {
		t.Fatalf("the forbidden deleteState: %+v", call.Call)
	}
	if end := events.Next(t, messages.AgentKindEnd); end.Status != "done" {
		t.Fatalf("end %+v", end)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	model, _ := request(t, nc, messages.VerbGet, `{}`)
	if !strings.Contains(string(model), `"button_hold"`) || !strings.Contains(string(model), `"blue"`) {
		t.Fatalf("a rejected or forbidden call changed the light: %s", model)
	}
}

// Without a model, ask says how to configure one, and direct commands
// need none: they are carried out, by local. A bad session or field is
// a 400.
func TestAgentUnconfigured(t *testing.T) {
	nc := connectTo(t, agentStart(t, nil, nil, "demo"))
	if r := agentCall(t, nc, "demo", messages.VerbAsk, `{"text":"make it cosy"}`, 10*time.Second); r.Code != "409" || !strings.Contains(r.Desc, "LUMEN_MODEL") {
		t.Fatalf("unconfigured ask: %q %s %s", r.Code, r.Desc, r.Raw)
	}
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"red please"}`); r["status"] != "done" || r["answer"] != "The light is red now." {
		t.Fatalf("ask red please, with no model: %v", r)
	}
	var why messages.WhyReply
	if b, code := request(t, nc, messages.VerbWhy, `{}`); code != "" || json.Unmarshal(b, &why) != nil || why.State != "red" || why.Input.By != messages.WhoLocal {
		t.Fatalf("why after a direct command: %s %s", code, b)
	}
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"next"}`); !strings.Contains(fmt.Sprint(r["answer"]), "button_click") {
		t.Fatalf("ask next, with no model: %v", r)
	}
	for _, body := range []string{`{"text":"x","session":"Bad Name"}`, `{"txt":"x"}`} {
		if b, code := request(t, nc, messages.VerbAsk, body); code != "400" {
			t.Errorf("ask %s: %q %s", body, code, b)
		}
	}
}

// A new ask cancels the one in flight at once.
func TestAgentCancel(t *testing.T) {
	srv := agenttest.New(agenttest.Step{Hang: true}, agenttest.Step{Content: "Sure."})
	defer srv.Close()
	nc := connectTo(t, agentStart(t, srv, nil, "demo"))
	first := make(chan agentReply, 1)
	go func() {
		var r agentReply
		if m, err := nc.Request("lumen.demo.cmd.ask", []byte(`{"text":"slow"}`), 30*time.Second); err == nil {
			r.Raw = m.Data
			_ = json.Unmarshal(m.Data, &r.Body)
		}
		first <- r
	}()
	lumentest.WaitFor(t, 10*time.Second, "the first request to reach the model", func() bool { return len(srv.Requests()) == 1 })
	start := time.Now()
	second := mustOK(t, nc, messages.VerbAsk, `{"text":"quick"}`)
	r := <-first
	if r.Body["status"] != "cancelled" || second["status"] != "done" || second["answer"] != "Sure." {
		t.Fatalf("first %s, second %v", r.Raw, second)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}
}

// Every pattern's worked example, loaded into a real light, behaves as
// its description says: the model is shown examples that work.
func TestAgentPatternExamples(t *testing.T) {
	patterns := agent.Patterns()
	var lights []string
	for _, p := range patterns {
		lights = append(lights, p.Name)
	}
	nc := connectTo(t, agentStart(t, nil, nil, lights...))
	for _, p := range patterns {
		t.Run(p.Name, func(t *testing.T) {
			cmd := func(verb, body string) agentReply { return agentOK(t, nc, p.Name, verb, body) }
			ex := p.Example
			var states, rules []json.RawMessage
			if ex.Light != nil {
				// The light before the request: its own states and rules.
				_ = json.Unmarshal(ex.Light.States, &states)
				_ = json.Unmarshal(ex.Light.Rules, &rules)
			}
			var addStates, addRules []json.RawMessage
			if err := json.Unmarshal(ex.States, &addStates); err != nil {
				t.Fatalf("states: %v", err)
			}
			states = append(states, addStates...)
			if ex.Layer == nil {
				if err := json.Unmarshal(ex.Rules, &addRules); err != nil {
					t.Fatalf("rules: %v", err)
				}
				rules = append(rules, addRules...)
			}
			body, err := json.Marshal(map[string]any{"states": states, "rules": rules, "schedules": ex.Schedules, "confirm_empty": true})
			if err != nil {
				t.Fatal(err)
			}
			cmd(messages.VerbApply, string(body)) // apply replaces the whole configuration: tools come after
			if ex.Layer != nil {
				cmd(messages.VerbAppendRules, fmt.Sprintf(`{"rules":%s,"layer":%s}`, ex.Rules, ex.Layer))
			}
			if ex.Tool != nil {
				cmd(messages.VerbDefineTool, string(ex.Tool))
			}
			if ex.Source != nil {
				// A new source runs at once: let that run end (stored, or
				// failed where its host is unreachable) before the checks.
				ran := make(chan *nats.Msg, 256)
				sub, err := nc.ChanSubscribe("lumen."+p.Name+".evt.>", ran)
				if err != nil {
					t.Fatal(err)
				}
				cmd(messages.VerbCreateSource, string(ex.Source))
				timeout := time.After(30 * time.Second)
				for done := false; !done; {
					select {
					case m := <-ran:
						done = strings.HasSuffix(m.Subject, ".in.data") || strings.Contains(string(m.Data), `"kind":"source"`)
					case <-timeout:
						t.Fatal("the example's source did not run")
					}
				}
				_ = sub.Unsubscribe()
			}
			if len(p.Check) == 0 {
				t.Fatal("the pattern has no check")
			}
			for i, c := range p.Check {
				for name, v := range c.Vars {
					cmd(messages.VerbSetVar, fmt.Sprintf(`{"name":%q,"value":%s}`, name, v))
				}
				var r agentReply
				if c.Data != nil {
					// One run of the example's source, as its actor
					// journals it (the tool's host is not reachable here).
					var src struct{ Name string }
					if err := json.Unmarshal(ex.Source, &src); err != nil || src.Name == "" {
						t.Fatalf("step %d: data without the example's source: %v", i+1, err)
					}
					body, _ := json.Marshal(messages.InDataData{Source: src.Name, Vars: c.Data})
					r = cmd(messages.VerbData, string(body))
				} else {
					r = cmd(messages.VerbFire, fmt.Sprintf(`{"transition":%q}`, c.Fire))
				}
				if r.Body["state"] != c.State {
					t.Fatalf("step %d: fire %s → %v, want %s (%s)", i+1, c.Fire, r.Body["state"], c.State, r.Raw)
				}
				if c.Timers != nil {
					var names []string
					timers, _ := cmd(messages.VerbGet, `{}`).Body["timers"].([]any)
					for _, tm := range timers {
						names = append(names, tm.(map[string]any)["name"].(string))
					}
					if strings.Join(names, ",") != strings.Join(*c.Timers, ",") {
						t.Fatalf("step %d: timers %v, want %v", i+1, names, *c.Timers)
					}
				}
			}
			if ex.Layer != nil {
				// The light's own rules are all there is once the layer
				// ended: the light is as it was before the request.
				g := cmd(messages.VerbGet, `{}`).Body
				if _, ok := g["layers"]; ok || len(g["rules"].([]any)) != len(rules) {
					t.Errorf("after the checks: rules %v, layers %v", g["rules"], g["layers"])
				}
			}
		})
	}
}

// While an approval is pending the LED pulses amber and the button
// decides it: a click rejects, a hold approves and the approved call runs;
// the rules see neither gesture (on the demo light a click would go to
// the next color and a hold would turn it off).
func TestAgentApprovalByButton(t *testing.T) {
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("deleteRules", `{"on":"bedtime"}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("deleteState", `{"name":"spare"}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "rejected") {
				return fmt.Errorf("click should reject: %s", res)
			}
			return nil
		}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("done", `{"message":"ok"}`)}},
	)
	defer srv.Close()
	clk := clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC))
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) { c.Clock = clk }, "demo"))
	events := lumentest.WatchAgent(t, nc, "demo")
	mustOK(t, nc, messages.VerbCreateState, `{"name":"spare","r":1,"g":2,"b":3}`)
	mustOK(t, nc, messages.VerbAppendRules, `{"rules":[{"from":"*","on":"bedtime","to":"off"}]}`)
	mustOK(t, nc, messages.VerbFire, `{"transition":"button_click"}`)
	before := mustOK(t, nc, messages.VerbGet, `{}`)["state"]
	if before == "off" {
		t.Fatal("the demo light should be on: a hold reaching the rules would not show")
	}
	mustOK(t, nc, messages.VerbAsk, `{"text":"tidy up","async":true}`)
	led := func() string { return fmt.Sprint(mustOK(t, nc, messages.VerbLED, `{}`)["state"]) }
	for _, g := range []struct{ press, decision, tool string }{{"click", "rejected", "deleteRules"}, {"hold", "approved", "deleteState"}} {
		ev := events.Next(t, messages.AgentKindApproval)
		if ev.Call.Tool != g.tool {
			t.Fatalf("approval for %s, want %s", ev.Call.Tool, g.tool)
		}
		lumentest.WaitFor(t, 10*time.Second, "the LED to show the approval", func() bool { return led() == "approval" })
		agentPress(t, nc, clk, g.press)
		dec := events.Next(t, messages.AgentKindDecision)
		if dec.Status != g.decision || dec.Who != "button" || dec.Approval != ev.Approval {
			t.Fatalf("decision %+v after %s", dec, g.press)
		}
	}
	// The call the hold approved ran, and says who approved it.
	call := events.Next(t, messages.AgentKindTool)
	for call.Call.Tool != "deleteState" {
		call = events.Next(t, messages.AgentKindTool)
	}
	if !call.Call.OK || call.Call.ApprovedBy != "button" {
		t.Fatalf("the approved deleteState: %+v", call.Call)
	}
	if end := events.Next(t, messages.AgentKindEnd); end.Status != "done" {
		t.Fatalf("end %+v", end)
	}
	model, _ := request(t, nc, messages.VerbGet, `{}`)
	if strings.Contains(string(model), `"spare"`) {
		t.Fatalf("the approved deleteState did not delete the state: %s", model)
	}
	if !strings.Contains(string(model), `"bedtime"`) {
		t.Fatalf("the rejected deleteRules ran: %s", model)
	}
	lumentest.WaitFor(t, 10*time.Second, "the LED to show the light's state again", func() bool { return led() == before })
	if st := mustOK(t, nc, messages.VerbGet, `{}`)["state"]; st != before {
		t.Fatalf("the rules saw the gestures: state %v, was %v", st, before)
	}
}

// Faults: garbage arguments and a bad expression go back to the model,
// which fixes them; a duplicate is blocked; then the API fails (500) and
// the request ends with a spoken-style answer, keeping what was done; a
// hanging API is cut by the agent's timeout (3 s, which also covers the
// client's retry of a 500 and its back-off). The light keeps working
// throughout.
func TestAgentFaults(t *testing.T) {
	good := `{"rules":[{"from":"off","on":"button_double_click","to":"dim","condition":"getData('n') === undefined"}]}`
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("createState", `{"name":"dim","r":40,`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("createState", `{"name":"dim","r":40,"g":40,"b":40}`),
			agentScripted("appendRules", `{"rules":[{"from":"off","on":"button_double_click","to":"dim","condition":"getData('n') === ) 1"}]}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if !strings.Contains(r.Last().Text(), "not a JSON object") {
					return fmt.Errorf("garbage arguments: %s", r.Last().Text())
				}
				return nil
			}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("appendRules", good), agentScripted("appendRules", good)},
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.Last().Text(); !strings.Contains(res, "condition") || !strings.Contains(res, "at line 1, column") || !strings.Contains(res, `"ok":false`) {
					return fmt.Errorf("bad expression: %s", res)
				}
				return nil
			}},
		agenttest.Step{Status: 500, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "blocked: you already called appendRules") {
				return fmt.Errorf("duplicate: %s", res)
			}
			return nil
		}},
		agenttest.Step{Status: 500},
		agenttest.Step{Hang: true},
	)
	defer srv.Close()
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) { c.Agent.Timeout = 3 * time.Second }, "demo"))
	r := agentOK(t, nc, "demo", messages.VerbAsk, `{"text":"double click dims it"}`)
	if answer := fmt.Sprint(r.Body["answer"]); r.Body["status"] != "failed" || !strings.Contains(answer, "HTTP 500") ||
		!strings.Contains(answer, "What I did so far stays (createState, appendRules)") {
		t.Fatalf("reply %s", r.Raw)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	rules := mustOK(t, nc, messages.VerbGet, `{}`)["rules"].([]any)
	n := 0
	for _, rule := range rules {
		if rule.(map[string]any)["to"] == "dim" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d dim rules, want exactly 1: %v", n, rules)
	}
	if st := mustOK(t, nc, messages.VerbFire, `{"transition":"button_double_click"}`)["state"]; st != "dim" {
		t.Fatalf("the rule the agent fixed does not work: %v", st)
	}
	start := time.Now()
	r = agentOK(t, nc, "demo", messages.VerbAsk, `{"text":"again"}`)
	if r.Body["status"] != "failed" || !strings.Contains(fmt.Sprint(r.Body["answer"]), "did not answer within 3s") || time.Since(start) > 10*time.Second {
		t.Fatalf("hang: %s after %v", r.Raw, time.Since(start))
	}
}

// agentNeedEspeak skips without espeak-ng, except under CI where the
// Taskfile installs it.
func agentNeedEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatal("espeak-ng is not installed; run the tests with the Taskfile (task test installs it)")
	}
	t.Skip("espeak-ng is not installed")
}

// Voice with local speech (speech model "espeak"): a WAV spoken by
// espeak-ng is transcribed by the endpoint, the request runs (setState
// said directly, no second model call) and the answer comes back as
// espeak-ng's speech, not the endpoint's. An empty transcript only
// aborts; too much audio is a 413.
func TestAgentTalk(t *testing.T) {
	agentNeedEspeak(t)
	wav := filepath.Join(t.TempDir(), "request.wav")
	if out, err := exec.Command("espeak-ng", "-w", wav, "make the light red").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	audio, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	srv := agenttest.New(agenttest.Step{Calls: []agenttest.Call{agentScripted("setState", `{"name":"blue","speak_directly":true}`)}})
	defer srv.Close()
	nc := connectTo(t, agentStart(t, srv, func(c *daemon.Config) { c.Agent.SpeechModel = "espeak" }, "demo"))
	talk := func() messages.TalkReply {
		t.Helper()
		m, err := nc.Request("lumen.demo.cmd."+messages.VerbTalk, audio, 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		var r messages.TalkReply
		if err := json.Unmarshal(m.Data, &r); err != nil {
			t.Fatalf("talk: %v %.300s", err, m.Data)
		}
		return r
	}
	srv.SetTranscript("now blue for a while")
	if r := talk(); r.SpokenBy != "espeak" || agenttest.CheckWAV(r.Audio) != nil || r.Answer != "The light is blue now." || r.Transcript != "now blue for a while" {
		t.Fatalf("espeak talk: %+v", r.AskReply)
	}
	if got := srv.Audio(); len(got) != 1 {
		t.Fatalf("the endpoint heard %d recordings", len(got))
	}
	if sp := srv.Speech(); len(sp) != 0 {
		t.Fatalf("the endpoint's speech was used with the espeak speech model: %q", sp)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls; a direct answer needs one", n)
	}
	if st := mustOK(t, nc, messages.VerbGet, `{}`)["state"]; st != "blue" {
		t.Fatalf("state %v", st)
	}

	// Silence only aborts: no model call, nothing spoken.
	srv.SetTranscript("")
	if r := talk(); r.Status != "cancelled" || len(r.Audio) != 0 {
		t.Fatalf("empty transcript: %+v", r.AskReply)
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("an empty transcript made %d model calls", n-1)
	}
	if b, code := request(t, nc, messages.VerbTalk, strings.Repeat("x", 9<<20)); code != "413" {
		t.Fatalf("9 MiB of audio: %q %.200s", code, b)
	}
}

// Voice with a speech-to-text endpoint and no chat model: the transcript
// is understood locally, carried out, and its answer spoken; the
// endpoint is never asked for a chat turn.
func TestAgentTalkWithoutModel(t *testing.T) {
	agentNeedEspeak(t)
	srv := agenttest.New()
	defer srv.Close()
	nc := connectTo(t, startWith(t, func(c *daemon.Config) { c.Agent.BaseURL = srv.BaseURL() }, "demo"))
	mustOK(t, nc, messages.VerbSetState, `{"name":"red"}`)
	wav := filepath.Join(t.TempDir(), "request.wav")
	if out, err := exec.Command("espeak-ng", "-w", wav, "turn off the light").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	audio, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	srv.SetTranscript("Turn off the light, please.")
	m, err := nc.Request("lumen.demo.cmd."+messages.VerbTalk, audio, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r messages.TalkReply
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Status != messages.AgentDone || r.Answer != "The light is off." || r.SpokenBy == "" || len(r.Audio) == 0 {
		t.Fatalf("talk: %v %+v spoken by %q", err, r.AskReply, r.SpokenBy)
	}
	if st := mustOK(t, nc, messages.VerbGet, `{}`)["state"]; st != "off" {
		t.Fatalf("state %v after %q", st, r.Transcript)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d chat calls with no chat model", n)
	}
}
