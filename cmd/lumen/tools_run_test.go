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

func runTool(t *testing.T, nc *nats.Conn, name, args string) reply {
	t.Helper()
	if args == "" {
		args = "{}"
	}
	return request(t, nc, "lumen.demo.cmd.run_tool", fmt.Sprintf(`{"name":%q,"args":%s}`, name, args))
}

// Tools run in the Wasmtime sandbox: fetch reaches what the tool declared
// and the operator allowed, secrets reach only their hosts and never the
// tool, and hostile code is contained with a clear error while the daemon
// answers.
func TestRunTools(t *testing.T) {
	needGuest(t)
	t.Parallel()
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
	d := startDaemon(t, dir, "--allow-net", host)
	nc := connect(t, d.URL)

	defineTool(t, nc, map[string]any{"name": "weather", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/weather');\nconst w = await r.json();\nlog('got', w.name);\nreturn {temp: w.main.temp + params.add};", host)})
	r := mustOK(t, runTool(t, nc, "weather", `{"add":1}`))
	if res, _ := r.Body["result"].(map[string]any); res["temp"] != 4.5 {
		t.Fatalf("weather: %s", r.Raw)
	}

	// Every call gets a fresh instance.
	defineTool(t, nc, map[string]any{"name": "counter", "code": "globalThis.n = (globalThis.n || 0) + 1; return globalThis.n;"})
	for range 3 {
		if r := mustOK(t, runTool(t, nc, "counter", "")); r.Body["result"] != 1.0 {
			t.Fatalf("counter: %s", r.Raw)
		}
	}

	// A secret reaches only its host, and the tool sees it redacted.
	cmd := fmt.Sprintf("printf 'sk-live-12345' | %s secret set API_KEY --host %s --data %s", lumenBin(t), host, dir)
	if out, err := execShell(cmd); err != nil {
		t.Fatalf("%s: %v\n%s", cmd, err, out)
	}
	defineTool(t, nc, map[string]any{"name": "echo", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/echo', {headers: {Authorization: 'Bearer {{secret:API_KEY}}'}});\nconst body = await r.json();\nlog('echoed', JSON.stringify(body), '{{secret:API_KEY}}');\nreturn body;", host)})
	r = mustOK(t, runTool(t, nc, "echo", ""))
	if strings.Contains(string(r.Raw), "sk-live") || !strings.Contains(string(r.Raw), "Bearer [secret API_KEY]") {
		t.Fatalf("the secret's value reached the tool, or was not sent: %s", r.Raw)
	}
	// Nor is it in a journal slice for a bug report.
	slice := filepath.Join(t.TempDir(), "demo.slice")
	if out, code := runCLI(t, d.URL, "journal", "export", "--light", "demo", "-o", slice); code != 0 {
		t.Fatalf("lumen journal export: exit %d\n%s", code, out)
	}
	if b, err := os.ReadFile(slice); err != nil || strings.Contains(string(b), "sk-live") || !strings.Contains(string(b), "{{secret:API_KEY}}") {
		t.Fatalf("the journal slice holds the secret's value, or not the tool that names it (%v)", err)
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
		r := runTool(t, nc, name, "")
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
		mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`))
	}
	if r := runTool(t, nc, "nope", ""); r.Code != "404" {
		t.Fatalf("unknown tool: %s", r.Raw)
	}
	// The CLI.
	out, code := runCLI(t, d.URL, "tool", "run", "weather", "--args", `{"add":2}`)
	if code != 0 || !strings.Contains(out, `"temp":5.5`) || !strings.Contains(out, "log: got Paris") {
		t.Fatalf("lumen tool run (%d):\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "tool", "ls"); code != 0 || !strings.Contains(out, "weather") || !strings.Contains(out, host) {
		t.Fatalf("lumen tool ls (%d):\n%s", code, out)
	}
}

func execShell(cmd string) ([]byte, error) {
	return exec.Command("sh", "-c", cmd).CombinedOutput()
}

// A tool's arguments are checked against its params schema before it
// runs: a mismatch is a 400 that names the argument (the agent's testTool
// gets the same answer, so the model can correct itself), and a schema
// that is not one is refused when the tool is defined.
func TestToolParamsAreChecked(t *testing.T) {
	needGuest(t)
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	defineTool(t, nc, map[string]any{"name": "add_one", "code": "return params.add + 1",
		"params": map[string]any{"type": "object", "properties": map[string]any{"add": map[string]any{"type": "number"}}, "required": []string{"add"}}})
	if r := mustOK(t, runTool(t, nc, "add_one", `{"add":2}`)); fmt.Sprint(r.Body["result"]) != "3" {
		t.Fatalf("add_one 2: %s", r.Raw)
	}
	for args, says := range map[string]string{
		`{"add":"x"}`: "tool add_one: the arguments do not match its params schema: add: got string, want number",
		`{}`:          "the arguments: missing property 'add'",
	} {
		r := runTool(t, nc, "add_one", args)
		if r.Code != "400" || !strings.Contains(r.Header, says) {
			t.Errorf("add_one %s: %s", args, r.Raw)
		}
	}
	r := request(t, nc, "lumen.demo.cmd.define_tool", `{"name":"broken","code":"return 1","params":{"type":"nmber"}}`)
	if r.Code != "400" || !strings.Contains(r.Header, `tool "broken": params: the schema is not a valid JSON schema: type:`) {
		t.Errorf("a schema that is not one: %s", r.Raw)
	}
}
