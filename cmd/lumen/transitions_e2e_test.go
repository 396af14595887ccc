package main_test

import (
	"strings"
	"testing"
)

// The CLI over a custom transition (its behaviour is actors/daemon's
// TestCustomTransition): tool run runs its predicate, tool rm refuses it
// naming the CLI's command, and that command deletes it.
func TestCustomTransitionCLI(t *testing.T) {
	needGuest(t)
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.define_transition", `{"name":"door_open","code":"return false","poll_interval_ms":3600000}`))
	if out, code := runCLI(t, d.URL, "tool", "run", "door_open"); code != 0 || !strings.Contains(out, "false") {
		t.Fatalf("lumen tool run door_open: %d %s", code, out)
	}
	if out, code := runCLI(t, d.URL, "tool", "rm", "door_open"); code != 1 || !strings.Contains(out, `'lumen source rm --transition' "door_open"`) {
		t.Fatalf("tool rm of a transition's predicate: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "source", "rm", "--transition", "door_open"); code != 0 {
		t.Fatalf("source rm --transition: exit %d:\n%s", code, out)
	}
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.list_tools", `{}`)); strings.Contains(string(r.Raw), "door_open") {
		t.Fatalf("the predicate tool outlived its transition: %s", r.Raw)
	}
}
