package lumen_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/lumen-home/lumen"

// A layer is a set of the module's packages and what none of them may
// import, directly or through another package.
type layer struct {
	name   string
	why    string
	pkgs   []string // relative to the module
	forbid []string // import paths; a trailing "/" forbids everything under it
	// allow are pure packages a forbidden path covers, which the layer
	// may still reach.
	allow []string
}

// ioPaths is what pure code never reaches: the network, processes, the bus,
// the actor runtime, the Wasmtime sandbox and the Pi's pins.
var ioPaths = []string{"net", "net/http/", "os/exec", "github.com/nats-io/", "github.com/asynkron/protoactor-go/",
	"github.com/bytecodealliance/wasmtime-go/", "github.com/stianeikeland/go-rpio/", module + "/plugins/"}

// layers is the architecture: every package of the module is in exactly
// one layer. A package a later change adds gets a row here, or this test
// fails.
var layers = []layer{
	{name: "model", why: "the wire's types: everything imports them, they import nothing of ours",
		pkgs:   []string{"messages"},
		forbid: []string{module + "/"}},
	{name: "pure", why: "pure logic, reused by replay, which has no network, bus, actors, sandbox or pins",
		pkgs: []string{"messages/describe", "messages/color", "actors/light/machine", "actors/source/datasource", "hardware", "hardware/gesture", "hardware/input",
			"hardware/render", "hardware/ws2812", "hardware/sim", "hardware/hwtest", "internal/jsbox", "internal/splitmix", "internal/argschema",
			"internal/clip", "internal/redact", "internal/solar", "nats/subject", "agent/phrase"},
		forbid: ioPaths},
	{name: "leaf", why: "small helpers with no part in the domain",
		pkgs:   []string{"internal/atomicfile", "internal/memtrim", "internal/docgen"},
		forbid: []string{module + "/"}},
	{name: "clock", why: "the one clock: the time, whether to trust it, timers and tickers; every layer may read it",
		pkgs:   []string{"internal/clock", "internal/clock/clocktest"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/nats/", module + "/hardware/", module + "/plugins/", module + "/web", module + "/cmd/", "github.com/nats-io/"}},
	{name: "metrics", why: "the daemon's Prometheus metrics: the actors count through meters they declare, and never see Prometheus",
		pkgs:   []string{"internal/metrics", "internal/metrics/metricstest"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/nats/", module + "/hardware/", module + "/plugins/", module + "/web", module + "/cmd/"}},
	{name: "driver", why: "the Pi's GPIO driver and its emulated Pi",
		pkgs:   []string{"hardware/rpi", "hardware/rpi/qemutest", "hardware/rpi/qemutest/guest", "hardware/rpi/qemutest/init"},
		forbid: []string{"github.com/nats-io/", "github.com/asynkron/protoactor-go/"}},
	{name: "bus", why: "NATS and the journal serve the actors, and know none of them",
		pkgs:   []string{"nats/broker", "nats/journal", "nats/wire", "nats/house", "nats/repair", "nats/ingress"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/hardware/", module + "/plugins/"}},
	{name: "web", why: "the HTTP door: the wire contract over HTTP and the page, a client like any other (previews render with the pure renderer)",
		pkgs:   []string{"web"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/hardware/rpi", module + "/plugins/", module + "/cmd/"},
		// The words of a data source and its next run (describe).
		allow: []string{module + "/actors/source/datasource"}},
	{name: "ha", why: "the Home Assistant door: MQTT discovery and commands over the wire contract, a client like any other",
		pkgs:   []string{"ha"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/hardware/", module + "/plugins/", module + "/web", module + "/cmd/"},
		// A source's definition: which topics of its broker to pass on.
		allow: []string{module + "/actors/source/datasource"}},
	{name: "sandbox", why: "the Wasmtime host runs tool code; the JavaScript engine lives only in the guest",
		pkgs:   []string{"plugins", "plugins/netpolicy", "plugins/secrets"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/hardware/", module + "/nats/", "github.com/dop251/goja", module + "/plugins/guest"}},
	{name: "guest", why: "wasm guests: the JavaScript engine and an example plugin, built for WASI",
		pkgs:   []string{"plugins/guest", "plugins/example"},
		forbid: []string{module + "/actors/", module + "/agent/", module + "/nats/", module + "/hardware/", "github.com/nats-io/"}},
	{name: "past", why: "a light's past from its journal (replay, why, what-if, history, slices), without the actor: the CLI reads it too",
		pkgs:   []string{"actors/light/past"},
		forbid: []string{"github.com/asynkron/protoactor-go/", module + "/cmd/"}},
	{name: "actors", why: "the daemon's actors and their assembly",
		pkgs: []string{"actors", "actors/light", "actors/light/service", "actors/device", "actors/source",
			"actors/tool", "actors/daemon"},
		forbid: []string{module + "/cmd/"}},
	{name: "agent", why: "the agent: a model's tool loop over the light's commands",
		pkgs:   []string{"agent", "agent/agenttest", "agent/mic", "agent/mic/mictest"},
		forbid: []string{module + "/cmd/"}},
	{name: "eval", why: "judging a model: scratch daemons driven through the wire, as a person would",
		pkgs:   []string{"eval"},
		forbid: []string{module + "/cmd/"}},
	{name: "harness", why: "what tests and benchmarks run the binary with",
		pkgs:   []string{"internal/lumentest", "internal/powercut", "bench", "soak"},
		forbid: []string{module + "/cmd/"}},
	{name: "console", why: "the lumen command's logic: which light, requests and refusals in the user's words, printing; the binary is flags over it",
		pkgs:   []string{"internal/cli"},
		forbid: []string{module + "/cmd/"}},
	{name: "command", why: "the lumen binary: flags, files and printing over the libraries",
		pkgs: []string{"cmd/lumen"}},
}

// trees are rules of everything under a directory, whatever its layer.
var trees = []struct {
	root, why string
	forbid    []string
}{
	{"hardware", "hardware knows pins, not lights, actors, the agent or the bus",
		[]string{module + "/actors/", module + "/agent/", module + "/nats/"}},
	{"agent", "the agent reaches the light only through its commands, never its hardware",
		[]string{module + "/hardware/"}},
}

// check reports the first import of each forbidden path.
func check(t *testing.T, pkg string, deps, forbid []string, why string) {
	t.Helper()
	for _, f := range forbid {
		for _, dep := range deps {
			if forbidden(dep, f) {
				t.Errorf("%s imports %s (%s)", pkg, dep, why)
				break
			}
		}
	}
}

// TestArchitecture checks every layer's rule with one `go list -deps`, as
// built for the Pi (a superset of the files built here).
func TestArchitecture(t *testing.T) {
	cmd := exec.Command("go", "list", "-deps", "-f", `{{if .Module}}{{if eq .Module.Path "`+module+`"}}{{.ImportPath}} {{join .Deps " "}}{{end}}{{end}}`, "./...")
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=arm64", "CGO_ENABLED=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := map[string][]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			deps[strings.TrimPrefix(strings.TrimPrefix(f[0], module), "/")] = f[1:]
		}
	}
	if len(deps) < 30 {
		t.Fatalf("go list found only %d packages:\n%s", len(deps), out)
	}
	of := map[string]string{}
	for _, l := range layers {
		for _, p := range l.pkgs {
			if prev, ok := of[p]; ok {
				t.Errorf("%s is in two layers, %s and %s", p, prev, l.name)
			}
			of[p] = l.name
			if _, ok := deps[p]; !ok {
				t.Errorf("layer %s names %s, which is no package of the module", l.name, p)
			}
		}
	}
	for _, p := range slices.Sorted(func(yield func(string) bool) {
		for p := range deps {
			if !yield(p) {
				return
			}
		}
	}) {
		if _, ok := of[p]; !ok && p != "" {
			t.Errorf("%s is in no layer: add it to the table in architecture_test.go", p)
		}
	}
	for _, l := range layers {
		for _, p := range l.pkgs {
			check(t, p, slices.DeleteFunc(slices.Clone(deps[p]), func(d string) bool { return slices.Contains(l.allow, d) }), l.forbid, "layer "+l.name+": "+l.why)
		}
	}
	for p, ds := range deps {
		for _, r := range trees {
			if p == r.root || strings.HasPrefix(p, r.root+"/") {
				check(t, p, ds, r.forbid, r.why)
			}
		}
	}
	// Nothing but the command itself imports the command.
	for p, ds := range deps {
		if slices.Contains(ds, module+"/cmd/lumen") {
			t.Errorf("%s imports the command cmd/lumen: move what it needs into a library", p)
		}
	}
}

// forbidden reports whether dep is the forbidden path f, or under it when
// f ends with "/" (or, for a module path, is that module's root).
func forbidden(dep, f string) bool {
	if prefix, ok := strings.CutSuffix(f, "/"); ok {
		return dep == prefix || strings.HasPrefix(dep, f)
	}
	return dep == f || (strings.Contains(f, ".") && strings.HasPrefix(dep, f+"/"))
}

// TestCommandIsThin keeps cmd/lumen a thin main: its commands' flags and
// help over internal/cli and the other libraries, at most 2,500 lines
// (tests aside). A command's logic goes in a library.
func TestCommandIsThin(t *testing.T) {
	files, err := filepath.Glob("cmd/lumen/*.go")
	if err != nil {
		t.Fatal(err)
	}
	lines := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines += strings.Count(string(b), "\n")
	}
	if lines == 0 || lines > 2500 {
		t.Errorf("cmd/lumen has %d lines besides its tests; at most 2,500: move a command's logic to internal/cli or another library", lines)
	}
}
