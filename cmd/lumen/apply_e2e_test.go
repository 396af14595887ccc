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
