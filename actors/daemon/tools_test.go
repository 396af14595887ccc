package daemon_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
)

// The tools through the daemon in process: definitions, the built-ins,
// the operator's plugins, the sandbox.

// toolsReply is a reply with its error code and sentence (from the
// headers) and its body decoded.
type toolsReply struct {
	Code   string // Nats-Service-Error-Code, "" on success
	Header string // Nats-Service-Error
	Raw    []byte
	Body   map[string]any
}

// toolsCall sends body to lumen.<light>.cmd.<verb>.
func toolsCall(t *testing.T, nc *nats.Conn, light, verb, body string) toolsReply {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), 30*time.Second)
	if err != nil {
		t.Fatalf("%s %s: %v", verb, body, err)
	}
	r := toolsReply{Raw: m.Data}
	if m.Header != nil {
		r.Code, r.Header = m.Header.Get(micro.ErrorCodeHeader), m.Header.Get(micro.ErrorHeader)
	}
	if err := json.Unmarshal(m.Data, &r.Body); err != nil {
		t.Fatalf("the reply to %s is not JSON: %s", verb, m.Data)
	}
	return r
}

// toolsOK is toolsCall for a reply that must be a success.
func toolsOK(t *testing.T, nc *nats.Conn, light, verb, body string) toolsReply {
	t.Helper()
	r := toolsCall(t, nc, light, verb, body)
	if r.Code != "" || r.Body["ok"] != true {
		t.Fatalf("%s %s: want ok, got code %q: %s", verb, body, r.Code, r.Raw)
	}
	return r
}

// toolsRun runs the demo light's tool name with args ("" for none).
func toolsRun(t *testing.T, nc *nats.Conn, name, args string) toolsReply {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	return toolsCall(t, nc, "demo", "run_tool", fmt.Sprintf(`{"name":%q,"args":%s}`, name, args))
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
func toolsNames(t *testing.T, r toolsReply) []string {
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
		r := toolsCall(t, nc, "demo", tt.verb, tt.body)
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
