package main_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// The built-in tools and the operator's plugins through the daemon:
// fetch_json, fetch_text and get_time answer run_tool and feed a data
// source without any tool defined; a Go plugin dropped into
// <data>/plugins runs by its file's name, and a broken one says why, at
// start and on every run, while the light keeps working.
func TestBuiltinToolsAndPlugins(t *testing.T) {
	// Not parallel: the daemon inherits the test-only minimum interval.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
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
	plugins := filepath.Join(dir, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(plugins, "hello.wasm"), "../../plugins/example")
	build.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the example plugin: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(plugins, "broken.wasm"), []byte("not wasm"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, dir, "--allow-net", host)
	nc := connect(t, d.URL)

	r := mustOK(t, runTool(t, nc, "fetch_json", `{"url":"`+api.URL+`/weather"}`))
	if res, _ := r.Body["result"].(map[string]any); res["status"] != 200.0 || fmt.Sprint(res["body"]) != "map[main:map[temp:-2.5] name:Oslo]" {
		t.Fatalf("fetch_json: %s", r.Raw)
	}
	r = mustOK(t, runTool(t, nc, "fetch_text", `{"url":"`+api.URL+`/motd"}`))
	if res, _ := r.Body["result"].(map[string]any); res["body"] != "be kind" {
		t.Fatalf("fetch_text: %s", r.Raw)
	}
	r = mustOK(t, runTool(t, nc, "get_time", `{"tz":"Asia/Tokyo"}`))
	if res, _ := r.Body["result"].(map[string]any); res["tz"] != "Asia/Tokyo" || res["utc_offset"] != "+09:00" ||
		time.Since(time.UnixMilli(int64(res["unix_ms"].(float64)))).Abs() > time.Minute {
		t.Fatalf("get_time: %s", r.Raw)
	}
	// No declared hosts, but no way past the operator either.
	if r := runTool(t, nc, "fetch_json", `{"url":"http://10.0.0.1/"}`); r.Code != "400" || !strings.Contains(r.Header, "allow-net") {
		t.Fatalf("fetch_json to the LAN: %s %s", r.Code, r.Raw)
	}
	if r := runTool(t, nc, "fetch_json", `{"url":"`+api.URL+`/missing"}`); r.Code != "400" || !strings.Contains(r.Header, "answered 404") {
		t.Fatalf("fetch_json of a 404: %s %s", r.Code, r.Raw)
	}

	r = mustOK(t, runTool(t, nc, "hello", `{"name":"ada"}`))
	if res, _ := r.Body["result"].(map[string]any); res["greeting"] != "hello, ada" {
		t.Fatalf("the hello plugin: %s", r.Raw)
	}
	if r := runTool(t, nc, "broken", `{}`); r.Code != "500" || !strings.Contains(r.Header, "broken.wasm cannot run") {
		t.Fatalf("the broken plugin: %s %s", r.Code, r.Raw)
	}
	if logs := d.Logs(); !strings.Contains(logs, "broken.wasm cannot run") {
		t.Fatalf("the broken plugin is not logged:\n%s", logs)
	}
	// The operator's plugin wins over a tool defined with its name.
	defineTool(t, nc, map[string]any{"name": "hello", "code": "return 'defined'"})
	if r := mustOK(t, runTool(t, nc, "hello", `{"name":"ada"}`)); !strings.Contains(string(r.Raw), "hello, ada") {
		t.Fatalf("the hello plugin after define_tool hello: %s", r.Raw)
	}
	lumentest.WaitFor(t, 10*time.Second, "the shadowed tool to be logged", func() bool {
		return strings.Contains(d.Logs(), "the plugin hello runs instead of the tool defined with that name")
	})
	if r := runTool(t, nc, "nope", ""); r.Code != "404" || !strings.Contains(r.Header, "[broken hello] and the built-in fetch_json") {
		t.Fatalf("unknown tool: %s %s", r.Code, r.Raw)
	}

	// A data source on fetch_json, with no tool defined.
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"cold","r":0,"g":0,"b":255}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"weather_updated","to":"cold","condition":"getData('temp') < 5"}]}`))
	src, _ := json.Marshal(map[string]any{"name": "weather", "interval_ms": 200,
		"fetch": map[string]any{"tool": "fetch_json", "args": map[string]any{"url": api.URL + "/weather"}},
		"store": map[string]any{"temp": "result.body.main.temp"}, "fires": "weather_updated"})
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", string(src)))
	lumentest.WaitFor(t, 30*time.Second, "the source to store the temperature and turn the light cold", func() bool {
		m := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body
		vars, _ := m["vars"].(map[string]any)
		return vars["temp"] == -2.5 && m["state"] == "cold"
	})
}
