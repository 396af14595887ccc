package main_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/lumentest"
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
	events := lumentest.Events(t, nc, "demo")
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
	lumentest.WaitEvent(t, events, "lumen.demo.evt.out.var", `"name":"n","unset":true`)
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
			`type.yaml:9: rules[1].priority: must be an integer between -1000000 and 1000000, not "high"`},
		{"state.yaml", "states:\n  - name: red\n    r: 255\n  - name: blue\n    b: 'vars.x +'\n", `state.yaml:5:16: state "blue": channel b has a syntax error`},
		// An unknown key where it is written, with the keys there are.
		{"key.yaml", "initial: off\nstates:\n  - {name: red, r: 255}\nstats:\n  - x\n", `key.yaml:4: stats: unknown field; check the spelling against the documented fields: aliases, confirm_empty, dry_run, functions, if_seq, initial, layers, on_state, power_on, room, rules`},
		// A broken expression on line 5, at its column, in words the user
		// wrote (no ")" or ";" of the wrapper it is compiled in).
		{"expr.yaml", "states:\n  - name: red\n    r: 255\n    g: 0\n    b: (frame * 2\n", `expr.yaml:5:17: state "red": channel b has a syntax error at the end (it ends before it is complete`},
	}
	for _, tt := range tests {
		p := filepath.Join(dir, tt.name)
		if err := os.WriteFile(p, []byte(tt.body), 0o600); err != nil {
			t.Fatal(err)
		}
		out, code := runCLI(t, d.URL, "apply", "-f", p)
		if code != 1 || !strings.Contains(out, tt.want) || strings.Contains(out, "token") {
			t.Errorf("lumen apply -f %s: exit %d\n%s\nwant %q", tt.name, code, out, tt.want)
		}
	}
}

// apply --dry-run checks a file and says what it would change, changing
// nothing; apply says what it changed; re-applying a hand-written file
// keeps the ids of the rules that did not change, so delete_rules by id
// still finds them.
func TestApplyDryRunAndStableRuleIDs(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	file := filepath.Join(t.TempDir(), "light.yaml")
	write := func(body string) {
		if err := os.WriteFile(file, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	const base = "states:\n  - {name: red, r: 255}\n  - {name: blue, b: 255}\nrules:\n  - {from: off, on: button_click, to: red}\n  - {from: red, on: button_click, to: blue}\n"
	write(base)
	model := func() string { return string(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Raw) }
	before := model()
	out, code := runCLI(t, d.URL, "apply", "-f", file, "--dry-run")
	if code != 0 || !strings.Contains(out, "dry run, nothing applied: states: ~red ~blue -green; rules: +r6 -r2 -r3 -r4 -r5; vars: unchanged") {
		t.Fatalf("apply --dry-run: exit %d\n%s", code, out)
	}
	if after := model(); after != before {
		t.Fatalf("a dry run changed the light:\nbefore %s\nafter  %s", before, after)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 || !strings.Contains(out, "changed: states: ~red ~blue -green; rules: +r6 -r2 -r3 -r4 -r5") {
		t.Fatalf("apply: exit %d\n%s", code, out)
	}
	// The same file again: nothing changes, the ids stay.
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 || !strings.Contains(out, "changed: states: unchanged; rules: unchanged; vars: unchanged") {
		t.Fatalf("apply again: exit %d\n%s", code, out)
	}
	// One rule changed: only it gets a new id; the demo's r1 is still r1.
	write(strings.Replace(base, "to: blue}", "to: blue, priority: 5}", 1))
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 || !strings.Contains(out, "rules: +r7 -r6") {
		t.Fatalf("apply with one rule changed: exit %d\n%s", code, out)
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.delete_rules", `{"ids":["r1"]}`))
	// A file the light refuses is refused by the dry run too, at its line.
	write(base + "  - {from: red, on: x, to: nowhere}\n")
	if out, code := runCLI(t, d.URL, "apply", "-f", file, "--dry-run"); code != 1 || !strings.Contains(out, "light.yaml:7:") || !strings.Contains(out, `to names state "nowhere"`) {
		t.Fatalf("a dry run of a broken file: exit %d\n%s", code, out)
	}
}
