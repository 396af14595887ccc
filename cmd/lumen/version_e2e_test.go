package main_test

import (
	"os"
	"os/exec"
	"strings"
	"testing"
)

// The binary the Taskfile built (the suite's $LUMEN_BIN) in a git
// checkout says which commit it is, as the cross-build's does, not dev.
func TestVersionIsStamped(t *testing.T) {
	t.Parallel()
	if os.Getenv("LUMEN_BIN") == "" {
		t.Skip("LUMEN_BIN is unset: the binary is this test's own go build, not the Taskfile's")
	}
	describe, err := exec.Command("git", "describe", "--tags", "--always", "--dirty").Output()
	if err != nil {
		t.Skip("not a git checkout: the Taskfile stamps dev")
	}
	want := "lumen version " + strings.TrimSpace(string(describe))
	out, code := runCLI(t, "", "--version")
	if code != 0 || strings.TrimSpace(out) != want {
		t.Errorf("lumen --version: exit %d: %q, want %q (build it with the Taskfile, task build, which stamps git describe)", code, strings.TrimSpace(out), want)
	}
}
