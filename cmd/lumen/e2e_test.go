package main_test

import (
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

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
