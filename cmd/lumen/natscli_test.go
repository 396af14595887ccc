package main_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	natsgo "github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// natsCLI runs the real nats CLI (natscli v0.3.0, built by the Taskfile
// from tools/natscli into $NATS_BIN).
func natsCLI(t *testing.T, url string, args ...string) string {
	t.Helper()
	out, err := natsRun(t, url, args...)
	if err != nil {
		t.Fatalf("nats %v: %v\n%s", args, err, out)
	}
	return out
}

// natsRun runs the real nats CLI and returns its output and error.
func natsRun(t *testing.T, url string, args ...string) (string, error) {
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
	return string(out), err
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
	lumentest.WaitFor(t, 10*time.Second, "the nats pub input to be applied", func() bool {
		return mustOK(t, request(t, nc, "lumen.kitchen.cmd.get", `{}`)).Body["state"] == "green"
	})
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

// No client, with credentials or without, can forge an output, journal
// the inputs of a light that does not run, or delete, purge or edit the
// journal, the snapshots or a light's consumer; each is tried with the
// real nats CLI. What the README promises still works: commands, inputs
// of the running lights, reading the stream.
func TestJournalPermissions(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		args  []string // of lumen up
		creds []string // of the nats CLI
		user  string   // in the URL, for lumen and nats.go
	}{
		{name: "without credentials"},
		{name: "with --user/--password", args: []string{"--user", "alice", "--password", "s3cret-pass"},
			creds: []string{"--user", "alice", "--password", "s3cret-pass"}, user: "alice:s3cret-pass@"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := startDaemon(t, t.TempDir(), append([]string{"--light", "hall"}, tt.args...)...)
			url := strings.Replace(d.URL, "nats://", "nats://"+tt.user, 1)
			nc := connect(t, url)
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			mustOK(t, request(t, nc, "lumen.hall.cmd.fire", `{"transition":"button_click"}`))
			events := func() uint64 {
				s, err := js.Stream(ctx, "LUMEN")
				if err != nil {
					t.Fatalf("the stream: %v", err)
				}
				return s.CachedInfo().State.Msgs
			}
			before := events()
			nats := func(args ...string) (string, error) {
				return natsRun(t, url, append(append([]string{"--timeout", "2s"}, tt.creds...), args...)...)
			}
			for _, args := range [][]string{
				{"pub", "lumen.hall.evt.out.state", `{"from":"off","to":"red"}`},
				{"stream", "rm", "LUMEN", "-f"},
				{"stream", "purge", "LUMEN", "-f"},
				{"stream", "purge", "LUMEN", "--subject", "lumen.hall.evt.in.fired", "-f"},
				{"stream", "rmm", "LUMEN", "1", "-f"},
				{"stream", "edit", "LUMEN", "--max-bytes", "1000", "-f"},
				{"kv", "put", "LUMEN_SNAP", "hall", "x"},
				{"kv", "del", "LUMEN_SNAP", "hall", "-f"},
				{"kv", "purge", "LUMEN_SNAP", "hall", "-f"},
				{"kv", "rm", "LUMEN_SNAP", "-f"},
				{"consumer", "rm", "LUMEN", "light-hall", "-f"},
				{"consumer", "next", "LUMEN", "light-hall"},
			} {
				// A publish is a permissions violation; JetStream's API
				// answers no client that would change the journal (the
				// daemon's account imports none of it to clients).
				out, err := nats(args...)
				if err == nil || !strings.Contains(out, "Permissions Violation") && !strings.Contains(out, "no responders") && !strings.Contains(out, "not enabled") {
					t.Errorf("nats %s: %v\n%s", strings.Join(args, " "), err, out)
				}
			}
			// Published, but no light runs there: the journal does not take it.
			if out, err := nats("pub", "lumen.ghost.evt.in.fired", `{"transition":"x"}`); err != nil {
				t.Fatalf("nats pub: %v\n%s", err, out)
			}
			if after := events(); after != before {
				t.Errorf("the stream went from %d to %d events", before, after)
			}
			// The light's commands stay the light's.
			denied := make(chan error, 1)
			pc, err := natsgo.Connect(url, natsgo.ErrorHandler(func(_ *natsgo.Conn, _ *natsgo.Subscription, err error) {
				select {
				case denied <- err:
				default:
				}
			}))
			if err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			if _, err := pc.SubscribeSync("lumen.hall.cmd.fire"); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-denied:
				if !strings.Contains(err.Error(), "Permissions Violation for Subscription") {
					t.Errorf("subscribe to a light's commands: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Error("a client could subscribe to a light's commands")
			}
			// What a client may do: commands, inputs, reading.
			natsCLI(t, url, append(tt.creds, "pub", "lumen.hall.evt.in.fired", `{"transition":"button_click"}`)...)
			lumentest.WaitFor(t, 10*time.Second, "the published input to be applied", func() bool {
				return mustOK(t, request(t, nc, "lumen.hall.cmd.get", `{}`)).Body["state"] == "green"
			})
			// Read-only: info and get (a consumer, as nats sub --stream
			// makes, is the daemon's alone).
			if out := natsCLI(t, url, append(tt.creds, "stream", "get", "LUMEN", "1")...); !strings.Contains(out, ".evt.in.") {
				t.Errorf("reading the stream: %s", out)
			}
			if out, code := runCLI(t, url, "replay", "--light", "hall", "--verify"); code != 0 {
				t.Errorf("lumen replay: %s", out)
			}
		})
	}
}
