package main_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// subscribeEvents collects every event of a light.
func subscribeEvents(t *testing.T, nc *nats.Conn, light string) chan *nats.Msg {
	t.Helper()
	ch := make(chan *nats.Msg, 4096)
	sub, err := nc.ChanSubscribe("lumen."+light+".evt.>", ch)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return ch
}

func waitEvent(t *testing.T, ch chan *nats.Msg, subj string, contains string) *nats.Msg {
	t.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-ch:
			if m.Subject == subj && strings.Contains(string(m.Data), contains) {
				return m
			}
		case <-deadline:
			t.Fatalf("no event on %s containing %q", subj, contains)
		}
	}
}

func TestCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	out, code := runCLI(t, d.URL, "fire", "button_click")
	if code != 0 || !strings.Contains(out, "off → ") {
		t.Fatalf("fire: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "state")
	if code != 0 || strings.TrimSpace(out) == "off" {
		t.Fatalf("state: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "state", "nosuch")
	if code != 1 || !strings.Contains(out, "nosuch") {
		t.Fatalf("unknown state: %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "fire")
	if code != 2 {
		t.Fatalf("usage error exit 2, got %d %s", code, out)
	}
	out, code = runCLI(t, d.URL, "fire", "x", "--light", "nosuch")
	if code != 1 || !strings.Contains(out, "no light named") {
		t.Fatalf("unknown light: %d %s", code, out)
	}
	// export → apply round trip.
	exp, code := runCLI(t, d.URL, "export", "--format", "json")
	if code != 0 {
		t.Fatalf("export: %s", exp)
	}
	for _, cmd := range []string{"fire", "up", "replay", "tail", "apply", "export", "get", "state"} {
		out, code := runCLI(t, d.URL, cmd, "--help")
		if code != 0 || !strings.Contains(out, "Examples:") {
			t.Errorf("%s --help has no example: %s", cmd, out)
		}
	}
}

func TestTail(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	cmd := exec.Command(lumenBin(t), "tail", "--server", d.URL)
	out := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	nc := connect(t, d.URL)
	lumentest.WaitFor(t, 15*time.Second, "tail to start", func() bool { return strings.Contains(out.String(), "following") })
	mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	lumentest.WaitFor(t, 15*time.Second, "tail's state line", func() bool {
		return strings.Contains(out.String(), "state  off → red  [button_click by rule r1]")
	})
	if !strings.Contains(out.String(), "demo in  fired") {
		t.Fatalf("tail shows no input line: %s", out)
	}
}
