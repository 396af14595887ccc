package main_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
)

// Answers learned once, end to end: the model resolves a request into
// one setState and the light learns it; after a SIGKILL the same words
// run locally, the scripted model seeing no request; deleting the state
// drops an intent, lumen intents rm forgets one (the words go to the
// model again), and a learned intent works with no model configured.
// Intents are journaled, replay --verify passes, export leaves them out.
func TestLearnedIntents(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"reading","speak_directly":true}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("getStates", `{}`)}},
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"cinema"}`), scripted("done", `{"message":"Enjoy the film."}`)}},
		agenttest.Step{Content: "Enjoy your book."}, // after lumen intents rm
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"reading","speak_directly":true}`)}},
	)
	defer srv.Close()
	dir := t.TempDir()
	d := startDaemon(t, dir, agentArgs(srv)...)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"states":[{"name":"reading","r":255,"g":190,"b":120},{"name":"cinema","r":20,"g":0,"b":40}],
		"rules":[{"from":"*","on":"button_hold","to":"off"}]}`))

	ask := func(text string, wantModelCalls int) {
		t.Helper()
		out, code := runCLI(t, d.URL, "ask", text)
		if code != 0 {
			t.Fatalf("lumen ask %q: exit %d\n%s\n%s", text, code, out, d.Logs())
		}
		if n := len(srv.Requests()); n != wantModelCalls {
			t.Fatalf("after lumen ask %q the model had %d requests, want %d:\n%s", text, n, wantModelCalls, out)
		}
	}
	intents := func() string {
		t.Helper()
		out, code := runCLI(t, d.URL, "intents")
		if code != 0 {
			t.Fatalf("lumen intents: exit %d\n%s", code, out)
		}
		return out
	}
	state := func() string {
		t.Helper()
		return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"].(string)
	}

	ask("I'm going to read a book", 1)
	ask("Movie night!", 3)
	if out := intents(); !strings.Contains(out, "i'm going read book") || !strings.Contains(out, "set_state reading") ||
		!strings.Contains(out, "movie night") || !strings.Contains(out, "set_state cinema") {
		t.Fatalf("lumen intents:\n%s", out)
	}
	var list messages.IntentsReply
	if out, code := runCLI(t, d.URL, "intents", "--json"); code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Intents) != 2 {
		t.Fatalf("lumen intents --json: exit %d\n%s", code, out)
	}
	// The agent taught it, as the session's step.
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
	m, err := stream.GetLastMsgForSubject(ctx, "lumen.demo.evt.in.intent")
	if err != nil {
		t.Fatal(err)
	}
	var env messages.Envelope
	if err := messages.DecodeEnvelope(m.Data, &env); err != nil || !strings.HasPrefix(env.By, "agent:default:") ||
		string(env.Data) != `{"phrase":"movie night","verb":"set_state","arg":"cinema"}` {
		t.Fatalf("the intent input: %v %s", err, m.Data)
	}

	// A power cut; the same words after it need no model.
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))
	d.Kill()
	d = startDaemon(t, dir, agentArgs(srv)...)
	nc = connect(t, d.URL)
	ask("i'm going to read a book, please", 3)
	if s := state(); s != "reading" {
		t.Fatalf("after the learned request the light is %s", s)
	}
	var why messages.WhyReply
	if out, code := runCLI(t, d.URL, "why", "--json"); code != 0 || json.Unmarshal([]byte(out), &why) != nil || why.Input.By != messages.WhoLocal {
		t.Fatalf("lumen why after a learned request: exit %d\n%s", code, out)
	}

	// Deleting its state drops an intent, saying why.
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.delete_state", `{"name":"cinema"}`))
	if raw := string(r.Raw); !strings.Contains(raw, `"type":"intent"`) || !strings.Contains(raw, "state cinema was deleted") {
		t.Fatalf("delete_state reply: %s", raw)
	}
	if out := intents(); strings.Contains(out, "movie") || !strings.Contains(out, "i'm going read book") {
		t.Fatalf("lumen intents after delete_state:\n%s", out)
	}

	// Forgotten, the words go to the model again.
	if out, code := runCLI(t, d.URL, "intents", "rm", "I'm going to read a book"); code != 0 || !strings.Contains(out, "forgotten") {
		t.Fatalf("lumen intents rm: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "intents", "rm", "I'm going to read a book"); code != 1 || !strings.Contains(out, "no learned intent") {
		t.Fatalf("lumen intents rm again: exit %d\n%s", code, out)
	}
	if out := intents(); !strings.Contains(out, "no intents") {
		t.Fatalf("lumen intents after rm:\n%s", out)
	}
	ask("I'm going to read a book", 4)
	ask("Reading time", 5)
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_state", `{"name":"off"}`))

	// With no model at all, after another power cut.
	d.Kill()
	d = startDaemon(t, dir, "--model", "")
	nc = connect(t, d.URL)
	if out, code := runCLI(t, d.URL, "ask", "reading time please"); code != 0 || !strings.Contains(out, "The light is reading now.") || state() != "reading" {
		t.Fatalf("a learned request with no model: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "ask", "I'm going to read a book"); code != 1 || !strings.Contains(out, "not configured") {
		t.Fatalf("a forgotten request with no model: exit %d\n%s", code, out)
	}
	// What direct commands match is read again after a change.
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"party","r":255,"g":0,"b":255}`))
	if out, code := runCLI(t, d.URL, "ask", "party please"); code != 0 || state() != "party" {
		t.Fatalf("a direct command naming a new state: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "export"); code != 0 || strings.Contains(out, "intent") || strings.Contains(out, "reading time") {
		t.Fatalf("lumen export: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify", "--quiet"); code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, out)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}
