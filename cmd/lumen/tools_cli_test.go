package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// needGuest skips unless the tools' wasm guest is built (the Taskfile
// builds it and sets LUMEN_GUEST_WASM; CI always has it).
func needGuest(t *testing.T) {
	t.Helper()
	if _, err := os.Stat(filepath.Join("..", "..", ".cache", "plugins", "guest.wasm")); err == nil && os.Getenv("LUMEN_BIN") != "" {
		return
	}
	lumentest.NeedGuest(t)
}

func defineTool(t *testing.T, nc *nats.Conn, def map[string]any) {
	t.Helper()
	b, _ := json.Marshal(def)
	mustOK(t, request(t, nc, "lumen.demo.cmd.define_tool", string(b)))
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// lumen tool run prints a tool's result and its log; lumen tool ls
// lists the defined tools with their hosts, the operator's plugins with
// their status and the built-ins. (The tools themselves are tested in
// process in actors/daemon.)
func TestToolCLI(t *testing.T) {
	needGuest(t)
	t.Parallel()
	dir := t.TempDir()
	pdir := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(pdir, "hello.wasm"), "../../plugins/example")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example plugin: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(pdir, "broken.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)
	defineTool(t, nc, map[string]any{"name": "weather", "hosts": []string{"api.example.com"},
		"code": "log('got', params.city);\nreturn {temp: 3.5 + params.add};"})

	out, code := runCLI(t, d.URL, "tool", "run", "weather", "--args", `{"add":2,"city":"Paris"}`)
	if code != 0 || !strings.Contains(out, `"temp":5.5`) || !strings.Contains(out, "log: got Paris") {
		t.Fatalf("lumen tool run (%d):\n%s", code, out)
	}
	lumentest.WaitFor(t, time.Minute, "lumen tool ls to list the plugins loaded", func() bool {
		out, _ := runCLI(t, d.URL, "tool", "ls", "--light", "demo")
		// Each plugin loads on its own: wait for both to be done.
		return strings.Contains(out, "hello                plugin, ready") && !strings.Contains(out, "plugin, loading")
	})
	out, code = runCLI(t, d.URL, "tool", "ls", "--light", "demo")
	for _, w := range []string{"weather", "api.example.com", "hello                plugin, ready", "broken               plugin, failed", "get_time             built-in: "} {
		if code != 0 || !strings.Contains(out, w) {
			t.Fatalf("lumen tool ls (exit %d) lacks %q:\n%s", code, w, out)
		}
	}
}
