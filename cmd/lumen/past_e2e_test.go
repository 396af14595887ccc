package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// lumen get and export at a past seq or time: the light as it was,
// rebuilt from the journal; the present is untouched. A seq or time the
// journal cannot answer for is a sentence and exit 1.
func TestGetAtPast(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	var seqs []uint64
	for range 3 {
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
		seqs = append(seqs, uint64(r.Body["seq"].(float64)))
	}
	// Between the two clicks: just after the journal stored the last
	// event before the second (the times are the journal's own).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	stream, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	before, err := stream.GetMsg(ctx, seqs[1]-1)
	if err != nil {
		t.Fatal(err)
	}
	between := before.Time.Add(time.Nanosecond)
	mustOK(t, request(t, nc, "lumen.demo.cmd.set_var", `{"name":"note","value":"after"}`))
	state := func(args ...string) (string, map[string]any) {
		t.Helper()
		out, code := runCLI(t, d.URL, append([]string{"get"}, args...)...)
		if code != 0 {
			t.Fatalf("lumen get %v: exit %d\n%s", args, code, out)
		}
		var g map[string]any
		if err := json.Unmarshal([]byte(out), &g); err != nil {
			t.Fatalf("lumen get %v: %s", args, out)
		}
		return g["state"].(string), g
	}
	// --at HH:MM:SS (local time), once the clock is past the second of
	// the last input.
	lumentest.WaitFor(t, 3*time.Second, "lumen get --at HH:MM:SS to show the last click", func() bool {
		// Within the journal's first second, that second is before it.
		out, code := runCLI(t, d.URL, "get", "--at", time.Now().Format("15:04:05"))
		var g struct{ State string }
		return code == 0 && json.Unmarshal([]byte(out), &g) == nil && g.State == "blue"
	})
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", fmt.Sprint(seqs[0])}, "red"},
		{[]string{"--seq", fmt.Sprint(seqs[1])}, "green"},
		{[]string{"--seq", fmt.Sprint(seqs[1] + 1)}, "green"}, // an output of the second click
		{[]string{"--at", between.UTC().Format(time.RFC3339Nano)}, "red"},
		{nil, "blue"},
	} {
		if s, _ := state(tc.args...); s != tc.want {
			t.Errorf("lumen get %v: state %s, want %s", tc.args, s, tc.want)
		}
	}
	if _, g := state("--seq", fmt.Sprint(seqs[2])); g["vars"].(map[string]any)["note"] != nil {
		t.Errorf("the past has a variable set after it: %v", g["vars"])
	}
	if out, code := runCLI(t, d.URL, "export", "--seq", fmt.Sprint(seqs[0])); code != 0 || !strings.Contains(out, "states:") {
		t.Errorf("lumen export --seq: exit %d\n%s", code, out)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--seq", "999999"}, "no event of light demo"},
		{[]string{"--at", time.Now().Add(time.Hour).UTC().Format(time.RFC3339)}, "in the future"},
		{[]string{"--at", "2020-01-01T00:00:00Z"}, "starts at"},
		{[]string{"--at", "yesterday"}, "is no time"},
	} {
		out, code := runCLI(t, d.URL, append([]string{"get"}, tc.args...)...)
		if code == 0 || !strings.Contains(out, tc.want) {
			t.Errorf("lumen get %v: exit %d, want %q:\n%s", tc.args, code, tc.want, out)
		}
	}
}

// lumen history lists each configuration change; lumen rollback makes the
// configuration what it was, byte for byte as export showed it then, and
// is itself a change that can be rolled back.
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
	// The configuration as export prints it, but for the variables, which
	// a rollback leaves as they are.
	export := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, append([]string{"export"}, args...)...)
		if code != 0 {
			t.Fatalf("lumen export %v: exit %d\n%s", args, code, out)
		}
		cfg, _, _ := strings.Cut(out, "\nvars:")
		return cfg
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
	thenCfg, nowCfg := export("--seq", first), export()
	if out, code := runCLI(t, d.URL, "rollback", first); code != 0 || !strings.Contains(out, "r6") {
		t.Fatalf("lumen rollback %s: exit %d\n%s", first, code, out)
	}
	if got := export(); got != thenCfg {
		t.Errorf("after rollback to %s the configuration is\n%s\nwant\n%s", first, got, thenCfg)
	}
	out, _ = runCLI(t, d.URL, "history")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	rolled := strings.Fields(lines[len(lines)-1])[0]
	if rolled == third {
		t.Fatalf("the rollback is not in the history:\n%s", out)
	}
	// Who made each change: the seed, bare nats requests, a rollback.
	if !strings.Contains(lines[1], " local ") || !strings.Contains(lines[2], " nats ") || !strings.Contains(lines[len(lines)-1], " rollback ") ||
		!strings.Contains(lines[len(lines)-1], "rollback to "+first+":") {
		t.Errorf("lumen history does not say who made the changes:\n%s", out)
	}
	// Rolled back itself: to just before the rollback.
	if out, code := runCLI(t, d.URL, "rollback", third); code != 0 {
		t.Fatalf("lumen rollback %s: exit %d\n%s", third, code, out)
	}
	if got := export(); got != nowCfg {
		t.Errorf("after rolling the rollback back the configuration is\n%s\nwant\n%s", got, nowCfg)
	}
	if v := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)["n"]; v != 1.0 {
		t.Errorf("a rollback changed a variable: n = %v", v)
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
