package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// lumen get and export at a past seq or time (--at HH:MM:SS, local
// time, or RFC 3339) print the light as it was; a time it cannot read or
// a seq the daemon refuses is a sentence and exit 1. (What the daemon
// answers: actors/daemon's TestPastGetAtSeqAndTime.)
func TestGetAtPast(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	var seqs []uint64
	for range 2 {
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
		seqs = append(seqs, uint64(r.Body["seq"].(float64)))
	}
	state := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, append([]string{"get"}, args...)...)
		var g struct{ State string }
		if code != 0 || json.Unmarshal([]byte(out), &g) != nil {
			t.Fatalf("lumen get %v: exit %d\n%s", args, code, out)
		}
		return g.State
	}
	// --at HH:MM:SS (local time), once the clock is past the second of
	// the last input.
	lumentest.WaitFor(t, 3*time.Second, "lumen get --at HH:MM:SS to show the last click", func() bool {
		// Within the journal's first second, that second is before it.
		out, code := runCLI(t, d.URL, "get", "--at", time.Now().Format("15:04:05"))
		var g struct{ State string }
		return code == 0 && json.Unmarshal([]byte(out), &g) == nil && g.State == "green"
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", fmt.Sprint(seqs[0])}, "red"},
		{[]string{"--at", time.Now().UTC().Format(time.RFC3339Nano)}, "green"},
		{nil, "green"},
	} {
		if s := state(tc.args...); s != tc.want {
			t.Errorf("lumen get %v: state %s, want %s", tc.args, s, tc.want)
		}
	}
	if out, code := runCLI(t, d.URL, "export", "--seq", fmt.Sprint(seqs[0])); code != 0 || !strings.Contains(out, "states:") {
		t.Errorf("lumen export --seq: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", "999999"}, "no event of light demo"},
		{[]string{"--at", "yesterday"}, "is no time"},
	} {
		out, code := runCLI(t, d.URL, append([]string{"get"}, tc.args...)...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("lumen get %v: exit %d, want %q:\n%s", tc.args, code, tc.want, out)
		}
	}
}

// lumen history prints each configuration change, who made it and not
// the variables; lumen diff shows one as a diff of the export; lumen
// rollback says what it changed. (What the daemon does: actors/daemon's
// TestPastHistoryAndRollback.)
func TestHistoryAndRollback(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	seqOf := func(r reply) string { return fmt.Sprint(uint64(r.Body["seq"].(float64))) }
	first := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"teal","r":0,"g":128,"b":128}`)))
	mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_var", `{"name":"n","value":1}`))
	second := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"teal","on":"button_click","to":"off"}]}`)))
	third := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"teal","r":0,"g":200,"b":200}`)))

	out, code := runCLI(t, d.URL, "history")
	if code != 0 {
		t.Fatalf("lumen history: exit %d\n%s", code, out)
	}
	for _, want := range []string{first + " ", "+state teal", second + " ", "+rule r6", third + " ", "~state teal"} {
		if !strings.Contains(out, want) {
			t.Errorf("lumen history lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "var") {
		t.Errorf("lumen history shows variables:\n%s", out)
	}
	// The third change as a diff: teal's green and blue changed, one
	// hunk with three lines of context around them.
	out, code = runCLI(t, d.URL, "diff", third)
	changed := 0
	for _, l := range strings.Split(out, "\n") {
		if (strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+")) && !strings.HasPrefix(l, "---") && !strings.HasPrefix(l, "+++") {
			changed++
		}
	}
	if code != 0 || !strings.Contains(out, "-    g: 128") || !strings.Contains(out, "+    g: 200") || changed != 4 || strings.Count(out, "\n@@ ") != 1 ||
		!strings.Contains(out, "+++ light demo after input "+third) {
		t.Errorf("lumen diff %s: exit %d, %d lines changed\n%s", third, code, changed, out)
	}
	if out, code := runCLI(t, d.URL, "diff", first, third); code != 0 || !strings.Contains(out, "+  - id: r6") {
		t.Errorf("lumen diff %s %s: exit %d\n%s", first, third, code, out)
	}
	if out, code := runCLI(t, d.URL, "diff", "1"); code == 0 || !strings.Contains(out, "changed no configuration") {
		t.Errorf("lumen diff of an input that changed no configuration: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "rollback", first); code != 0 || !strings.Contains(out, "r6") {
		t.Fatalf("lumen rollback %s: exit %d\n%s", first, code, out)
	}
	out, _ = runCLI(t, d.URL, "history")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	// Who made each change: the seed, bare nats requests, a rollback.
	if !strings.Contains(lines[1], " local ") || !strings.Contains(lines[2], " nats ") || !strings.Contains(lines[len(lines)-1], " rollback ") ||
		!strings.Contains(lines[len(lines)-1], "rollback to "+first+":") {
		t.Errorf("lumen history does not say who made the changes:\n%s", out)
	}
	for _, args := range [][]string{{"rollback", "999999"}, {"rollback", "abc"}} {
		if out, code := runCLI(t, d.URL, args...); code == 0 {
			t.Errorf("lumen %v: exit 0\n%s", args, out)
		}
	}
}

// lumen diff of a state inserted among the others is one hunk: the new
// state's lines, each with +, and unchanged lines around them; no line
// of another state is paired with one of it.
func TestDiffOfAnInsertedState(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	exported, code := runCLI(t, d.URL, "export")
	if code != 0 || !strings.Contains(exported, "  - name: green\n") {
		t.Fatalf("lumen export: exit %d\n%s", code, exported)
	}
	file := filepath.Join(t.TempDir(), "cosy.yaml")
	cosy := "  - name: cosy\n    r: 255\n    g: 140\n    b: 40\n"
	if err := os.WriteFile(file, []byte(strings.Replace(exported, "  - name: green\n", cosy+"  - name: green\n", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 {
		t.Fatalf("lumen apply: exit %d\n%s", code, out)
	}
	out, code := runCLI(t, d.URL, "history", "--json")
	var h messages.HistoryReply
	if code != 0 || json.Unmarshal([]byte(out), &h) != nil || len(h.Changes) == 0 {
		t.Fatalf("lumen history --json: exit %d\n%s", code, out)
	}
	out, code = runCLI(t, d.URL, "diff", fmt.Sprint(h.Changes[len(h.Changes)-1].Seq))
	var added, removed []string
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
		case strings.HasPrefix(l, "+"):
			added = append(added, l[1:])
		case strings.HasPrefix(l, "-"):
			removed = append(removed, l[1:])
		}
	}
	if code != 0 || strings.Count(out, "\n@@ ") != 1 || len(removed) != 0 || strings.Join(added, "\n")+"\n" != cosy ||
		!strings.Contains(out, "\n   - name: green\n") || strings.Contains(out, "name: blue") {
		t.Errorf("lumen diff: exit %d, want one hunk adding cosy with context:\n%s", code, out)
	}
}
