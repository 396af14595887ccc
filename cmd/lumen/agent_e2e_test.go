package main_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

func scripted(name, args string) agenttest.Call { return agenttest.Call{Name: name, Args: args} }

// agentArgs are the flags that point a daemon at a scripted model.
func agentArgs(srv *agenttest.Server, extra ...string) []string {
	return append([]string{"--openai-base-url", srv.BaseURL(), "--model", "scripted"}, extra...)
}

// lumen ask prints the request's calls in words (not their JSON) and its
// answer; lumen history names the agent's step and lumen sessions shows
// the session's transcript. What the agent did to the light is
// actors/daemon's TestAgentCounterFlow.
func TestAskOutput(t *testing.T) {
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
	out, _ = runCLI(t, d.URL, "history")
	if !regexp.MustCompile(`agent:default:\d+ +\+rule`).MatchString(out) {
		t.Errorf("lumen history does not name the agent's step:\n%s", out)
	}
	out, _ = runCLI(t, d.URL, "sessions", "default")
	if !strings.Contains(out, "you:   next 3 clicks") || !strings.Contains(out, "→ appendRules") || !strings.Contains(out, "answer: The next 3 clicks") {
		t.Fatalf("lumen sessions default:\n%s", out)
	}
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
	events := lumentest.WatchAgent(t, nc, "demo")
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"make hold do nothing","async":true,"session":"s1"}`))
	if r.Body["status"] != "accepted" || r.Body["session"] != "s1" {
		t.Fatalf("async ask: %s", r.Raw)
	}
	ev := events.Next(t, messages.AgentKindApproval)
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
	events = lumentest.WatchAgent(t, nc, "demo")
	if out, code := runCLI(t, d.URL, "approve"); code != 0 || !strings.Contains(out, "approved deleteRules ("+ev.Approval) {
		t.Fatalf("lumen approve: exit %d: %s", code, out)
	}
	end := events.Next(t, messages.AgentKindEnd)
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

// lumen reject says what it refused, and exits 1 for a call already
// decided; --agent-forbid reaches the agent. What a rejected or forbidden
// call does is actors/daemon's TestAgentRejectAndForbid; the second
// reject stays here: in process, sent right after the first one's reply,
// it is sometimes accepted.
func TestRejectCLI(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteRules", `{"on":"button_hold"}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("deleteState", `{"name":"blue"}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Nothing changed."}`)}, Expect: func(r agenttest.ChatRequest) error {
			if res := r.Last().Text(); !strings.Contains(res, "operator does not allow deleteState") {
				return fmt.Errorf("--agent-forbid: the model was told %s", res)
			}
			return nil
		}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv, "--agent-forbid", "deleteState")...)
	nc := connect(t, d.URL)
	events := lumentest.WatchAgent(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.ask", `{"text":"simplify","async":true}`))
	ev := events.Next(t, messages.AgentKindApproval)
	if out, code := runCLI(t, d.URL, "reject", ev.Approval); code != 0 || !strings.Contains(out, "rejected") || !strings.Contains(out, "deleteRules") {
		t.Fatalf("lumen reject: exit %d: %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "reject", ev.Approval); code != 1 {
		t.Fatalf("lumen reject of a decided call: exit %d: %s", code, out)
	}
	if end := events.Next(t, messages.AgentKindEnd); end.Status != "done" {
		t.Fatalf("end %+v", end)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
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

// Without a model, lumen ask says it is not configured and still carries
// out a direct command; Ctrl-C on lumen ask stops the agent too. The
// daemon's side is actors/daemon's TestAgentUnconfigured and
// TestAgentCancel.
func TestAskUnconfiguredAndCtrlC(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--model", "")
	if out, code := runCLI(t, d.URL, "ask", "make it cosy"); code != 1 || !strings.Contains(out, "not configured") {
		t.Fatalf("lumen ask unconfigured: exit %d: %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "ask", "red please"); code != 0 || !strings.Contains(out, "The light is red now.") {
		t.Fatalf("lumen ask red please, with no model: exit %d: %s", code, out)
	}

	srv := agenttest.New(agenttest.Step{Hang: true})
	defer srv.Close()
	d2 := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	events := lumentest.WatchAgent(t, connect(t, d2.URL), "demo")
	cmd := exec.Command(lumenBin(t), "ask", "--server", d2.URL, "slow")
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "the request to reach the model", func() bool { return len(srv.Requests()) == 1 })
	_ = cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), "cancelled") {
		t.Fatalf("lumen ask after Ctrl-C: %v\n%s", err, out.String())
	}
	if end := events.Next(t, messages.AgentKindEnd); end.Session != "default" || end.Status != "cancelled" {
		t.Fatalf("end %+v", end)
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
// no second model call) and lumen talk prints what was heard and writes
// the answer as the endpoint's speech (--out); without the endpoint's
// speech, as espeak-ng's. Too much audio for the server lumen talk
// refuses before sending. The speech model espeak, silence and a 413
// are actors/daemon's TestAgentTalk.
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

	// Beyond the server's maximum payload a client cannot send it at
	// all: lumen talk says so before trying.
	huge := filepath.Join(dir, "huge.wav")
	if err := os.WriteFile(huge, make([]byte, 20<<20), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "talk", huge); code != 1 || !strings.Contains(out, "at most 8 MiB") {
		t.Fatalf("lumen talk of 20 MiB: exit %d: %s", code, out)
	}
}
