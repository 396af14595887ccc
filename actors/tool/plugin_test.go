package tool

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/plugins"
	"github.com/lumen-home/lumen/plugins/netpolicy"
)

// buildExample builds plugins/example, the minimal Go plugin, into dir as
// name.wasm.
func buildExample(t *testing.T, dir, name string) {
	t.Helper()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, name+".wasm"), "../../plugins/example")
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the example plugin: %v\n%s", err, out)
	}
}

// compileCache is the compile cache the plugins tests share
// (LUMEN_PLUGIN_CACHE, else the repository's), so only a first run
// compiles the example.
func compileCache(t *testing.T) string {
	if d := os.Getenv("LUMEN_PLUGIN_CACHE"); d != "" {
		return d
	}
	d, err := filepath.Abs("../../.cache/plugins/compiled")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Plugins are the directory's valid *.wasm files; a bad one is logged at
// start and fails every run with why, a badly named one is left out.
func TestPlugins(t *testing.T) {
	dir := t.TempDir()
	buildExample(t, dir, "hello")
	for name, content := range map[string]string{
		"broken.wasm":     "not wasm at all",
		"Bad Name.wasm":   "\x00asm",
		"fetch_json.wasm": "\x00asm",
		"notes.txt":       "not a plugin",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	reactor, err := wasmtime.Wat2Wasm(`(module (memory (export "memory") 1) (func (export "run")))`)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "reactor.wasm"), reactor, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub.wasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	log := &lumentest.Buffer{}
	p := OpenPlugins(PluginsConfig{Dir: dir, Engine: plugins.Config{CacheDir: compileCache(t)}, Logf: log.Logf})
	defer p.Close()
	if got := p.Names(); !slices.Equal(got, []string{"broken", "hello", "reactor"}) {
		t.Fatalf("plugins %v, want [broken hello reactor]", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := p.Wait(ctx); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`Bad Name.wasm is ignored: "Bad Name" is not a valid tool name`,
		`fetch_json.wasm is ignored: fetch_json is a built-in tool`,
		`broken.wasm cannot run: plugins: compiling the guest: failed to parse WebAssembly module`,
		`hello.wasm is ready as tool hello`,
		`reactor.wasm cannot run: plugins: the guest has no _start`,
	} {
		if !strings.Contains(log.String(), want) {
			t.Errorf("the log lacks %q:\n%s", want, log.String())
		}
	}
	if strings.Contains(log.String(), "reactor.wasm is ready") {
		t.Errorf("a plugin that failed its check is said to be ready:\n%s", log.String())
	}
	if strings.Contains(log.String(), "backtrace") {
		t.Errorf("the log has Wasmtime's stack trace:\n%s", log.String())
	}

	client, err := netpolicy.New(netpolicy.Operator{}, nil, netpolicy.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	f := &fetcher{client: client, open: true}
	tests := []struct {
		name, plugin, args string
		code               int // of the reply; 0 ok
		want               string
	}{
		{"runs", "hello", `{"name":"bob"}`, 0, `"greeting":"hello, bob"`},
		{"logs", "hello", `{"name":"bob"}`, 0, `"log":["example: called for bob"]`},
		{"fetches under the policy", "hello", `{"url":"https://127.0.0.1/"}`, 400, `loopback address`},
		{"a broken plugin says why", "broken", `{}`, 500, `broken.wasm cannot run: plugins: compiling the guest: failed to parse WebAssembly module`},
		{"so does one that is no command", "reactor", `{}`, 500, `reactor.wasm cannot run: plugins: the guest has no _start`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.get(tt.plugin).run(context.Background(), json.RawMessage(tt.args), f)
			rep := answer(tt.plugin, res, err, nil)
			got, _ := json.Marshal(rep)
			if e, ok := rep.(*messages.ErrorReply); ok != (tt.code != 0) || ok && e.Code != tt.code {
				t.Fatalf("want code %d, got %s", tt.code, got)
			}
			if !strings.Contains(string(got), tt.want) {
				t.Fatalf("want %s in %s", tt.want, got)
			}
		})
	}

	// No directory, no plugins, no noise.
	log = &lumentest.Buffer{}
	none := OpenPlugins(PluginsConfig{Dir: filepath.Join(dir, "missing"), Logf: log.Logf})
	if len(none.Names()) != 0 || log.String() != "" {
		t.Fatalf("a missing directory: %v %q", none.Names(), log.String())
	}
	var nilPlugins *Plugins
	if nilPlugins.Names() != nil || nilPlugins.Wait(ctx) != nil || nilPlugins.get("x") != nil {
		t.Fatal("a nil Plugins is not empty")
	}
	nilPlugins.Close()
}
