package daemon_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
)

// intentsList is the demo light's learned intents.
func intentsList(t *testing.T, nc *nats.Conn) []messages.Intent {
	t.Helper()
	var r messages.IntentsReply
	if b, code := request(t, nc, messages.VerbIntents, `{}`); code != "" || json.Unmarshal(b, &r) != nil {
		t.Fatalf("intents: %s %s", code, b)
	}
	return r.Intents
}

// intentsHas says whether list has phrase doing verb with arg.
func intentsHas(list []messages.Intent, phrase, verb, arg string) bool {
	for _, in := range list {
		if in.Phrase == phrase && in.Verb == verb && in.Arg == arg {
			return true
		}
	}
	return false
}

// Answers learned once: the model resolves a request into one setState
// and the light learns it; after a restart the same words run locally,
// the scripted model seeing no request; deleting the state drops an
// intent, delete_intent forgets one (the words go to the model again),
// and a learned intent works with no model configured. Intents are
// journaled, replay verifies, the exported configuration leaves them out.
func TestLearnedIntents(t *testing.T) {
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{agentScripted("setState", `{"name":"reading","speak_directly":true}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("getStates", `{}`)}},
		agenttest.Step{Calls: []agenttest.Call{agentScripted("setState", `{"name":"cinema"}`), agentScripted("done", `{"message":"Enjoy the film."}`)}},
		agenttest.Step{Content: "Enjoy your book."}, // after delete_intent
		agenttest.Step{Calls: []agenttest.Call{agentScripted("setState", `{"name":"reading","speak_directly":true}`)}},
	)
	defer srv.Close()
	dir := t.TempDir()
	var d *daemon.Daemon
	var nc *nats.Conn
	up := func(model bool) {
		t.Helper()
		if d != nil {
			nc.Close()
			if err := d.Close(); err != nil {
				t.Fatal(err)
			}
		}
		d = startWith(t, func(c *daemon.Config) {
			c.Data = dir
			if model {
				c.Agent.BaseURL, c.Agent.Model = srv.BaseURL(), "scripted"
			}
		}, "demo")
		nc = connectTo(t, d)
	}
	up(true)
	mustOK(t, nc, messages.VerbApply, `{"states":[{"name":"reading","r":255,"g":190,"b":120},{"name":"cinema","r":20,"g":0,"b":40}],
		"rules":[{"from":"*","on":"button_hold","to":"off"}]}`)

	ask := func(text string, wantModelCalls int) map[string]any {
		t.Helper()
		body, _ := json.Marshal(messages.AskRequest{Text: text})
		r := agentOK(t, nc, "demo", messages.VerbAsk, string(body))
		if n := len(srv.Requests()); n != wantModelCalls {
			t.Fatalf("after ask %q the model had %d requests, want %d: %s", text, n, wantModelCalls, r.Raw)
		}
		return r.Body
	}
	state := func() any { return mustOK(t, nc, messages.VerbGet, `{}`)["state"] }

	ask("I'm going to read a book", 1)
	ask("Movie night!", 3)
	if list := intentsList(t, nc); len(list) != 2 || !intentsHas(list, "i'm going read book", messages.VerbSetState, "reading") ||
		!intentsHas(list, "movie night", messages.VerbSetState, "cinema") {
		t.Fatalf("intents: %+v", list)
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

	// A restart; the same words after it need no model.
	mustOK(t, nc, messages.VerbSetState, `{"name":"off"}`)
	up(true)
	ask("i'm going to read a book, please", 3)
	if s := state(); s != "reading" {
		t.Fatalf("after the learned request the light is %v", s)
	}
	var why messages.WhyReply
	if b, code := request(t, nc, messages.VerbWhy, `{}`); code != "" || json.Unmarshal(b, &why) != nil || why.Input.By != messages.WhoLocal {
		t.Fatalf("why after a learned request: %s %s", code, b)
	}

	// Deleting its state drops an intent, saying why.
	b, code := request(t, nc, messages.VerbDeleteState, `{"name":"cinema"}`)
	if raw := string(b); code != "" || !strings.Contains(raw, `"type":"intent"`) || !strings.Contains(raw, "state cinema was deleted") {
		t.Fatalf("delete_state reply: %s %s", code, raw)
	}
	if list := intentsList(t, nc); len(list) != 1 || !intentsHas(list, "i'm going read book", messages.VerbSetState, "reading") {
		t.Fatalf("intents after delete_state: %+v", list)
	}

	// Forgotten, the words go to the model again.
	mustOK(t, nc, messages.VerbDeleteIntent, `{"phrase":"I'm going to read a book"}`)
	if b, code := request(t, nc, messages.VerbDeleteIntent, `{"phrase":"I'm going to read a book"}`); code != "404" || !strings.Contains(string(b), "no learned intent") {
		t.Fatalf("delete_intent again: %s %s", code, b)
	}
	if list := intentsList(t, nc); len(list) != 0 {
		t.Fatalf("intents after delete_intent: %+v", list)
	}
	ask("I'm going to read a book", 4)
	ask("Reading time", 5)
	mustOK(t, nc, messages.VerbSetState, `{"name":"off"}`)

	// With no model at all, after another restart.
	up(false)
	if r := mustOK(t, nc, messages.VerbAsk, `{"text":"reading time please"}`); r["answer"] != "The light is reading now." || state() != "reading" {
		t.Fatalf("a learned request with no model: %v", r)
	}
	if r := agentCall(t, nc, "demo", messages.VerbAsk, `{"text":"I'm going to read a book"}`, 10*time.Second); r.Code != "409" || !strings.Contains(r.Desc, "LUMEN_MODEL") {
		t.Fatalf("a forgotten request with no model: %s %s %s", r.Code, r.Desc, r.Raw)
	}
	// What direct commands match is read again after a change.
	mustOK(t, nc, messages.VerbCreateState, `{"name":"party","r":255,"g":0,"b":255}`)
	mustOK(t, nc, messages.VerbAsk, `{"text":"party please"}`)
	if s := state(); s != "party" {
		t.Fatalf("a direct command naming a new state: the light is %v", s)
	}
	var g messages.GetReply
	if b, code := request(t, nc, messages.VerbGet, `{}`); code != "" || json.Unmarshal(b, &g) != nil {
		t.Fatalf("get: %s %s", code, b)
	}
	yaml, err := messages.ToYAML(g.Config())
	if err != nil || strings.Contains(string(yaml), "intent") || strings.Contains(string(yaml), "reading time") {
		t.Fatalf("the exported configuration: %v\n%s", err, yaml)
	}
	verifyReplay(t, nc, "demo")
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}
