package main_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/plugins"
)

// `lumen tool precompile` writes the guest compiled ahead of time, and
// `lumen up` loads it from there instead of compiling; --check says
// whether a file would be used, without compiling. A tiny Go guest
// stands in for the JavaScript one: the paths are the same, the compile
// takes a second instead of several.
func TestPrecompiledGuest(t *testing.T) {
	// Not parallel: the daemon and the CLI inherit the environment.
	dir := t.TempDir()
	wasm := filepath.Join(dir, "guest.wasm")
	build := exec.Command("go", "build", "-o", wasm, "../../plugins/example")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example guest: %v\n%s", err, out)
	}
	other := filepath.Join(dir, "other.wasm")
	if err := os.WriteFile(other, []byte("\x00asm\x01\x00\x00\x00"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("LUMEN_GUEST_WASM", wasm)
	t.Setenv("LUMEN_GUEST_CWASM", "")
	// Beside the guest, where lumen up looks for it.
	pre := filepath.Join(dir, "guest-"+plugins.HostArch()+".cwasm")

	if out, code := runCLI(t, "", "tool", "precompile", "-o", pre); code != 0 {
		t.Fatalf("lumen tool precompile (exit %d):\n%s", code, out)
	}
	if st, err := os.Stat(pre); err != nil || st.Mode().Perm() != 0o644 {
		t.Fatalf("the precompiled guest: %v %v", st, err)
	}
	tests := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"found beside the guest", []string{"--check"}, 0, "loads precompiled for " + plugins.HostArch()},
		{"named", []string{"--check", pre}, 0, "loads precompiled"},
		{"another guest's", []string{"--check", "--wasm", other, pre}, 1, "compiled from another guest"},
		{"not precompiled", []string{"--check", wasm}, 1, "not a file written by plugins.Precompile"},
		{"another architecture", []string{"--target", "riscv64gc-unknown-linux-gnu", "-o", filepath.Join(dir, "x.cwasm")}, 1, "compiles for " + plugins.HostArch() + " only"},
		{"nothing to do", nil, 2, "give -o FILE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, code := runCLI(t, "", append([]string{"tool", "precompile"}, tt.args...)...)
			if code != tt.code || !strings.Contains(out, tt.says) {
				t.Fatalf("exit %d, want %d, saying %q:\n%s", code, tt.code, tt.says, out)
			}
		})
	}

	// lumen up, with nothing cached, reads it rather than compiling.
	t.Setenv("LUMEN_PLUGIN_CACHE", t.TempDir())
	d := startDaemon(t, filepath.Join(dir, "data"))
	lumentest.WaitFor(t, 30*time.Second, "lumen up to load the precompiled guest", func() bool {
		return strings.Contains(d.Logs(), "tools: the tool engine is ready (precompiled, "+pre)
	})
	if logs := d.Logs(); strings.Contains(logs, "compiling the tool engine") {
		t.Fatalf("lumen up compiled the guest:\n%s", logs)
	}

	d.Kill()

	// Without it, lumen up compiles the guest into its cache, in a
	// process of its own (lumen tool precompile), so that the compiler's
	// memory does not stay in the daemon.
	if err := os.Remove(pre); err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	t.Setenv("LUMEN_PLUGIN_CACHE", cache)
	d = startDaemon(t, filepath.Join(dir, "data2"))
	lumentest.WaitFor(t, 60*time.Second, "lumen up to compile the guest", func() bool {
		return strings.Contains(d.Logs(), "tools: the tool engine is ready (compiled in")
	})
	if logs := d.Logs(); strings.Contains(logs, "in this process") {
		t.Fatalf("lumen up compiled the guest in its own process:\n%s", logs)
	}
	if ents, err := os.ReadDir(cache); err != nil || len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "guest.") || !strings.HasSuffix(ents[0].Name(), ".cwasm") {
		t.Errorf("the cache holds %v (%v), want the compiled guest alone", ents, err)
	}
}
