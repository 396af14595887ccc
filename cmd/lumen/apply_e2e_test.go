package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An empty file does not empty the light: apply refuses it and says how
// to mean it, and --replace-all does it.
func TestApplyEmptyFile(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	empty := filepath.Join(t.TempDir(), "empty.yaml")
	if err := os.WriteFile(empty, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	states := func() int { return len(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["states"].([]any)) }
	before := states()
	for _, args := range [][]string{{"apply", "-f", empty}, {"apply", "-f", "-"}} {
		out, code := runCLI(t, d.URL, args...)
		if code != 1 || !strings.Contains(out, "--replace-all") || states() != before {
			t.Fatalf("lumen %v: exit %d, %d states (before %d):\n%s", args, code, states(), before, out)
		}
	}
	if r := request(t, nc, "lumen.demo.cmd.apply", `{}`); r.Code != "400" || !strings.Contains(r.Header, "confirm_empty") {
		t.Fatalf("apply {} over NATS: %s", r.Raw)
	}
	if out, code := runCLI(t, d.URL, "apply", "--replace-all", "-f", empty); code != 0 || states() != 1 {
		t.Fatalf("apply --replace-all: exit %d, %d states:\n%s", code, states(), out)
	}
}

// A file without vars keeps the light's variables; one with vars replaces
// them, and tail shows what changed.
func TestApplyKeepsVariables(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	events := subscribeEvents(t, nc, "demo")
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_var", `{"name":"n","value":3}`))
	dir := t.TempDir()
	file := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	vars := func() map[string]any {
		return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file("a.yaml", "states: [{name: red, r: 255, g: 0, b: 0}]\nrules: []\n")); code != 0 || vars()["n"] != 3.0 {
		t.Fatalf("apply without vars: exit %d, vars %v\n%s", code, vars(), out)
	}
	out, code := runCLI(t, d.URL, "apply", "-f", file("b.yaml", "states: [{name: red, r: 255, g: 0, b: 0}]\nrules: []\nvars: {m: 1}\n"))
	if code != 0 || vars()["n"] != nil || vars()["m"] != 1.0 || !strings.Contains(out, "var    n unset") || !strings.Contains(out, "var    m = 1") {
		t.Fatalf("apply with vars: exit %d, vars %v\n%s", code, vars(), out)
	}
	waitEvent(t, events, "lumen.demo.evt.out.var", `"name":"n","unset":true`)
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify", "--quiet"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}
}

// A mistake in a file is reported at the file's line, with the field's
// path: a bad indent where it is, a wrong type by its field, a refusal
// of the light at the thing it names.
func TestApplyErrorsPointAtTheLine(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	dir := t.TempDir()
	tests := []struct{ name, body, want string }{
		{"indent.yaml", "states:\n  - name: red\n    r: 255\n   g: 0\n", "indent.yaml:4: invalid YAML: did not find expected '-' indicator"},
		{"type.yaml", "states:\n  - name: red\n    r: 255\nrules:\n  - {from: off, on: click, to: red}\n  - from: red\n    on: click\n    to: off\n    priority: high\n",
			`type.yaml:9: apply: rules[1].priority: must be an integer between -1000000 and 1000000, not "high"`},
		{"state.yaml", "states:\n  - name: red\n    r: 255\n  - name: blue\n    b: 'vars.x +'\n", `state.yaml:4: state "blue": channel b has a syntax error`},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, d.URL, "apply", "-f", p)
		if code != 1 || !strings.Contains(out, tt.want) {
			t.Errorf("lumen apply -f %s: exit %d\n%s\nwant %q", tt.name, code, out, tt.want)
		}
	}
}
