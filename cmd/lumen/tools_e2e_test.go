package main_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/nats-io/nats.go"
)

// toolNames returns the names of the tools in a reply's "tools" array,
// failing unless it is an array.
func toolNames(t *testing.T, r reply) []string {
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

func wantTools(t *testing.T, nc *nats.Conn, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if got := toolNames(t, mustOK(t, request(t, nc, "lumen.demo.cmd.list_tools", `{}`))); !slices.Equal(got, want) {
		t.Fatalf("list_tools: %v, want %v", got, want)
	}
	if got := toolNames(t, mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`))); !slices.Equal(got, want) {
		t.Fatalf("get tools: %v, want %v", got, want)
	}
}

// Tool definitions are journaled: they survive restarts (from the journal
// and from a snapshot), and bad ones are refused with a clear error.
func TestToolDefinitions(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)

	wantTools(t, nc)
	weather := `{"name":"weather","description":"current temperature",
		"params":{"type":"object","properties":{"city":{"type":"string"}}},
		"code":"const r = await fetch('https://api.example.com/w?q=' + params.city);\nreturn {temp: JSON.parse(r.body).temp};",
		"hosts":["api.example.com"]}`
	r := mustOK(t, request(t, nc, "lumen.demo.cmd.define_tool", weather))
	if len(r.Outputs) != 1 || !strings.Contains(fmt.Sprint(r.Outputs[0]["data"]), "weather") {
		t.Fatalf("define_tool outputs: %s", r.Raw)
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.define_tool", `{"tools":[{"name":"hello","code":"return 'hi ' + params.who;"}]}`))
	wantTools(t, nc, "weather", "hello")

	// list_tools gives the whole definition.
	l := mustOK(t, request(t, nc, "lumen.demo.cmd.list_tools", `{}`))
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
		r := request(t, nc, "lumen.demo.cmd."+tt.verb, tt.body)
		if r.Code != tt.code || r.Body["ok"] != false {
			t.Fatalf("%s: code %q, want %s: %s", tt.name, r.Code, tt.code, r.Raw)
		}
		for _, s := range tt.says {
			if !strings.Contains(r.Header, s) {
				t.Errorf("%s: error %q does not say %q", tt.name, r.Header, s)
			}
		}
	}
	wantTools(t, nc, "weather", "hello")

	// After a crash the journal brings them back.
	d.Kill()
	d = startDaemon(t, dir)
	nc = connect(t, d.URL)
	wantTools(t, nc, "weather", "hello")

	mustOK(t, request(t, nc, "lumen.demo.cmd.delete_tool", `{"name":"weather"}`))
	wantTools(t, nc, "hello")

	// After a clean stop, the snapshot does.
	d.Stop()
	d = startDaemon(t, dir)
	nc = connect(t, d.URL)
	wantTools(t, nc, "hello")

	// apply replaces the tools.
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"confirm_empty":true,"states":[],"rules":[],"tools":[{"name":"btc","code":"return 1"}]}`))
	wantTools(t, nc, "btc")
	mustOK(t, request(t, nc, "lumen.demo.cmd.apply", `{"confirm_empty":true,"states":[],"rules":[]}`))
	wantTools(t, nc)

	d.Stop()
	out, code := runCLI(t, "", "replay", "--data", dir, "--light", "demo", "--verify", "--quiet")
	if code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --verify: %d\n%s", code, out)
	}
}
