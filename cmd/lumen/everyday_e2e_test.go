package main_test

import (
	"strings"
	"testing"
)

// Everyday commands with no model, from the CLI: lumen ask to one light
// turns off another, a group or every light, and says what changed; a
// request only the model could do but a command of the CLI does exits 1
// with that command.
func TestEverydayE2E(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir(), "--light", "hall", "--light", "kitchen", "--light", "office", "--group", "upstairs=office")
	lights := []string{"hall", "kitchen", "office"}
	for _, l := range lights {
		if out, code := runCLI(t, d.URL, "state", "red", "--light", l); code != 0 {
			t.Fatalf("state red --light %s: exit %d\n%s", l, code, out)
		}
	}
	state := func(light string) string {
		t.Helper()
		out, _ := runCLI(t, d.URL, "state", "--light", light)
		return strings.TrimSpace(out)
	}
	ask := func(text string) (string, int) {
		t.Helper()
		return runCLI(t, d.URL, "ask", "--light", "hall", text)
	}

	if out, code := ask("turn off the kitchen light"); code != 0 || !strings.Contains(out, "kitchen: off.") {
		t.Errorf("ask: exit %d\n%s", code, out)
	}
	if k, h := state("kitchen"), state("hall"); k != "off" || h != "red" {
		t.Fatalf("turn off the kitchen light: kitchen %s, hall %s", k, h)
	}
	if out, code := ask("upstairs lights off"); code != 0 || !strings.Contains(out, "office: off.") {
		t.Errorf("ask: exit %d\n%s", code, out)
	}
	if o, h := state("office"), state("hall"); o != "off" || h != "red" {
		t.Fatalf("upstairs lights off: office %s, hall %s", o, h)
	}
	if out, code := ask("all lights off"); code != 0 || !strings.Contains(out, "hall: off; kitchen: off; office: off.") {
		t.Errorf("ask: exit %d\n%s", code, out)
	}
	for _, l := range lights {
		if s := state(l); s != "off" {
			t.Errorf("all lights off: %s is %s", l, s)
		}
	}
	suggested := []string{"rule", "add", "*", "button_click", "red", "--fires", "3", "--light", "hall"}
	if out, code := ask("next 3 clicks red"); code != 1 || !strings.Contains(out, "lumen rule add '*' button_click red --fires 3 --light hall") {
		t.Fatalf("next 3 clicks red: exit %d\n%s", code, out)
	}
	// The command said does it: a click of the hall goes red, not from
	// green to blue as the demo's rules would.
	runCLI(t, d.URL, "state", "green", "--light", "hall")
	if out, code := runCLI(t, d.URL, suggested...); code != 0 {
		t.Fatalf("lumen %s: exit %d\n%s", strings.Join(suggested, " "), code, out)
	}
	if out, code := runCLI(t, d.URL, "fire", "button_click", "--light", "hall"); code != 0 || state("hall") != "red" {
		t.Errorf("a click after the suggested rule: exit %d, hall %s\n%s", code, state("hall"), out)
	}
}
