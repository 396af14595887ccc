package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// children lists the processes whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, f := range tasks {
		b, _ := os.ReadFile(f)
		for _, s := range strings.Fields(string(b)) {
			if n, err := strconv.Atoi(s); err == nil {
				out = append(out, n)
			}
		}
	}
	return out
}

// TestCompilerDiesWithLumen: on a first start lumen up compiles the tools'
// guest in a child process; a daemon killed meanwhile (a power cut, a
// test) takes that compiler with it rather than leaving it to run and
// hold its hundreds of MB.
func TestCompilerDiesWithLumen(t *testing.T) {
	// Not parallel: the daemon inherits the environment. The JavaScript
	// guest takes seconds to compile, time enough to find the child.
	if os.Getenv("LUMEN_GUEST_WASM") == "" {
		t.Skip("LUMEN_GUEST_WASM is not set (task test sets it)")
	}
	cache := t.TempDir()
	t.Setenv("LUMEN_PLUGIN_CACHE", cache)
	t.Setenv("LUMEN_GUEST_CWASM", "")
	d := startDaemon(t, t.TempDir())
	var child int
	lumentest.WaitFor(t, 30*time.Second, "lumen up to start its compiler", func() bool {
		for _, c := range children(t, d.Pid()) {
			if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", c)); err == nil && strings.Contains(string(b), "precompile") {
				child = c
				return true
			}
		}
		return strings.Contains(d.Logs(), "the tool engine is ready")
	})
	if child == 0 {
		t.Fatalf("the guest was compiled without a child process:\n%s", d.Logs())
	}
	d.Kill()
	lumentest.WaitFor(t, 10*time.Second, "the compiler to end with lumen", func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", child))
		// Gone, or a zombie nobody has reaped yet.
		return err != nil || strings.Contains(string(b), ") Z ")
	})
	// Killed, not finished: it wrote no compiled guest (a compiler left
	// running would have, whenever it ended).
	ents, _ := os.ReadDir(cache)
	for _, e := range ents {
		if info, err := e.Info(); err == nil && info.Size() > 0 {
			t.Errorf("the compiler wrote %s (%d bytes) after lumen was killed", e.Name(), info.Size())
		}
	}
}
