package main_test

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

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

func scripted(name, args string) agenttest.Call { return agenttest.Call{Name: name, Args: args} }

// agentArgs are the flags that point a daemon at a scripted model.
func agentArgs(srv *agenttest.Server, extra ...string) []string {
	return append([]string{"--openai-base-url", srv.BaseURL(), "--model", "scripted"}, extra...)
}

// agentEvents collects a light's agent events.
type agentEvents struct {
	ch chan messages.OutAgentData
}

func watchAgent(t *testing.T, nc *nats.Conn, light string) *agentEvents {
	t.Helper()
	w := &agentEvents{ch: make(chan messages.OutAgentData, 256)}
	sub, err := nc.Subscribe("lumen."+light+".evt.out.agent", func(m *nats.Msg) {
		var env messages.Envelope
		if messages.DecodeEnvelope(m.Data, &env) != nil {
			return
		}
		var d messages.OutAgentData
		if json.Unmarshal(env.Data, &d) == nil {
			w.ch <- d
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// next waits for the next event of kind.
func (w *agentEvents) next(t *testing.T, kind string) messages.OutAgentData {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d := <-w.ch:
			if d.Kind == kind {
				return d
			}
		case <-timeout:
			t.Fatalf("no agent event of kind %s", kind)
		}
	}
}

// The counter flow: "next 3 clicks random colors, then back to normal",
// through `lumen ask`, then four real clicks of the simulated button.
func TestAgentCounterFlow(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("getPattern", `{"name":"counter"}`)}},
		agenttest.Step{Calls: []agenttest.Call{
			scripted("createState", `{"name":"party","r":"random()*255","g":"random()*255","b":"random()*255"}`),
			scripted("appendRules", `{"rules":[
				{"from":"*","on":"button_click","to":"party","condition":"getData('clicks') === undefined","action":"setData('clicks', 2)","priority":10},
				{"from":"party","on":"button_click","to":"party","condition":"getData('clicks') > 0","action":"setData('clicks', getData('clicks') - 1)","priority":10},
				{"from":"party","on":"button_click","to":"off","condition":"getData('clicks') === 0","action":"setData('clicks', undefined); setData('party_done', true)","priority":10}]}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"The next 3 clicks show random colors, then the light goes back to off."}`)}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	out, code := runCLI(t, d.URL, "ask", "next 3 clicks random colors then back to normal")
	if code != 0 {
		t.Fatalf("lumen ask: exit %d\n%s\n%s", code, out, d.Logs())
	}
	for _, want := range []string{"✓ getPattern", "✓ createState", "✓ appendRules", "The next 3 clicks show random colors"} {
		if !strings.Contains(out, want) {
			t.Fatalf("lumen ask output lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, `{"`) { // the calls in words, not their JSON
		t.Errorf("lumen ask prints JSON:\n%s", out)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	nc := connect(t, d.URL)
	get := func() map[string]any { return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body }
	for i, want := range []any{2.0, 1.0, 0.0, nil} {
		if out, code := runCLI(t, d.URL, "press"); code != 0 {
			t.Fatalf("press: %s", out)
		}
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
	// Who made the rules, and what the clicks did with them: the history
	// names the agent's session and step, why the button and the rule
	// the agent added (and what it read).
	out, _ = runCLI(t, d.URL, "history")
	if !regexp.MustCompile(`agent:default:\d+ +\+rule`).MatchString(out) {
		t.Errorf("lumen history does not name the agent's step:\n%s", out)
	}
	var why messages.WhyReply
	out, _ = runCLI(t, d.URL, "why", "--json")
	if err := json.Unmarshal([]byte(out), &why); err != nil || why.Input.By != messages.WhoButton || why.Rule == nil || len(why.Reads) == 0 ||
		why.Reads[0].SetBy == nil || why.Reads[0].SetBy.By != messages.WhoButton {
		t.Errorf("lumen why after the last click: %v\n%s", err, out)
	}
	// Replay rebuilds the light without the agent's steps getting in the
	// way, and without calling the model.
	calls := len(srv.Requests())
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, out)
	}
	if len(srv.Requests()) != calls {
		t.Fatal("replay called the model")
	}
	// The session is listed with its transcript.
	out, _ = runCLI(t, d.URL, "sessions", "default")
	if !strings.Contains(out, "you:   next 3 clicks") || !strings.Contains(out, "→ appendRules") || !strings.Contains(out, "answer: The next 3 clicks") {
		t.Fatalf("lumen sessions default:\n%s", out)
	}
}

// The seed's weather flow, approvals over NATS: defineTool and a data
// source reaching a new host need approval, and so does re-creating the
// light's own blue and red states (the approval says what each
// replaces); then a data update turns the light blue or red.
func TestAgentWeatherFlow(t *testing.T) {
	needGuest(t)
	// Not parallel: the daemon inherits the test-only minimum interval.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
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
		agenttest.Step{Calls: []agenttest.Call{scripted("defineTool", string(tool))}},
		agenttest.Step{Calls: []agenttest.Call{scripted("createDataSource", `{"name":"weather","interval_ms":300,"fetch":{"tool":"get_weather"},"store":{"temperature":"result.temp"},"fires":"weather_updated"}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if !strings.Contains(r.Last().Text(), `"ok":true`) {
					return fmt.Errorf("defineTool after approval: %s", r.Last().Text())
				}
				return nil
			}},
		agenttest.Step{Calls: []agenttest.Call{
			scripted("createState", `{"name":"blue","r":0,"g":0,"b":255}`),
			scripted("createState", `{"name":"red","r":255,"g":0,"b":0}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("appendRules", `{"rules":[
			{"from":"*","on":"weather_updated","to":"blue","condition":"getData('temperature') < 15"},
			{"from":"*","on":"weather_updated","to":"red","condition":"getData('temperature') >= 15"}]}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Blue when it is cold, red when it is warm."}`)}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--allow-net", host)...)
	nc := connect(t, d.URL)
	events := watchAgent(t, nc, "demo")

	type result struct {
		r   reply
		err error
	}
	done := make(chan result, 1)
	go func() {
		m, err := nc.Request("lumen.demo.cmd.ask", []byte(`{"text":"blue when it is cold outside, red when it is warm"}`), 2*time.Minute)
		if err != nil {
			done <- result{err: err}
			return
		}
		var r reply
		r.Raw = m.Data
		_ = json.Unmarshal(m.Data, &r.Body)
		done <- result{r: r}
	}()
	for _, want := range []struct{ tool, text string }{
		{"defineTool", ""},
		{"createDataSource", ""},
		{"createState", `replaces the existing state "blue"`},
		{"createState", `replaces the existing state "red"`},
	} {
		ev := events.next(t, messages.AgentKindApproval)
		if ev.Call == nil || ev.Call.Tool != want.tool || ev.Call.Tier != messages.TierConfirm || ev.Text != want.text {
			t.Fatalf("approval %+v, want %s (%q)", ev, want.tool, want.text)
		}
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.approve", fmt.Sprintf(`{"id":%q,"who":"test"}`, ev.Approval)))
		if r.Body["decision"] != "approved" || r.Body["tool"] != want.tool {
			t.Fatalf("approve: %s", r.Raw)
		}
	}
	res := <-done
	if res.err != nil {
		t.Fatalf("ask: %v\n%s", res.err, d.Logs())
	}
	if res.r.Body["status"] != "done" || res.r.Body["answer"] != "Blue when it is cold, red when it is warm." {
		t.Fatalf("ask reply: %s", res.r.Raw)
	}
	calls, _ := res.r.Body["calls"].([]any)
	if len(calls) != 6 {
		t.Fatalf("calls: %s", res.r.Raw)
	}
	for _, c := range calls[:4] {
		if c := c.(map[string]any); c["approved_by"] != "test" || c["ok"] != true {
			t.Fatalf("audit of an approved call: %v", c)
		}
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	get := func() map[string]any { return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body }
	lumentest.WaitFor(t, 60*time.Second, "the light to turn blue in the cold", func() bool { return get()["state"] == "blue" })
	temp.Store(25)
	lumentest.WaitFor(t, 30*time.Second, "the light to turn red in the warmth", func() bool { return get()["state"] == "red" })
}

// A restart (SIGKILL) while an approval is pending: the session comes
// back waiting for the same approval, `lumen approve` lets it finish, and
// the model is not asked again for the turn it had already answered.
func TestAgentRestartDuringApproval(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{
			scripted("createState", `{"name":"calm","r":0,"g":40,"b":80}`),
			scripted("deleteRules", `{"on":"button_hold"}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Hold does nothing now."}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if res := r.Last().Text(); !strings.Contains(res, `"ok":true`) {
					return fmt.Errorf("deleteRules after approval: %s", res)
				}
				return nil
			}},
	)
	defer srv.Close()
	dir := t.TempDir()
	d := startDaemon(t, dir, agentArgs(srv)...)
	nc := connect(t, d.URL)
	events := watchAgent(t, nc, "demo")
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"make hold do nothing","async":true,"session":"s1"}`))
	if r.Body["status"] != "accepted" || r.Body["session"] != "s1" {
		t.Fatalf("async ask: %s", r.Raw)
	}
	ev := events.next(t, messages.AgentKindApproval)
	// A subscriber may see an event before the stream has stored it; the
	// session shows it pending once it is durable.
	lumentest.WaitFor(t, 10*time.Second, "the approval to be durable", func() bool {
		return strings.Contains(string(request(t, nc, "lumen.demo.cmd.sessions", `{}`).Raw), `"approval":"`+ev.Approval+`"`)
	})
	nc.Close()
	d.Kill()

	d = startDaemon(t, dir, agentArgs(srv)...)
	out, _ := runCLI(t, d.URL, "sessions")
	if !strings.Contains(out, "s1") || !strings.Contains(out, "pending") || !strings.Contains(out, "lumen approve "+ev.Approval) {
		t.Fatalf("lumen sessions after the restart:\n%s", out)
	}
	// The LED shows the pending approval again.
	ncLED := connect(t, d.URL)
	lumentest.WaitFor(t, 10*time.Second, "the LED to show the approval after the restart", func() bool {
		return mustOK(t, request(t, ncLED, "lumen.demo.cmd.led", `{}`)).Body["state"] == "approval"
	})
	ncLED.Close()
	// Retention may purge the session's events (a light's snapshot covers
	// them): the session's own snapshot keeps it. No client may purge;
	// the daemon's own connection may, on the stopped data directory.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	purge(t, dir, "lumen.demo.evt.out.agent")
	d = startDaemon(t, dir, agentArgs(srv)...)
	if out, _ := runCLI(t, d.URL, "sessions"); !strings.Contains(out, "lumen approve "+ev.Approval) {
		t.Fatalf("lumen sessions after the purge:\n%s", out)
	}
	nc = connect(t, d.URL)
	events = watchAgent(t, nc, "demo")
	if out, code := runCLI(t, d.URL, "approve"); code != 0 || !strings.Contains(out, "approved deleteRules ("+ev.Approval) {
		t.Fatalf("lumen approve: exit %d: %s", code, out)
	}
	end := events.next(t, messages.AgentKindEnd)
	if end.Status != "done" || end.Text != "Hold does nothing now." {
		t.Fatalf("end %+v", end)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d model calls, want 2", n)
	}
	rules := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["rules"].([]any)
	for _, rule := range rules {
		if rule.(map[string]any)["on"] == "button_hold" {
			t.Fatalf("the hold rule is still there: %v", rules)
		}
	}
	out, _ = runCLI(t, d.URL, "sessions", "s1")
	if !strings.Contains(out, "✓ deleteRules") || !strings.Contains(out, "✓ createState") {
		t.Fatalf("transcript:\n%s", out)
	}
}

// lumen reject refuses a pending call, which goes back to the model as
// rejected; a tool the operator forbids (--agent-forbid) never runs, and
// the model is told so.
func TestAgentRejectAndForbid(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteRules", `{"on":"button_hold"}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteState", `{"name":"blue"}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "rejected") {
				return fmt.Errorf("lumen reject: the model was told %s", res)
			}
			return nil
		}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Nothing changed."}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "operator does not allow deleteState") {
				return fmt.Errorf("forbidden tool: the model was told %s", res)
			}
			return nil
		}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--agent-forbid", "deleteState")...)
	nc := connect(t, d.URL)
	events := watchAgent(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"simplify","async":true}`))
	ev := events.next(t, messages.AgentKindApproval)
	if out, code := runCLI(t, d.URL, "reject", ev.Approval); code != 0 || !strings.Contains(out, "rejected") || !strings.Contains(out, "deleteRules") {
		t.Fatalf("lumen reject: exit %d: %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "reject", ev.Approval); code != 1 {
		t.Fatalf("lumen reject of a decided call: exit %d: %s", code, out)
	}
	call := events.next(t, messages.AgentKindTool)
	for call.Call.Tool != "deleteState" {
		call = events.next(t, messages.AgentKindTool)
	}
	if call.Call.OK || call.Call.Tier != messages.TierForbidden {
		t.Fatalf("the forbidden deleteState: %+v", call.Call)
	}
	if end := events.next(t, messages.AgentKindEnd); end.Status != "done" {
		t.Fatalf("end %+v", end)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	model := string(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Raw)
	if !strings.Contains(model, `"button_hold"`) || !strings.Contains(model, `"blue"`) {
		t.Fatalf("a rejected or forbidden call changed the light: %s", model)
	}
}

// lumen ask prints each call while the request is still running, not
// all at the end: the model's second turn waits until the first call's
// line is on the screen.
func TestAskPrintsCallsAsTheyHappen(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("createState", `{"name":"calm","r":0,"g":40,"b":80}`)}},
		agenttest.Step{Func: func(agenttest.ChatRequest) agenttest.Step {
			select {
			case <-release:
			case <-time.After(30 * time.Second):
			}
			return agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Calm is ready."}`)}}
		}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	cmd := exec.Command(lumenBin(t), "ask", "--server", d.URL, "make a calm state")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	lumentest.WaitFor(t, 20*time.Second, "the createState line while the model still thinks", func() bool {
		return strings.Contains(out.String(), "createState")
	})
	if strings.Contains(out.String(), "Calm is ready.") {
		t.Fatalf("the answer came before the model gave it:\n%s", out.String())
	}
	close(release)
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("lumen ask: %v\n%s", err, out.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("lumen ask did not end")
	}
	if o := out.String(); strings.Index(o, "createState") > strings.Index(o, "Calm is ready.") {
		t.Fatalf("the call is printed after the answer:\n%s", o)
	}
}

// Without a model, ask says how to configure one; a new ask cancels the
// one in flight at once.
func TestAgentUnconfiguredAndCancel(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--model", "")
	nc := connect(t, d.URL)
	if r := request(t, nc, "lumen.demo.cmd.ask", `{"text":"make it cosy"}`); r.Code != "409" || !strings.Contains(r.Header, "LUMEN_MODEL") {
		t.Fatalf("unconfigured ask: %q %s", r.Code, r.Raw)
	}
	if out, code := runCLI(t, d.URL, "ask", "make it cosy"); code != 1 || !strings.Contains(out, "not configured") {
		t.Fatalf("lumen ask unconfigured: exit %d: %s", code, out)
	}
	// A direct command needs no model: it is carried out, by local.
	if out, code := runCLI(t, d.URL, "ask", "red please"); code != 0 || !strings.Contains(out, "The light is red now.") {
		t.Fatalf("lumen ask red please, with no model: exit %d: %s", code, out)
	}
	var why messages.WhyReply
	if out, code := runCLI(t, d.URL, "why", "--json"); code != 0 || json.Unmarshal([]byte(out), &why) != nil ||
		why.State != "red" || why.Input.By != messages.WhoLocal {
		t.Fatalf("lumen why after a direct command: exit %d: %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "ask", "next"); code != 0 || !strings.Contains(out, "button_click") {
		t.Fatalf("lumen ask next, with no model: exit %d: %s", code, out)
	}
	if r := request(t, nc, "lumen.demo.cmd.ask", `{"text":"x","session":"Bad Name"}`); r.Code != "400" {
		t.Fatalf("bad session: %s", r.Raw)
	}
	if r := request(t, nc, "lumen.demo.cmd.ask", `{"txt":"x"}`); r.Code != "400" {
		t.Fatalf("unknown field: %s", r.Raw)
	}

	srv := agenttest.New(agenttest.Step{Hang: true}, agenttest.Step{Content: "Sure."}, agenttest.Step{Hang: true})
	defer srv.Close()
	d2 := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	nc2 := connect(t, d2.URL)
	first := make(chan reply, 1)
	go func() {
		var r reply
		if m, err := nc2.Request("lumen.demo.cmd.ask", []byte(`{"text":"slow"}`), 30*time.Second); err == nil {
			r.Raw = m.Data
			_ = json.Unmarshal(m.Data, &r.Body)
		}
		first <- r
	}()
	lumentest.WaitFor(t, 10*time.Second, "the first request to reach the model", func() bool { return len(srv.Requests()) == 1 })
	start := time.Now()
	second := mustOK(t, request(t, nc2, "lumen.demo.cmd.ask", `{"text":"quick"}`))
	r := <-first
	if r.Body["status"] != "cancelled" || second.Body["status"] != "done" || second.Body["answer"] != "Sure." {
		t.Fatalf("first %s, second %s", r.Raw, second.Raw)
	}
	if time.Since(start) > 5*time.Second {
		t.Fatalf("cancellation took %v", time.Since(start))
	}

	// Ctrl-C on lumen ask stops the agent too.
	events := watchAgent(t, nc2, "demo")
	cmd := exec.Command(lumenBin(t), "ask", "--server", d2.URL, "slow again")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "the third request to reach the model", func() bool { return len(srv.Requests()) == 3 })
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "cancelled") {
		t.Fatalf("lumen ask after Ctrl-C: %v\n%s", err, out.String())
	}
	for {
		if end := events.next(t, messages.AgentKindEnd); end.Session == "default" {
			if end.Status != "cancelled" {
				t.Fatalf("end %+v", end)
			}
			break
		}
	}
}

// Every pattern's worked example, loaded into a real light, behaves as
// its description says: the model is shown examples that work.
func TestPatternExamples(t *testing.T) {
	t.Parallel()
	patterns := agent.Patterns()
	var lights []string
	for _, p := range patterns {
		lights = append(lights, "--light", p.Name)
	}
	d := startDaemon(t, t.TempDir(), lights...)
	nc := connect(t, d.URL)
	for _, p := range patterns {
		t.Run(p.Name, func(t *testing.T) {
			cmd := func(verb, body string) reply {
				return mustOK(t, request(t, nc, "lumen."+p.Name+".cmd."+verb, body))
			}
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
			cmd("apply", string(body)) // apply replaces the whole configuration: tools come after
			if ex.Layer != nil {
				cmd("append_rules", fmt.Sprintf(`{"rules":%s,"layer":%s}`, ex.Rules, ex.Layer))
			}
			if ex.Tool != nil {
				cmd("define_tool", string(ex.Tool))
			}
			if ex.Source != nil {
				// A new source runs at once: let that run end (stored, or
				// failed where its host is unreachable) before the checks.
				ran := make(chan *nats.Msg, 256)
				sub, err := nc.ChanSubscribe("lumen."+p.Name+".evt.>", ran)
				if err != nil {
					t.Fatal(err)
				}
				cmd("create_source", string(ex.Source))
				for done := false; !done; {
					select {
					case m := <-ran:
						done = strings.HasSuffix(m.Subject, ".in.data") || strings.Contains(string(m.Data), `"kind":"source"`)
					case <-time.After(30 * time.Second):
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
					cmd("set_var", fmt.Sprintf(`{"name":%q,"value":%s}`, name, v))
				}
				var r reply
				if c.Data != nil {
					// One run of the example's source, as its actor
					// journals it (the tool's host is not reachable here).
					var src struct{ Name string }
					if err := json.Unmarshal(ex.Source, &src); err != nil || src.Name == "" {
						t.Fatalf("step %d: data without the example's source: %v", i+1, err)
					}
					body, _ := json.Marshal(messages.InDataData{Source: src.Name, Vars: c.Data})
					r = cmd("data", string(body))
				} else {
					r = cmd("fire", fmt.Sprintf(`{"transition":%q}`, c.Fire))
				}
				if r.Body["state"] != c.State {
					t.Fatalf("step %d: fire %s → %v, want %s (%s)", i+1, c.Fire, r.Body["state"], c.State, r.Raw)
				}
				if c.Timers != nil {
					var names []string
					timers, _ := cmd("get", `{}`).Body["timers"].([]any)
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
				g := cmd("get", `{}`).Body
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
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteRules", `{"on":"bedtime"}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteState", `{"name":"spare"}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "rejected") {
				return fmt.Errorf("click should reject: %s", res)
			}
			return nil
		}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"ok"}`)}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	nc := connect(t, d.URL)
	events := watchAgent(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"spare","r":1,"g":2,"b":3}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"bedtime","to":"off"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	before := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]
	if before == "off" {
		t.Fatal("the demo light should be on: a hold reaching the rules would not show")
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"tidy up","async":true}`))
	led := func() string { return fmt.Sprint(mustOK(t, request(t, nc, "lumen.demo.cmd.led", `{}`)).Body["state"]) }
	for _, g := range []struct{ press, decision, tool string }{{"click", "rejected", "deleteRules"}, {"hold", "approved", "deleteState"}} {
		ev := events.next(t, messages.AgentKindApproval)
		if ev.Call.Tool != g.tool {
			t.Fatalf("approval for %s, want %s", ev.Call.Tool, g.tool)
		}
		lumentest.WaitFor(t, 10*time.Second, "the LED to show the approval", func() bool { return led() == "approval" })
		if out, code := runCLI(t, d.URL, "press", g.press); code != 0 {
			t.Fatalf("press %s: %s", g.press, out)
		}
		dec := events.next(t, messages.AgentKindDecision)
		if dec.Status != g.decision || dec.Who != "button" || dec.Approval != ev.Approval {
			t.Fatalf("decision %+v after %s", dec, g.press)
		}
	}
	// The call the hold approved ran, and says who approved it.
	call := events.next(t, messages.AgentKindTool)
	for call.Call.Tool != "deleteState" {
		call = events.next(t, messages.AgentKindTool)
	}
	if !call.Call.OK || call.Call.ApprovedBy != "button" {
		t.Fatalf("the approved deleteState: %+v", call.Call)
	}
	if end := events.next(t, messages.AgentKindEnd); end.Status != "done" {
		t.Fatalf("end %+v", end)
	}
	model := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`))
	if strings.Contains(string(model.Raw), `"spare"`) {
		t.Fatalf("the approved deleteState did not delete the state: %s", model.Raw)
	}
	if !strings.Contains(string(model.Raw), `"bedtime"`) {
		t.Fatalf("the rejected deleteRules ran: %s", model.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the LED to show the light's state again", func() bool { return led() == before })
	if st := model.Body["state"]; st != before {
		t.Fatalf("the rules saw the gestures: state %v, was %v", st, before)
	}
}

// needEspeak skips without espeak-ng, except under CI where the Taskfile
// installs it.
func needEspeak(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("espeak-ng"); err == nil {
		return
	}
	if os.Getenv("CI") != "" || os.Getenv("LUMEN_BIN") != "" {
		t.Fatal("espeak-ng is not installed; run the tests with the Taskfile (task test installs it)")
	}
	t.Skip("espeak-ng is not installed")
}

// Voice: a WAV spoken by espeak-ng is transcribed by the endpoint (which
// checks it got real audio), the request runs (setState said directly,
// no second model call) and the answer comes back as the endpoint's
// speech; with --speech-model espeak, as espeak-ng's. An empty
// transcript only aborts; too much audio is a 413.
func TestAgentVoice(t *testing.T) {
	t.Parallel()
	needEspeak(t)
	dir := t.TempDir()
	wav := filepath.Join(dir, "request.wav")
	if out, err := exec.Command("espeak-ng", "-w", wav, "make the light red").CombinedOutput(); err != nil {
		t.Fatalf("espeak-ng: %v: %s", err, out)
	}
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"red","speak_directly":true}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if r.Messages[len(r.Messages)-1].Text() != "make the light red for tonight" {
					return fmt.Errorf("the model got %q", r.Last().Text())
				}
				return nil
			}},
	)
	defer srv.Close()
	// Requests a direct command would take without the model ("make the
	// light red") would not reach it: these say more.
	srv.SetTranscript("make the light red for tonight")
	d := startDaemon(t, filepath.Join(dir, "a"), agentArgs(srv)...)
	answer := filepath.Join(dir, "answer.wav")
	out, code := runCLI(t, d.URL, "talk", wav, "--out", answer)
	if code != 0 || !strings.Contains(out, `heard: "make the light red for tonight"`) || !strings.Contains(out, "The light is red now.") {
		t.Fatalf("lumen talk: exit %d\n%s", code, out)
	}
	if got := srv.Audio(); len(got) != 1 {
		t.Fatalf("the endpoint heard %d recordings", len(got))
	}
	if sp := srv.Speech(); len(sp) != 1 || sp[0] != "The light is red now." {
		t.Fatalf("speech asked for %q", sp)
	}
	b, err := os.ReadFile(answer)
	if err != nil || agenttest.CheckWAV(b) != nil {
		t.Fatalf("answer audio: %v %v", err, agenttest.CheckWAV(b))
	}
	if n := len(srv.Requests()); n != 1 {
		t.Fatalf("%d model calls; a direct answer needs one", n)
	}
	nc := connect(t, d.URL)
	if st := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]; st != "red" {
		t.Fatalf("state %v", st)
	}

	// An endpoint without speech (Ollama, llama.cpp): the answer is
	// spoken by the local espeak-ng instead.
	srv.SetSpeech(false)
	srv.Push(agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"green","speak_directly":true}`)}})
	srv.SetTranscript("green for a while")
	if out, code := runCLI(t, d.URL, "talk", wav, "--out", answer); code != 0 || !strings.Contains(out, "The light is green now.") {
		t.Fatalf("lumen talk without the endpoint's speech: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(answer); err != nil || agenttest.CheckWAV(b) != nil {
		t.Fatalf("espeak fallback audio: %v %v", err, agenttest.CheckWAV(b))
	}
	if sp := srv.Speech(); len(sp) != 1 {
		t.Fatalf("speech texts %q: the endpoint should have refused the second", sp)
	}
	srv.SetSpeech(true)

	// Local speech.
	srv.Push(agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"blue","speak_directly":true}`)}})
	d2 := startDaemon(t, filepath.Join(dir, "b"), agentArgs(srv, "--speech-model", "espeak")...)
	nc2 := connect(t, d2.URL)
	audio, _ := os.ReadFile(wav)
	srv.SetTranscript("now blue for a while")
	m, err := nc2.Request("lumen.demo.cmd.talk", audio, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r messages.TalkReply
	if err := json.Unmarshal(m.Data, &r); err != nil || r.SpokenBy != "espeak" || agenttest.CheckWAV(r.Audio) != nil || r.Answer != "The light is blue now." {
		t.Fatalf("espeak talk: %v %.300s", err, m.Data)
	}
	if sp := srv.Speech(); len(sp) != 1 {
		t.Fatalf("the endpoint's speech was used with --speech-model espeak: %q", sp)
	}

	// Silence only aborts: no model call, nothing spoken.
	srv.SetTranscript("")
	calls := len(srv.Requests())
	m, err = nc2.Request("lumen.demo.cmd.talk", audio, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	r = messages.TalkReply{}
	if err := json.Unmarshal(m.Data, &r); err != nil || r.Status != "cancelled" || len(r.Audio) != 0 {
		t.Fatalf("empty transcript: %.300s", m.Data)
	}
	if n := len(srv.Requests()); n != calls {
		t.Fatalf("an empty transcript made %d model calls", n-calls)
	}
	if r := request(t, nc2, "lumen.demo.cmd.talk", strings.Repeat("x", 9<<20)); r.Code != "413" {
		t.Fatalf("9 MiB of audio: %q %.200s", r.Code, r.Raw)
	}
	// Beyond the server's maximum payload a client cannot send it at
	// all: lumen talk says so before trying.
	huge := filepath.Join(dir, "huge.wav")
	if err := os.WriteFile(huge, make([]byte, 20<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d2.URL, "talk", huge); code != 1 || !strings.Contains(out, "at most 8 MiB") {
		t.Fatalf("lumen talk of 20 MiB: exit %d: %s", code, out)
	}
}

// Faults end to end: garbage arguments and a bad expression go back to
// the model, which fixes them; a duplicate is blocked; then the API fails
// (500) and the request ends with a spoken-style answer, keeping what was
// done; a hanging API is cut by --agent-timeout (3 s, which also covers
// the client's retry of a 500 and its back-off). The light keeps working
// throughout.
func TestAgentFaults(t *testing.T) {
	t.Parallel()
	good := `{"rules":[{"from":"off","on":"button_double_click","to":"dim","condition":"getData('n') === undefined"}]}`
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("createState", `{"name":"dim","r":40,`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("createState", `{"name":"dim","r":40,"g":40,"b":40}`),
			scripted("appendRules", `{"rules":[{"from":"off","on":"button_double_click","to":"dim","condition":"getData('n') === ) 1"}]}`)},
			Expect: func(r agenttest.ChatRequest) error {
				if !strings.Contains(r.Last().Text(), "not a JSON object") {
					return fmt.Errorf("garbage arguments: %s", r.Last().Text())
				}
				return nil
			}},
		agenttest.Step{Calls: []agenttest.Call{scripted("appendRules", good), scripted("appendRules", good)},
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
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--agent-timeout", "3s")...)
	nc := connect(t, d.URL)
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"double click dims it"}`))
	if r.Body["status"] != "failed" || !strings.Contains(fmt.Sprint(r.Body["answer"]), "HTTP 500") ||
		!strings.Contains(fmt.Sprint(r.Body["answer"]), "What I did so far stays (createState, appendRules)") {
		t.Fatalf("reply %s", r.Raw)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	rules := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["rules"].([]any)
	n := 0
	for _, rule := range rules {
		if rule.(map[string]any)["to"] == "dim" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d dim rules, want exactly 1: %v", n, rules)
	}
	if st := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_double_click"}`)).Body["state"]; st != "dim" {
		t.Fatalf("the rule the agent fixed does not work: %v", st)
	}
	start := time.Now()
	r = mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"again"}`))
	if r.Body["status"] != "failed" || !strings.Contains(fmt.Sprint(r.Body["answer"]), "did not answer within 3s") || time.Since(start) > 10*time.Second {
		t.Fatalf("hang: %s after %v", r.Raw, time.Since(start))
	}
}
