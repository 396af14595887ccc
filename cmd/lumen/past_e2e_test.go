package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"
)

// lumen get and export at a past seq or time: the light as it was,
// rebuilt from the journal; the present is untouched. A seq or time the
// journal cannot answer for is a sentence and exit 1.
func TestGetAtPast(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	var seqs []uint64
	var between time.Time
	for i := range 3 {
		r := mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
		seqs = append(seqs, uint64(r.Body["seq"].(float64)))
		if i == 0 {
			time.Sleep(50 * time.Millisecond)
			between = time.Now()
			time.Sleep(50 * time.Millisecond)
		}
	}
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
