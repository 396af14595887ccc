package main_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/messages"
)

// lumen intents lists what the light learned (in words and as JSON),
// lumen intents rm forgets one and says so, and exits 1 for one it does
// not know; lumen export leaves intents out. How intents are learned,
// kept across restarts and dropped is actors/daemon's TestLearnedIntents.
func TestIntentsCLI(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{scripted("setState", `{"name":"reading","speak_directly":true}`)}},
	)
	defer srv.Close()
	d := startDaemon(t, t.TempDir(), agentArgs(srv)...)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"reading","r":255,"g":190,"b":120}`))
	if out, code := runCLI(t, d.URL, "ask", "I'm going to read a book"); code != 0 {
		t.Fatalf("lumen ask: exit %d\n%s\n%s", code, out, d.Logs())
	}
	if out, code := runCLI(t, d.URL, "intents"); code != 0 || !strings.Contains(out, "i'm going read book") || !strings.Contains(out, "set_state reading") {
		t.Fatalf("lumen intents: exit %d\n%s", code, out)
	}
	var list messages.IntentsReply
	if out, code := runCLI(t, d.URL, "intents", "--json"); code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list.Intents) != 1 {
		t.Fatalf("lumen intents --json: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "export"); code != 0 || strings.Contains(out, "intent") || strings.Contains(out, "read book") {
		t.Fatalf("lumen export: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "intents", "rm", "I'm going to read a book"); code != 0 || !strings.Contains(out, "forgotten") {
		t.Fatalf("lumen intents rm: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "intents", "rm", "I'm going to read a book"); code != 1 || !strings.Contains(out, "no learned intent") {
		t.Fatalf("lumen intents rm again: exit %d\n%s", code, out)
	}
	if out, _ := runCLI(t, d.URL, "intents"); !strings.Contains(out, "no intents") {
		t.Fatalf("lumen intents after rm:\n%s", out)
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
}
