package daemon_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/plugins/secrets"
)

// The tools through the daemon in process: definitions, the built-ins,
// the operator's plugins, the sandbox.

// toolsOK is requestTo for a reply that must be a success.
func toolsOK(t *testing.T, nc *nats.Conn, light, verb, body string) reply {
	t.Helper()
	r := requestTo(t, nc, light, verb, body)
	if r.Code != "" || r.Body["ok"] != true {
		t.Fatalf("%s %s: want ok, got code %q: %s", verb, body, r.Code, r.Raw)
	}
	return r
}

// toolsRun runs the demo light's tool name with args ("" for none).
func toolsRun(t *testing.T, nc *nats.Conn, name, args string) reply {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	return requestTo(t, nc, "demo", "run_tool", fmt.Sprintf(`{"name":%q,"args":%s}`, name, args))
}

// toolsPlugins makes data/plugins with the example plugin built as
// hello.wasm and a broken.wasm that is not wasm; it returns the
// directory.
func toolsPlugins(t *testing.T, data string) string {
	t.Helper()
	dir := filepath.Join(data, "plugins")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "hello.wasm"), "../../plugins/example")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example plugin: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "broken.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// toolsLogs has the daemon log both to the test and to the buffer
// returned, which a test reads.
func toolsLogs(t *testing.T, c *daemon.Config) *lumentest.Buffer {
	logs := &lumentest.Buffer{}
	tl := testLog(t)
	c.Logf = func(format string, args ...any) {
		logs.Logf(format, args...)
		tl(format, args...)
	}
	return logs
}

// toolsDropSnapshot deletes light's snapshot from the stopped daemon's
// data directory, as if the daemon had been killed before it took one:
// its next start reads only the journal.
func toolsDropSnapshot(t *testing.T, data, light string) {
	t.Helper()
	b := lumentest.StartBus(t, broker.Config{DataDir: data})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	kv, err := b.JetStream().KeyValue(ctx, subject.SnapshotBucket)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kv.Get(ctx, light); err != nil {
		t.Fatalf("no snapshot of %s to drop: %v", light, err)
	}
	if err := kv.Purge(ctx, light); err != nil {
		t.Fatal(err)
	}
	b.Shutdown()
}

// The built-in tools and the operator's plugins through the daemon:
// fetch_json, fetch_text and get_time answer run_tool and feed a data
// source without any tool defined; a Go plugin dropped into
// <data>/plugins runs by its file's name, and a broken one says why, at
// start and on every run, while the light keeps working.
func TestToolsBuiltinAndPlugins(t *testing.T) {
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/weather":
			fmt.Fprint(w, `{"main":{"temp":-2.5},"name":"Oslo"}`)
		case "/motd":
			fmt.Fprint(w, "be kind")
		default:
			http.NotFound(w, r)
		}
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")

	dir := t.TempDir()
	toolsPlugins(t, dir)
	var logs *lumentest.Buffer
	d := startWith(t, func(c *daemon.Config) {
		c.Data, c.AllowNet, c.SourceMinInterval = dir, []string{host}, 100*time.Millisecond
		logs = toolsLogs(t, c)
	}, "demo")
	nc := connectTo(t, d)

	r := toolsOK(t, nc, "demo", "run_tool", `{"name":"fetch_json","args":{"url":"`+api.URL+`/weather"}}`)
	if res, _ := r.Body["result"].(map[string]any); res["status"] != 200.0 || fmt.Sprint(res["body"]) != "map[main:map[temp:-2.5] name:Oslo]" {
		t.Fatalf("fetch_json: %s", r.Raw)
	}
	r = toolsOK(t, nc, "demo", "run_tool", `{"name":"fetch_text","args":{"url":"`+api.URL+`/motd"}}`)
	if res, _ := r.Body["result"].(map[string]any); res["body"] != "be kind" {
		t.Fatalf("fetch_text: %s", r.Raw)
	}
	r = toolsOK(t, nc, "demo", "run_tool", `{"name":"get_time","args":{"tz":"Asia/Tokyo"}}`)
	if res, _ := r.Body["result"].(map[string]any); res["tz"] != "Asia/Tokyo" || res["utc_offset"] != "+09:00" ||
		time.Since(time.UnixMilli(int64(res["unix_ms"].(float64)))).Abs() > time.Minute {
		t.Fatalf("get_time: %s", r.Raw)
	}
	// No declared hosts, but no way past the operator either.
	if r := toolsRun(t, nc, "fetch_json", `{"url":"http://10.0.0.1/"}`); r.Code != "400" || !strings.Contains(r.Header, "allow-net") {
		t.Fatalf("fetch_json to the LAN: %s %s", r.Code, r.Raw)
	}
	if r := toolsRun(t, nc, "fetch_json", `{"url":"`+api.URL+`/missing"}`); r.Code != "400" || !strings.Contains(r.Header, "answered 404") {
		t.Fatalf("fetch_json of a 404: %s %s", r.Code, r.Raw)
	}

	r = toolsOK(t, nc, "demo", "run_tool", `{"name":"hello","args":{"name":"ada"}}`)
	if res, _ := r.Body["result"].(map[string]any); res["greeting"] != "hello, ada" {
		t.Fatalf("the hello plugin: %s", r.Raw)
	}
	if r := toolsRun(t, nc, "broken", `{}`); r.Code != "500" || !strings.Contains(r.Header, "broken.wasm cannot run") {
		t.Fatalf("the broken plugin: %s %s", r.Code, r.Raw)
	}
	if !logs.Contains("broken.wasm cannot run") {
		t.Fatalf("the broken plugin is not logged:\n%s", logs)
	}
	// The operator's plugin wins over a tool defined with its name.
	defineTool(t, nc, map[string]any{"name": "hello", "code": "return 'defined'"})
	if r := toolsOK(t, nc, "demo", "run_tool", `{"name":"hello","args":{"name":"ada"}}`); !strings.Contains(string(r.Raw), "hello, ada") {
		t.Fatalf("the hello plugin after define_tool hello: %s", r.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the shadowed tool to be logged", func() bool {
		return logs.Contains("the plugin hello runs instead of the tool defined with that name")
	})
	if r := toolsRun(t, nc, "nope", ""); r.Code != "404" || !strings.Contains(r.Header, "[broken hello] and the built-in fetch_json") {
		t.Fatalf("unknown tool: %s %s", r.Code, r.Raw)
	}

	// A data source on fetch_json, with no tool defined.
	mustOK(t, nc, "create_state", `{"name":"cold","r":0,"g":0,"b":255}`)
	mustOK(t, nc, "append_rules", `{"rules":[{"from":"*","on":"weather_updated","to":"cold","condition":"getData('temp') < 5"}]}`)
	mustOK(t, nc, "create_source", string(mustMarshal(t, map[string]any{"name": "weather", "interval_ms": 200,
		"fetch": map[string]any{"tool": "fetch_json", "args": map[string]any{"url": api.URL + "/weather"}},
		"store": map[string]any{"temp": "result.body.main.temp"}, "fires": "weather_updated"})))
	lumentest.WaitFor(t, 30*time.Second, "the source to store the temperature and turn the light cold", func() bool {
		m := mustOK(t, nc, "get", `{}`)
		vars, _ := m["vars"].(map[string]any)
		return vars["temp"] == -2.5 && m["state"] == "cold"
	})
}

// toolsNames returns the names of the tools in a reply's "tools" array,
// failing unless it is an array.
func toolsNames(t *testing.T, r reply) []string {
	t.Helper()
	list, ok := r.Body["tools"].([]any)
	if !ok {
		t.Fatalf("no tools array in %s", r.Raw)
	}
	names := []string{}
	for _, x := range list {
		names = append(names, x.(map[string]any)["name"].(string))
	}
	return names
}

// toolsWant fails unless list_tools and get both give the demo light's
// tools as want.
func toolsWant(t *testing.T, nc *nats.Conn, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := toolsNames(t, toolsOK(t, nc, "demo", "list_tools", `{}`)); !slices.Equal(got, want) {
		t.Fatalf("list_tools: %v, want %v", got, want)
	}
	if got := toolsNames(t, toolsOK(t, nc, "demo", "get", `{}`)); !slices.Equal(got, want) {
		t.Fatalf("get tools: %v, want %v", got, want)
	}
}

// Tool definitions are journaled: they survive restarts (from the journal
// alone and from a snapshot), and bad ones are refused with a clear
// error.
func TestToolsDefinitions(t *testing.T) {
	dir := t.TempDir()
	d := start(t, dir, "demo")
	nc := connectTo(t, d)

	toolsWant(t, nc)
	weather := `{"name":"weather","description":"current temperature",
		"params":{"type":"object","properties":{"city":{"type":"string"}}},
		"code":"const r = await fetch('https://api.example.com/w?q=' + params.city);\nreturn {temp: JSON.parse(r.body).temp};",
		"hosts":["api.example.com"]}`
	r := toolsOK(t, nc, "demo", "define_tool", weather)
	if outs, _ := r.Body["outputs"].([]any); len(outs) != 1 || !strings.Contains(fmt.Sprint(outs[0].(map[string]any)["data"]), "weather") {
		t.Fatalf("define_tool outputs: %s", r.Raw)
	}
	mustOK(t, nc, "define_tool", `{"tools":[{"name":"hello","code":"return 'hi ' + params.who;"}]}`)
	toolsWant(t, nc, "weather", "hello")

	// list_tools gives the whole definition.
	l := toolsOK(t, nc, "demo", "list_tools", `{}`)
	var lr struct {
		Tools []struct {
			Name, Description, Code string
			Params                  json.RawMessage
			Hosts                   []string
		}
	}
	if err := json.Unmarshal(l.Raw, &lr); err != nil {
		t.Fatal(err)
	}
	if w := lr.Tools[0]; w.Description != "current temperature" || !strings.Contains(w.Code, "await fetch") ||
		string(w.Params) != `{"type":"object","properties":{"city":{"type":"string"}}}` || !slices.Equal(w.Hosts, []string{"api.example.com"}) {
		t.Fatalf("list_tools: %s", l.Raw)
	}

	// Refused definitions, with what to fix.
	tests := []struct {
		name, verb, body, code string
		says                   []string
	}{
		{"syntax error", "define_tool", `{"name":"bad","code":"const a = 1;\nreturn a +;"}`, "400",
			[]string{`tool "bad": the code has a syntax error at line 2, column 11`}},
		{"built-in name", "define_tool", `{"name":"get_time","code":"return 1"}`, "409", []string{"built-in"}},
		{"host with a scheme", "define_tool", `{"name":"x","code":"return 1","hosts":["https://api.example.com"]}`, "400", []string{"scheme"}},
		{"unknown tool", "delete_tool", `{"name":"nope"}`, "404", []string{`tool "nope" does not exist`}},
		{"list_tools with a body", "list_tools", `{"name":"x"}`, "400", []string{"list_tools takes {}"}},
	}
	for _, tt := range tests {
		r := requestTo(t, nc, "demo", tt.verb, tt.body)
		if r.Code != tt.code || r.Body["ok"] != false {
			t.Fatalf("%s: code %q, want %s: %s", tt.name, r.Code, tt.code, r.Raw)
		}
		for _, s := range tt.says {
			if !strings.Contains(r.Header, s) {
				t.Errorf("%s: error %q does not say %q", tt.name, r.Header, s)
			}
		}
	}
	toolsWant(t, nc, "weather", "hello")

	// Without a snapshot (as after a crash) the journal brings them back.
	nc.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	toolsDropSnapshot(t, dir, "demo")
	d = start(t, dir, "demo")
	nc = connectTo(t, d)
	toolsWant(t, nc, "weather", "hello")

	mustOK(t, nc, "delete_tool", `{"name":"weather"}`)
	toolsWant(t, nc, "hello")

	// After a clean stop, the snapshot does.
	nc.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	d = start(t, dir, "demo")
	nc = connectTo(t, d)
	toolsWant(t, nc, "hello")

	// apply replaces the tools.
	mustOK(t, nc, "apply", `{"confirm_empty":true,"states":[],"rules":[],"tools":[{"name":"btc","code":"return 1"}]}`)
	toolsWant(t, nc, "btc")
	mustOK(t, nc, "apply", `{"confirm_empty":true,"states":[],"rules":[]}`)
	toolsWant(t, nc)
	verifyReplay(t, nc, "demo")
}

// toolsListed is a list_tools reply.
type toolsListed struct {
	OK      bool              `json:"ok"`
	Tools   []json.RawMessage `json:"tools"`
	Builtin []struct {
		Name, Description string
		Params            map[string]any
	} `json:"builtin"`
	Plugins []struct{ Name, Status, Error string } `json:"plugins"`
}

func toolsList(t *testing.T, nc *nats.Conn, light string) toolsListed {
	t.Helper()
	var l toolsListed
	if err := json.Unmarshal(toolsOK(t, nc, light, "list_tools", `{}`).Raw, &l); err != nil {
		t.Fatal(err)
	}
	return l
}

// toolsConfig is what of light's get export | apply must copy: its
// states, rules, schedules (without their next time), tools and sources.
func toolsConfig(t *testing.T, nc *nats.Conn, light string) map[string]any {
	t.Helper()
	m := toolsOK(t, nc, light, "get", `{}`).Body
	scheds, _ := m["schedules"].([]any)
	for _, s := range scheds {
		delete(s.(map[string]any), "next")
	}
	return map[string]any{"states": m["states"], "rules": m["rules"], "schedules": m["schedules"], "tools": m["tools"], "sources": m["sources"]}
}

// toolsExport is what lumen export prints of light in format (yaml or
// json): its get reply's configuration.
func toolsExport(t *testing.T, nc *nats.Conn, light, format string) []byte {
	t.Helper()
	var g messages.GetReply
	if err := json.Unmarshal(toolsOK(t, nc, light, "get", `{}`).Raw, &g); err != nil {
		t.Fatal(err)
	}
	var out []byte
	var err error
	if format == "json" {
		out, err = json.MarshalIndent(g.Config(), "", "  ")
	} else {
		out, err = messages.ToYAML(g.Config())
	}
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// list_tools tells the built-ins and the operator's plugins besides the
// journaled definitions (which stay, unchanged, under "tools"); a data
// source fetches with a plugin; a light's export carries the data
// sources, tools and schedules, so that export | apply copies a light
// whole.
func TestToolsCatalogPluginSourcesAndExport(t *testing.T) {
	dir := t.TempDir()
	pdir := toolsPlugins(t, dir)
	cfg := func(c *daemon.Config) { c.Data, c.SourceMinInterval = dir, 100*time.Millisecond }
	d := startWith(t, cfg, "demo", "copy")
	nc := connectTo(t, d)

	lumentest.WaitFor(t, time.Minute, "the plugins to load", func() bool {
		l := toolsList(t, nc, "demo")
		return len(l.Plugins) == 2 && l.Plugins[0].Status == "failed" && l.Plugins[1].Status == "ready"
	})
	l := toolsList(t, nc, "demo")
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
	gb, _ := json.Marshal(toolsList(t, nc, "demo").Tools)
	_ = json.Unmarshal(gb, &got)
	if want := mustOK(t, nc, "get", `{}`)["tools"]; !reflect.DeepEqual(got, want) {
		t.Fatalf("list_tools tools %s, get tools %v", gb, want)
	}

	// A source fetching with the plugin.
	mustOK(t, nc, "create_state", `{"name":"greeted","r":0,"g":255,"b":0}`)
	mustOK(t, nc, "append_rules", `{"rules":[{"from":"*","on":"greeted","to":"greeted"}]}`)
	mustOK(t, nc, "create_source",
		`{"name":"greet","interval_ms":300,"fetch":{"tool":"hello","args":{"name":"ada"}},"store":{"greeting":"result.greeting"},"fires":"greeted"}`)
	lumentest.WaitFor(t, 30*time.Second, "the plugin source to store its greeting", func() bool {
		m := mustOK(t, nc, "get", `{}`)
		vars, _ := m["vars"].(map[string]any)
		return vars["greeting"] == "hello, ada" && m["state"] == "greeted"
	})
	if r := requestTo(t, nc, "demo", "create_source", `{"name":"nope","interval_ms":300,"fetch":{"tool":"nope"},"store":{"x":"result"}}`); r.Code != "404" {
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
		mustOK(t, nc, req.verb, req.body)
	}
	// delete_tool on the transition's predicate points to delete_transition.
	if r := requestTo(t, nc, "demo", "delete_tool", `{"name":"door_open"}`); r.Code != "409" || !strings.Contains(r.Header, "delete_transition") {
		t.Fatalf("delete_tool door_open: %s %s", r.Code, r.Raw)
	}

	orig := toolsConfig(t, nc, "demo")
	if n := len(orig["sources"].([]any)); n != 6 {
		t.Fatalf("demo has %d sources: %v", n, orig["sources"])
	}
	for _, format := range []string{"yaml", "json"} {
		t.Run(format, func(t *testing.T) {
			// What lumen apply -f sends of the file lumen export wrote.
			exported := toolsExport(t, nc, "demo", format)
			body, err := messages.ToJSON(exported, "."+format)
			if err != nil {
				t.Fatalf("the export does not read back: %v\n%s", err, exported)
			}
			if r := requestTo(t, nc, "copy", "apply", string(body)); r.Code != "" {
				t.Fatalf("apply of the export: %s %s\nthe export:\n%s", r.Code, r.Raw, exported)
			}
			if got := toolsConfig(t, nc, "copy"); !reflect.DeepEqual(got, orig) {
				a, _ := json.MarshalIndent(orig, "", " ")
				b, _ := json.MarshalIndent(got, "", " ")
				t.Fatalf("after export | apply the copy differs\ndemo:\n%s\ncopy:\n%s", a, b)
			}
			// The copy's plugin source runs too (the greeting came with
			// the vars: unset it first).
			toolsOK(t, nc, "copy", "set_var", `{"name":"greeting","unset":true}`)
			lumentest.WaitFor(t, 30*time.Second, "the copy's plugin source", func() bool {
				vars, _ := toolsOK(t, nc, "copy", "get", `{}`).Body["vars"].(map[string]any)
				return vars["greeting"] == "hello, ada"
			})
			toolsOK(t, nc, "copy", "apply", `{"confirm_empty":true,"states":[],"rules":[]}`)
			if got := toolsConfig(t, nc, "copy"); len(got["sources"].([]any)) != 0 || len(got["tools"].([]any)) != 0 {
				t.Fatalf("an empty apply keeps %v", got)
			}
		})
	}

	// The plugin goes away: after a restart (and in a replay of the
	// journal) the light still has its source, which now fails at run
	// time; nothing accepted is refused on replay.
	nc.Close()
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(pdir, "hello.wasm")); err != nil {
		t.Fatal(err)
	}
	d = startWith(t, cfg, "demo", "copy")
	nc = connectTo(t, d)
	verifyReplay(t, nc, "demo")
	if got := toolsConfig(t, nc, "demo"); !reflect.DeepEqual(got, orig) {
		t.Fatalf("after a restart without the plugin demo has %v", got)
	}
	if l := toolsList(t, nc, "demo"); len(l.Plugins) != 1 || l.Plugins[0].Name != "broken" {
		t.Fatalf("plugins after the restart: %+v", l.Plugins)
	}
	if r := requestTo(t, nc, "demo", "create_source", `{"name":"greet2","interval_ms":300,"fetch":{"tool":"hello"},"store":{"x":"result"}}`); r.Code != "404" {
		t.Fatalf("a new source on the removed plugin: %s %s", r.Code, r.Raw)
	}
}

// Tools run in the Wasmtime sandbox: fetch reaches what the tool declared
// and the operator allowed, secrets reach only their hosts and never the
// tool, and hostile code is contained with a clear error while the daemon
// answers.
func TestToolsRunSandboxed(t *testing.T) {
	lumentest.NeedGuest(t)
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/weather":
			fmt.Fprint(w, `{"main":{"temp":3.5},"name":"Paris"}`)
		case "/echo":
			fmt.Fprintf(w, `{"auth":%q}`, r.Header.Get("Authorization"))
		case "/big":
			chunk := strings.Repeat("x", 1<<20)
			for range 50 {
				if _, err := fmt.Fprint(w, chunk); err != nil {
					return
				}
			}
		}
	}))
	defer api.Close()
	host := strings.TrimPrefix(api.URL, "http://")
	dir := t.TempDir()
	d := startWith(t, func(c *daemon.Config) { c.Data, c.AllowNet = dir, []string{host} }, "demo")
	nc := connectTo(t, d)

	defineTool(t, nc, map[string]any{"name": "weather", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/weather');\nconst w = await r.json();\nlog('got', w.name);\nreturn {temp: w.main.temp + params.add};", host)})
	r := toolsOK(t, nc, "demo", "run_tool", `{"name":"weather","args":{"add":1}}`)
	if res, _ := r.Body["result"].(map[string]any); res["temp"] != 4.5 {
		t.Fatalf("weather: %s", r.Raw)
	}
	if log, _ := r.Body["log"].([]any); len(log) != 1 || log[0] != "got Paris" {
		t.Fatalf("weather's log: %s", r.Raw)
	}

	// Every call gets a fresh instance.
	defineTool(t, nc, map[string]any{"name": "counter", "code": "globalThis.n = (globalThis.n || 0) + 1; return globalThis.n;"})
	for range 3 {
		if r := toolsOK(t, nc, "demo", "run_tool", `{"name":"counter","args":{}}`); r.Body["result"] != 1.0 {
			t.Fatalf("counter: %s", r.Raw)
		}
	}

	// A secret reaches only its host, and the tool sees it redacted (set
	// as lumen secret set does, while the daemon runs).
	st, err := secrets.Open(secrets.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	canon, err := secrets.NormalizeHost(host)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set("API_KEY", []string{canon}, "sk-live-12345"); err != nil {
		t.Fatal(err)
	}
	defineTool(t, nc, map[string]any{"name": "echo", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/echo', {headers: {Authorization: 'Bearer {{secret:API_KEY}}'}});\nconst body = await r.json();\nlog('echoed', JSON.stringify(body), '{{secret:API_KEY}}');\nreturn body;", host)})
	r = toolsOK(t, nc, "demo", "run_tool", `{"name":"echo","args":{}}`)
	if strings.Contains(string(r.Raw), "sk-live") || !strings.Contains(string(r.Raw), "Bearer [secret API_KEY]") {
		t.Fatalf("the secret's value reached the tool, or was not sent: %s", r.Raw)
	}
	// Nor is it in a journal slice for a bug report (what lumen journal
	// export writes).
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	slice, err := past.ExportSlice(context.Background(), journal.New(js), "demo", 0)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if _, err := slice.WriteTo(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "sk-live") || !strings.Contains(b.String(), "{{secret:API_KEY}}") {
		t.Fatal("the journal slice holds the secret's value, or not the tool that names it")
	}

	hostile := []struct {
		name, code string
		hosts      []string
		says       string
	}{
		{"endless loop", "while (true) {}", nil, "time"},
		{"memory bomb", "let s = 'x'; while (true) s += s;", nil, "memory"},
		{"deep recursion", "function f(n) { return f(n + 1) + 1 } return f(0);", nil, "stack"},
		{"no require", "return typeof require + typeof process;", nil, ""},
		{"private address", "return (await fetch('https://10.0.0.1/')).status;", []string{"10.0.0.1"}, "allow-net"},
		{"metadata", "return (await fetch('http://169.254.169.254/latest/meta-data')).status;", []string{"169.254.169.254"}, "allow-net"},
		{"loopback on an unlisted port", "return (await fetch('https://127.0.0.1:1/')).status;", []string{"127.0.0.1:1"}, "allow-net"},
		{"plain http elsewhere", "return (await fetch('http://example.com/')).status;", []string{"example.com"}, "https"},
		{"undeclared host", fmt.Sprintf("return (await fetch('http://%s/weather')).status;", host), nil, "declare"},
		{"big response", fmt.Sprintf("return (await fetch('http://%s/big')).body.length;", host), []string{host}, "larger"},
	}
	for _, h := range hostile {
		name := strings.ToLower(strings.ReplaceAll(h.name, " ", "_"))
		defineTool(t, nc, map[string]any{"name": name, "code": h.code, "hosts": h.hosts})
		start := time.Now()
		r := toolsRun(t, nc, name, "")
		if h.name == "no require" {
			if r.Body["result"] != "undefinedundefined" {
				t.Errorf("%s: %s", h.name, r.Raw)
			}
			continue
		}
		if r.Code != "400" || !strings.Contains(strings.ToLower(fmt.Sprint(r.Body["error"])), h.says) {
			t.Errorf("%s: want a 400 saying %q, got %s %s", h.name, h.says, r.Code, r.Raw)
		}
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("%s: took %v", h.name, d)
		}
		// The daemon stays responsive.
		mustOK(t, nc, "get", `{}`)
	}
	if r := toolsRun(t, nc, "nope", ""); r.Code != "404" {
		t.Fatalf("unknown tool: %s", r.Raw)
	}
	// list_tools gives the host the tool declared (lumen tool ls shows it).
	if l := toolsOK(t, nc, "demo", "list_tools", `{}`); !strings.Contains(string(l.Raw), `"hosts":["`+host+`"]`) {
		t.Fatalf("list_tools: %s", l.Raw)
	}
}

// A tool's arguments are checked against its params schema before it
// runs: a mismatch is a 400 that names the argument (the agent's testTool
// gets the same answer, so the model can correct itself), and a schema
// that is not one is refused when the tool is defined.
func TestToolsParamsAreChecked(t *testing.T) {
	lumentest.NeedGuest(t)
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	defineTool(t, nc, map[string]any{"name": "add_one", "code": "return params.add + 1",
		"params": map[string]any{"type": "object", "properties": map[string]any{"add": map[string]any{"type": "number"}}, "required": []string{"add"}}})
	if r := toolsOK(t, nc, "demo", "run_tool", `{"name":"add_one","args":{"add":2}}`); fmt.Sprint(r.Body["result"]) != "3" {
		t.Fatalf("add_one 2: %s", r.Raw)
	}
	for args, says := range map[string]string{
		`{"add":"x"}`: "tool add_one: the arguments do not match its params schema: add: got string, want number",
		`{}`:          "the arguments: missing property 'add'",
	} {
		r := toolsRun(t, nc, "add_one", args)
		if r.Code != "400" || !strings.Contains(r.Header, says) {
			t.Errorf("add_one %s: %s", args, r.Raw)
		}
	}
	r := requestTo(t, nc, "demo", "define_tool", `{"name":"broken","code":"return 1","params":{"type":"nmber"}}`)
	if r.Code != "400" || !strings.Contains(r.Header, `tool "broken": params: the schema is not a valid JSON schema: type:`) {
		t.Errorf("a schema that is not one: %s", r.Raw)
	}
}
