package main_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// list_tools tells the built-ins and the operator's plugins besides the
// journaled definitions (which stay, unchanged, under "tools"); a data
// source fetches with a plugin; `lumen export` carries the data sources,
// tools and schedules, so that export | apply copies a light whole.
func TestToolCatalogPluginSourcesAndExport(t *testing.T) {
	// Not parallel: the daemon inherits the test-only minimum interval.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
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
	d := startDaemon(t, dir, "--light", "demo", "--light", "copy")
	nc := connect(t, d.URL)

	type listed struct {
		OK      bool              `json:"ok"`
		Tools   []json.RawMessage `json:"tools"`
		Builtin []struct {
			Name, Description string
			Params            map[string]any
		} `json:"builtin"`
		Plugins []struct{ Name, Status, Error string } `json:"plugins"`
	}
	list := func(light string) listed {
		t.Helper()
		var l listed
		if err := json.Unmarshal(mustOK(t, request(t, nc, "lumen."+light+".cmd.list_tools", `{}`)).Raw, &l); err != nil {
			t.Fatal(err)
		}
		return l
	}
	lumentest.WaitFor(t, time.Minute, "the plugins to load", func() bool {
		l := list("demo")
		return len(l.Plugins) == 2 && l.Plugins[0].Status == "failed" && l.Plugins[1].Status == "ready"
	})
	l := list("demo")
	var builtins []string
	for _, b := range l.Builtin {
		builtins = append(builtins, b.Name)
		if b.Description == "" || b.Params["type"] != "object" {
			t.Errorf("built-in %+v", b)
		}
	}
	if !slices.Equal(builtins, []string{"fetch_json", "fetch_text", "get_time", "get_weather", "web_search"}) || l.Tools == nil || len(l.Tools) != 0 ||
		l.Plugins[0].Name != "broken" || l.Plugins[0].Error == "" || l.Plugins[1].Name != "hello" {
		t.Fatalf("list_tools: %+v", l)
	}
	// "tools" is the journaled definitions, as in get.
	defineTool(t, nc, map[string]any{"name": "weather", "description": "the weather", "code": "return {temp: 3}", "hosts": []string{"api.example.com"}})
	var got any
	gb, _ := json.Marshal(list("demo").Tools)
	_ = json.Unmarshal(gb, &got)
	if want := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["tools"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("list_tools tools %s, get tools %v", gb, want)
	}
	out, code := runCLI(t, d.URL, "tool", "ls", "--light", "demo")
	for _, w := range []string{"weather", "hello                plugin, ready", "broken               plugin, failed", "get_time             built-in: "} {
		if code != 0 || !strings.Contains(out, w) {
			t.Fatalf("lumen tool ls (exit %d) lacks %q:\n%s", code, w, out)
		}
	}

	// A source fetching with the plugin.
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"greeted","r":0,"g":255,"b":0}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"greeted","to":"greeted"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source",
		`{"name":"greet","interval_ms":300,"fetch":{"tool":"hello","args":{"name":"ada"}},"store":{"greeting":"result.greeting"},"fires":"greeted"}`))
	lumentest.WaitFor(t, 30*time.Second, "the plugin source to store its greeting", func() bool {
		m := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body
		vars, _ := m["vars"].(map[string]any)
		return vars["greeting"] == "hello, ada" && m["state"] == "greeted"
	})
	if r := request(t, nc, "lumen.demo.cmd.create_source", `{"name":"nope","interval_ms":300,"fetch":{"tool":"nope"},"store":{"x":"result"}}`); r.Code != "404" {
		t.Fatalf("a source on an unknown tool: %s %s", r.Code, r.Raw)
	}

	// The rest of a configuration: a schedule, a custom transition, and
	// a source of each kind.
	for _, req := range []struct{ verb, body string }{
		{"create_schedule", `{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"greeted"}`},
		{"define_transition", `{"name":"door_open","code":"return false","poll_interval_ms":60000}`},
		{"create_source", `{"name":"dur","type":"internal","tracks":"state_duration","interval_ms":60000,"store":{"dur":"result"}}`},
		{"create_source", `{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"},"fires":"greeted"}`},
		{"create_source", `{"name":"temp","interval_ms":3600000,"fetch":{"tool":"fetch_json","args":{"url":"https://api.example.com/t"}},"store":{"t":"result.body.t"}}`},
		{"create_source", `{"name":"wx","interval_ms":3600000,"fetch":{"tool":"weather"},"store":{"wx":"result.temp"}}`},
	} {
		mustOK(t, request(t, nc, "lumen.demo.cmd."+req.verb, req.body))
	}
	// delete_tool on the transition's predicate points to delete_transition.
	if r := request(t, nc, "lumen.demo.cmd.delete_tool", `{"name":"door_open"}`); r.Code != "409" || !strings.Contains(r.Header, "delete_transition") {
		t.Fatalf("delete_tool door_open: %s %s", r.Code, r.Raw)
	}

	config := func(light string) map[string]any {
		t.Helper()
		m := mustOK(t, request(t, nc, "lumen."+light+".cmd.get", `{}`)).Body
		scheds, _ := m["schedules"].([]any)
		for _, s := range scheds {
			delete(s.(map[string]any), "next")
		}
		return map[string]any{"states": m["states"], "rules": m["rules"], "schedules": m["schedules"], "tools": m["tools"], "sources": m["sources"]}
	}
	orig := config("demo")
	if n := len(orig["sources"].([]any)); n != 6 {
		t.Fatalf("demo has %d sources: %v", n, orig["sources"])
	}
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			out, code := runCLI(t, d.URL, "export", "--light", "demo", "--format", format)
			if code != 0 {
				t.Fatalf("lumen export (exit %d):\n%s", code, out)
			}
			file := filepath.Join(t.TempDir(), "demo."+format)
			if err := os.WriteFile(file, []byte(out), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, code := runCLI(t, d.URL, "apply", "--light", "copy", "-f", file); code != 0 {
				t.Fatalf("lumen apply of the export (exit %d):\n%s\nthe export:\n%s", code, out, readFile(t, file))
			}
			if got := config("copy"); !reflect.DeepEqual(got, orig) {
				a, _ := json.MarshalIndent(orig, "", " ")
				b, _ := json.MarshalIndent(got, "", " ")
				t.Fatalf("after export | apply the copy differs\ndemo:\n%s\ncopy:\n%s", a, b)
			}
			// The copy's plugin source runs too (the greeting came with
			// the vars: unset it first).
			mustOK(t, request(t, nc, "lumen.copy.cmd.set_var", `{"name":"greeting","unset":true}`))
			lumentest.WaitFor(t, 30*time.Second, "the copy's plugin source", func() bool {
				vars, _ := mustOK(t, request(t, nc, "lumen.copy.cmd.get", `{}`)).Body["vars"].(map[string]any)
				return vars["greeting"] == "hello, ada"
			})
			mustOK(t, request(t, nc, "lumen.copy.cmd.apply", `{"confirm_empty":true,"states":[],"rules":[]}`))
			if got := config("copy"); len(got["sources"].([]any)) != 0 || len(got["tools"].([]any)) != 0 {
				t.Fatalf("an empty apply keeps %v", got)
			}
		})
	}

	// The plugin goes away: after a restart (and in a replay of the
	// journal) the light still has its source, which now fails at run
	// time; nothing accepted is refused on replay.
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(pdir, "hello.wasm")); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, "", "replay", "--data", dir, "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify without the plugin (exit %d):\n%s", code, out)
	}
	d = startDaemon(t, dir, "--light", "demo", "--light", "copy")
	nc = connect(t, d.URL)
	if got := config("demo"); !reflect.DeepEqual(got, orig) {
		t.Fatalf("after a restart without the plugin demo has %v", got)
	}
	if l := list("demo"); len(l.Plugins) != 1 || l.Plugins[0].Name != "broken" {
		t.Fatalf("plugins after the restart: %+v", l.Plugins)
	}
	if r := request(t, nc, "lumen.demo.cmd.create_source", `{"name":"greet2","interval_ms":300,"fetch":{"tool":"hello"},"store":{"x":"result"}}`); r.Code != "404" {
		t.Fatalf("a new source on the removed plugin: %s %s", r.Code, r.Raw)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
