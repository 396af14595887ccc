package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// lumen apply -f on an exported file says the state stays, and with
// --state says where it goes, dry run or not; an unknown --state is
// refused naming it (issue 26, item 1). The light's side is
// actors/daemon's TestReapplyExportKeepsState.
func TestReapplyExportKeepsState(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	state := func() string {
		return fmt.Sprint(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"])
	}
	cli := func(args ...string) string {
		t.Helper()
		out, code := runCLI(t, d.URL, args...)
		if code != 0 {
			t.Fatalf("lumen %s: exit %d\n%s", strings.Join(args, " "), code, out)
		}
		return out
	}
	cli("state", "red")
	file := filepath.Join(t.TempDir(), "f.yaml")
	if err := os.WriteFile(file, []byte(cli("export")), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := cli("apply", "-f", file, "--dry-run"); strings.Contains(out, "state") && strings.Contains(out, "→") {
		t.Errorf("the dry run says the state moves:\n%s", out)
	}
	if out := cli("apply", "-f", file); strings.Contains(out, "red → off") || state() != "red" {
		t.Fatalf("re-applying the export moved the light to %s:\n%s", state(), out)
	}
	if out := cli("apply", "-f", file, "--state", "blue", "--dry-run"); !strings.Contains(out, "state: red → blue") || state() != "red" {
		t.Errorf("apply --state --dry-run (state %s):\n%s", state(), out)
	}
	if out := cli("apply", "-f", file, "--state", "blue"); !strings.Contains(out, "red → blue") || state() != "blue" {
		t.Fatalf("apply --state blue: the light is %s\n%s", state(), out)
	}
	out, code := runCLI(t, d.URL, "apply", "-f", file, "--state", "purple")
	if code != 1 || !strings.Contains(out, `"purple"`) || state() != "blue" {
		t.Errorf("apply --state purple: exit %d, state %s\n%s", code, state(), out)
	}
}

// lumen rule add refuses a layer that ends after 0 fires or lasts 0s,
// with the range it takes (issue 26, item 2); the wire's refusal is
// actors/daemon's TestLayerOfNothingRefusedOnTheWire.
func TestLayerOfNothingRefused(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	rules := func() int { return len(mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["rules"].([]any)) }
	before := rules()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--fires", "0"}, "at least 1"},
		{[]string{"--fires", "-2"}, "at least 1"},
		{[]string{"--for", "0s"}, "from 1ms"},
		{[]string{"--for", "100us"}, "from 1ms"},
	} {
		args := append([]string{"rule", "add", "*", "button_click", "red"}, tc.args...)
		out, code := runCLI(t, d.URL, args...)
		if code == 0 || !strings.Contains(out, tc.want) || rules() != before {
			t.Errorf("lumen %s: exit %d, %d rules (before %d)\n%s\nwant %q", strings.Join(args, " "), code, rules(), before, out, tc.want)
		}
	}
}
