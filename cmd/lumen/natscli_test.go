package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// natsCLI runs the real nats CLI (natscli v0.3.0, built by the Taskfile
// from tools/natscli into $NATS_BIN).
func natsCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	bin := os.Getenv("NATS_BIN")
	if bin == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("NATS_BIN is not set; run the tests with the Taskfile")
		}
		t.Skip("NATS_BIN not set (the Taskfile builds the real nats CLI)")
	}
	cmd := exec.Command(bin, append([]string{"--server", url}, args...)...)
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("nats %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func TestWithRealNatsCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "kitchen", "--light", "hall")
	nc := connect(t, d.URL)

	out := natsCLI(t, d.URL, "req", "lumen.kitchen.cmd.fire", `{"transition":"button_click"}`)
	if !strings.Contains(out, `"ok":true`) || !strings.Contains(out, `"state":"red"`) {
		t.Fatalf("nats req fire: %s", out)
	}
	// An input published straight into JetStream is applied like a command.
	natsCLI(t, d.URL, "pub", "lumen.kitchen.evt.in.fired", `{"transition":"button_click"}`)
	deadline := time.Now().Add(10 * time.Second)
	for {
		g := mustOK(t, request(t, nc, "lumen.kitchen.cmd.get", `{}`))
		if g.Body["state"] == "green" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("nats pub input not applied: %s", g.Raw)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// Errors carry the micro headers.
	out = natsCLI(t, d.URL, "req", "lumen.kitchen.cmd.set_state", `{"name":"nope"}`)
	if !strings.Contains(out, "Nats-Service-Error-Code: 404") {
		t.Fatalf("error headers: %s", out)
	}
	// Every light is a micro service instance.
	out = natsCLI(t, d.URL, "micro", "ls")
	if strings.Count(out, "Lumen light") != 2 {
		t.Fatalf("nats micro ls: %s", out)
	}
	// The history is in the LUMEN stream.
	out = natsCLI(t, d.URL, "stream", "get", "LUMEN", "--last-for", "lumen.kitchen.evt.out.state")
	if !strings.Contains(out, `"to":"green"`) {
		t.Fatalf("nats stream get: %s", out)
	}
}

func TestFleetFire(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "a", "--light", "b", "--light", "c", "--group", "down=a,b")
	nc := connect(t, d.URL)
	inbox := nc.NewRespInbox()
	sub, err := nc.SubscribeSync(inbox)
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.PublishRequest("lumen.fleet.cmd.fire", inbox, []byte(`{"transition":"button_click"}`)); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for len(seen) < 3 {
		m, err := sub.NextMsg(10 * time.Second)
		if err != nil {
			t.Fatalf("fleet replies so far %v: %v", seen, err)
		}
		var r reply
		r.Raw = m.Data
		for _, l := range []string{"a", "b", "c"} {
			if strings.Contains(string(m.Data), `"light":"`+l+`"`) {
				if seen[l] {
					t.Fatalf("light %s replied twice", l)
				}
				seen[l] = true
			}
		}
	}
	if m, err := sub.NextMsg(300 * time.Millisecond); err == nil {
		t.Fatalf("a fourth reply: %s", m.Data)
	}
	// A group reaches its members only.
	if err := nc.PublishRequest("lumen.group.down.cmd.get", inbox, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for {
		m, err := sub.NextMsg(500 * time.Millisecond)
		if err != nil {
			break
		}
		var g struct{ Light string }
		if err := json.Unmarshal(m.Data, &g); err != nil || got[g.Light] {
			t.Fatalf("group reply %s", m.Data)
		}
		got[g.Light] = true
	}
	if len(got) != 2 || !got["a"] || !got["b"] {
		t.Fatalf("group down answered by %v, want a and b", got)
	}
}

// A light whose durable consumer is deleted under it crashes, is restarted
// by its supervisor, journals the restart, and carries on where it was.
func TestLightRestartIsJournaled(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "porch")
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "porch")
	if r := mustOK(t, request(t, nc, "lumen.porch.cmd.fire", `{"transition":"button_click"}`)); r.Body["state"] != "red" {
		t.Fatalf("first click: %s", r.Raw)
	}

	natsCLI(t, d.URL, "consumer", "rm", "LUMEN", "light-porch", "--force")
	m := waitEvent(t, events, "lumen.porch.evt.out.restart", `"restarts":1`)
	if !strings.Contains(string(m.Data), "light-porch") || !strings.Contains(string(m.Data), "deleted") {
		t.Fatalf("restart event does not say which actor and why: %s", m.Data)
	}
	if !strings.Contains(d.Logs(), "light porch crashed") {
		t.Fatalf("the daemon does not log the crash:\n%s", d.Logs())
	}
	// Restarted, it resumes from the journal: the next click goes on
	// from red, and its consumer exists again.
	deadline := time.Now().Add(15 * time.Second)
	for {
		r := request(t, nc, "lumen.porch.cmd.fire", `{"transition":"button_click"}`)
		if r.Body["ok"] == true {
			if r.Body["state"] != "green" {
				t.Fatalf("after the restart the click went to %v, want green: %s", r.Body["state"], r.Raw)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the light did not come back: %s", r.Raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if out := natsCLI(t, d.URL, "consumer", "ls", "LUMEN", "--names"); !strings.Contains(out, "light-porch") {
		t.Fatalf("the consumer was not created again: %s", out)
	}
	// The restart is in the journal, and replay still agrees with it.
	if out := natsCLI(t, d.URL, "stream", "get", "LUMEN", "--last-for", "lumen.porch.evt.out.restart"); !strings.Contains(out, `"restarts":1`) {
		t.Fatalf("restart not journaled: %s", out)
	}
	if out, code := runCLI(t, d.URL, "replay", "--light", "porch", "--verify"); code != 0 {
		t.Fatalf("replay --verify after a restart: %s", out)
	}
}
