package machine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/jsbox"
	"github.com/lumen-home/lumen/messages"
)

// weatherTool is a valid tool definition.
const weatherTool = `{"name":"weather","description":"current temperature",
	"params":{"type":"object","properties":{"city":{"type":"string"}}},
	"code":"const r = await fetch('https://api.example.com/w?q=' + params.city);\nreturn {temp: JSON.parse(r.body).temp};",
	"returns":{"type":"object"},
	"hosts":["api.example.com"]}`

// toolLight is the validation light with one custom tool.
func toolLight(t *testing.T) *light {
	t.Helper()
	l := validationLight(t)
	l.config(`{"op":"define_tool","tools":[` + weatherTool + `]}`)
	return l
}

// defineTool is a define_tool input of one tool with the given fields
// (JSON members) besides a name and valid code, unless they are given.
func defineTool(fields string) string {
	t := map[string]json.RawMessage{"name": json.RawMessage(`"t"`), "code": json.RawMessage(`"return 1"`)}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+fields+"}"), &extra); err != nil {
		panic(err)
	}
	for k, v := range extra {
		t[k] = v
	}
	b, _ := json.Marshal(map[string]any{"op": "define_tool", "tools": []any{t}})
	return string(b)
}

func hostsTool(hosts ...string) string {
	b, _ := json.Marshal(hosts)
	return defineTool(`"hosts":` + string(b))
}

func TestToolValidation(t *testing.T) {
	const fixJS = "; fix the JavaScript (it is the body of an async function of params: return a value, await fetch(...))"
	const fixHost = "; give a lowercase host name like api.example.com or an IP address, with an optional :port"
	many := make([]string, 33)
	for i := range many {
		many[i] = fmt.Sprintf("h%d.example.com", i)
	}
	big, _ := json.Marshal("return 1;" + strings.Repeat(" ", 64<<10))
	tests := []struct {
		name    string
		payload string
		code    int
		says    string
	}{
		{"no tools", `{"op":"define_tool","tools":[]}`,
			400, "define_tool needs at least one tool in tools"},
		{"no name", defineTool(`"name":""`),
			400, "tools[0] has no name; give every tool a name like get_weather"},
		{"capital letters in the name", defineTool(`"name":"Weather"`),
			400, `tool name "Weather" is not valid; use a lowercase letter, then at most 63 lowercase letters, digits or underscores, e.g. get_weather`},
		{"name starting with a digit", defineTool(`"name":"1x"`),
			400, `tool name "1x" is not valid; use a lowercase letter, then at most 63 lowercase letters, digits or underscores, e.g. get_weather`},
		{"name with a dash", defineTool(`"name":"get-weather"`),
			400, `tool name "get-weather" is not valid; use a lowercase letter, then at most 63 lowercase letters, digits or underscores, e.g. get_weather`},
		{"name too long", defineTool(`"name":"` + strings.Repeat("a", 65) + `"`),
			400, `tool name "` + strings.Repeat("a", 65) + `" is not valid; use a lowercase letter, then at most 63 lowercase letters, digits or underscores, e.g. get_weather`},
		{"built-in name", defineTool(`"name":"fetch_json"`),
			409, `tool name "fetch_json" is taken by a built-in tool (fetch_json, fetch_text, get_time); pick another name`},
		{"listed twice", `{"op":"define_tool","tools":[{"name":"a","code":"return 1"},{"name":"a","code":"return 2"}]}`,
			409, `tool "a" is listed twice; list each tool once`},
		{"no code", defineTool(`"code":""`),
			400, `tool "t": code is empty; write the body of an async function of params, e.g. return {ok: true}`},
		{"blank code", defineTool(`"code":" \n\t"`),
			400, `tool "t": code is empty; write the body of an async function of params, e.g. return {ok: true}`},
		{"code over 64 KiB", defineTool(`"code":` + string(big)),
			400, `tool "t": the code is 65545 bytes; keep it at most 65536 bytes (64 KiB)`},
		{"syntax error on line 2", defineTool(`"code":"const r = await fetch('https://x');\nreturn {t: r.status +};"`),
			400, `tool "t": the code has a syntax error at line 2, column 22 (Unexpected token })` + fixJS},
		{"syntax error on line 1", defineTool(`"code":"return 1 +* 2"`),
			400, `tool "t": the code has a syntax error at line 1, column 11 (Unexpected token *)` + fixJS},
		{"unclosed brace", defineTool(`"code":"if (params.x) {\n  return 1;"`),
			400, `tool "t": the code has a syntax error at the end of the code (` + jsbox.EndsEarly + `)` + fixJS},
		{"escaping the function", defineTool(`"code":"return 1;\n}); (async function() {"`),
			400, `tool "t": the code has a syntax error (it closes a bracket or brace it did not open)` + fixJS},
		{"compile error", defineTool(`"code":"let a = 1;\nlet a = 2;\nreturn a;"`),
			400, `tool "t": the code has a syntax error at line 2, column 5 (Identifier 'a' has already been declared)` + fixJS},
		{"params an array", defineTool(`"params":[1]`),
			400, `tool "t": params must be a JSON object (a JSON schema such as {"type":"object","properties":{…}}), or left out`},
		{"params a string", defineTool(`"params":"city"`),
			400, `tool "t": params must be a JSON object (a JSON schema such as {"type":"object","properties":{…}}), or left out`},
		{"returns a number", defineTool(`"returns":1`),
			400, `tool "t": returns must be a JSON object (a JSON schema such as {"type":"object","properties":{…}}), or left out`},
		{"too many hosts", hostsTool(many...),
			400, `tool "t" lists 33 hosts; list at most 32`},
		{"empty host", hostsTool(""),
			400, `tool "t": hosts[0] "" is empty` + fixHost},
		{"host with a scheme", hostsTool("api.example.com", "https://api.example.com"),
			400, `tool "t": hosts[1] "https://api.example.com" has a scheme` + fixHost + `, without http:// or https://`},
		{"host with a path", hostsTool("api.example.com/v1"),
			400, `tool "t": hosts[0] "api.example.com/v1" has a path or user part` + fixHost + `, without a path`},
		{"wildcard host", hostsTool("*.example.com"),
			400, `tool "t": hosts[0] "*.example.com" is a wildcard; list each host the tool needs, e.g. api.example.com`},
		{"capital letters in a host", hostsTool("API.example.com"),
			400, `tool "t": hosts[0] "API.example.com" has capital letters; write it in lowercase`},
		{"host with a space", hostsTool("api example.com"),
			400, `tool "t": hosts[0] "api example.com" has spaces` + fixHost},
		{"port 0", hostsTool("api.example.com:0"),
			400, `tool "t": hosts[0] "api.example.com:0" has port "0"; give a port from 1 to 65535, or leave it out`},
		{"port too large", hostsTool("api.example.com:65536"),
			400, `tool "t": hosts[0] "api.example.com:65536" has port "65536"; give a port from 1 to 65535, or leave it out`},
		{"empty port", hostsTool("api.example.com:"),
			400, `tool "t": hosts[0] "api.example.com:" has port ""; give a port from 1 to 65535, or leave it out`},
		{"shortened IP address", hostsTool("127.1"),
			400, `tool "t": hosts[0] "127.1" looks like a shortened IP address; write the address in full, e.g. 192.168.1.10`},
		{"trailing dot", hostsTool("api.example.com."),
			400, `tool "t": hosts[0] "api.example.com." ends with a dot; write it without the trailing dot`},
		{"bad label", hostsTool("-api.example.com"),
			400, `tool "t": hosts[0] "-api.example.com" is not a host name: a part cannot start or end with -`},
		{"empty label", hostsTool("api..example.com"),
			400, `tool "t": hosts[0] "api..example.com" is not a host name: each part between dots must have 1 to 63 characters`},
		{"odd character", hostsTool("api!.example.com"),
			400, `tool "t": hosts[0] "api!.example.com" is not a host name: "!" is not allowed`},
		{"IPv4 in brackets", hostsTool("[192.168.1.10]:80"),
			400, `tool "t": hosts[0] "[192.168.1.10]:80" puts an IPv4 address in brackets; write it without them, e.g. 192.168.1.10:8080`},
		{"IPv6 with a zone", hostsTool("fe80::1%eth0"),
			400, `tool "t": hosts[0] "fe80::1%eth0" has an IPv6 zone; give the address without %eth0`},
		{"unclosed bracket", hostsTool("[::1"),
			400, `tool "t": hosts[0] "[::1" has no ] after the IPv6 address` + fixHost},
		{"host listed twice", hostsTool("api.example.com", "api.example.com"),
			400, `tool "t": host "api.example.com" is listed twice; list each host once`},
		{"one bad tool of two defines nothing", `{"op":"define_tool","tools":[{"name":"ok","code":"return 1"},{"name":"bad","code":"return ("}]}`,
			400, `tool "bad": the code has a syntax error at the end of the code (` + jsbox.EndsEarly + `)` + fixJS},
		{"apply with a bad tool changes nothing", `{"op":"apply","tools":[{"name":"get_time","code":"return 1"}]}`,
			409, `tool name "get_time" is taken by a built-in tool (fetch_json, fetch_text, get_time); pick another name`},
		{"delete_tool without a name", `{"op":"delete_tool"}`,
			400, "delete_tool: name is empty; give the name of the tool to delete"},
		{"delete an unknown tool", `{"op":"delete_tool","name":"nope"}`,
			404, `tool "nope" does not exist; nothing to delete (list_tools lists the tools)`},
		{"delete a built-in tool", `{"op":"delete_tool","name":"fetch_text"}`,
			409, `tool "fetch_text" is built in and cannot be deleted`},
		{"define_tool with a name", `{"op":"define_tool","name":"weather"}`,
			400, "config: define_tool does not take name; it takes tools"},
		{"delete_tool with tools", `{"op":"delete_tool","name":"weather","tools":[]}`,
			400, "config: delete_tool does not take tools; it takes name"},
		{"create_state with tools", `{"op":"create_state","states":[{"name":"x","r":1,"g":1,"b":1}],"tools":[]}`,
			400, "config: create_state does not take tools; it takes states"},
		{"a tool with an unknown field", `{"op":"define_tool","tools":[{"name":"t","code":"return 1","host":["x"]}]}`,
			400, `config: tools[0].host: unknown field; check the spelling against the documented fields: code, description, hosts, name, params, returns`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := toolLight(t)
			before, _ := l.m.Snapshot()
			model := l.m.Model()
			r := l.apply(messages.InConfig, tt.payload)
			if r.Err == nil {
				t.Fatalf("accepted: %v", outputs(t, r))
			}
			if r.Err.Code != tt.code || r.Err.Kind != messages.ErrorRejected || r.Err.Error != tt.says {
				t.Errorf("got  %d %s: %s\nwant %d rejected: %s", r.Err.Code, r.Err.Kind, r.Err.Error, tt.code, tt.says)
			}
			if len(r.Outputs) != 1 || r.Outputs[0].Type != messages.OutError {
				t.Errorf("outputs %v, want the error alone", outputs(t, r))
			}
			after, _ := l.m.Snapshot()
			if !bytes.Equal(before, after) {
				t.Errorf("the machine changed:\nbefore %s\nafter  %s", before, after)
			}
			if got := l.m.Model(); !reflect.DeepEqual(got, model) {
				t.Errorf("the model changed:\nbefore %+v\nafter  %+v", model, got)
			}
		})
	}
}

func TestToolHostsAccepted(t *testing.T) {
	for _, h := range []string{
		"api.example.com", "api.example.com:8443", "localhost", "my_host.local", "xn--bcher-kva.example",
		"192.168.1.10", "192.168.1.10:8080", "::1", "2001:db8::1", "[::1]", "[2001:db8::1]:8443",
	} {
		t.Run(h, func(t *testing.T) {
			l := newLight(t)
			r := l.config(hostsTool(h))
			if got := r.Outputs[0].Data.(messages.OutConfigData).Tools; !reflect.DeepEqual(got, []string{"t"}) {
				t.Errorf("tools %v", got)
			}
			if got := l.m.Model().Tools[0].Hosts; !reflect.DeepEqual(got, []string{h}) {
				t.Errorf("hosts %v", got)
			}
		})
	}
}

func TestToolOps(t *testing.T) {
	l := newLight(t)
	if got := mustJSON(t, l.m.Model().Tools); got != "[]" {
		t.Errorf("tools of a new light: %s, want []", got)
	}
	l.config(`{"op":"define_tool","tools":[` + weatherTool + `]}`)
	// Two at once; params and returns are kept compact; null is absent.
	l.config(`{"op":"define_tool","tools":[
		{"name":"btc","code":"const r = await fetch('https://api.coinbase.com/v2/prices/spot');\nreturn JSON.parse(r.body).data.amount;","hosts":["api.coinbase.com"],"params":{ "type" : "object" }},
		{"name":"hello","code":"return 'hi ' + params.who;","params":null}]}`)
	// Replacing keeps the tool's place.
	l.config(`{"op":"define_tool","tools":[{"name":"weather","code":"return {temp: 20};","description":"fixed"}]}`)
	names := func() []string {
		var out []string
		for _, tl := range l.m.Model().Tools {
			out = append(out, tl.Name)
		}
		return out
	}
	if got := names(); !reflect.DeepEqual(got, []string{"weather", "btc", "hello"}) {
		t.Errorf("tools %v, want weather btc hello", got)
	}
	fmt.Fprintf(&l.log, "= get tools %s\n", mustJSON(t, l.m.Model().Tools))
	tools := l.m.Model().Tools
	if w := tools[0]; w.Description != "fixed" || w.Params != nil || w.Hosts != nil || w.Code != "return {temp: 20};" {
		t.Errorf("replaced weather: %+v", w)
	}
	if p := string(tools[1].Params); p != `{"type":"object"}` {
		t.Errorf("btc params %s", p)
	}
	if tools[2].Params != nil {
		t.Errorf("hello params %s, want none", tools[2].Params)
	}
	// The model is a copy.
	tools[1].Hosts[0] = "evil.example.com"
	tools[1].Params[2] = 'X'
	if again := l.m.Model().Tools[1]; again.Hosts[0] != "api.coinbase.com" || string(again.Params) != `{"type":"object"}` {
		t.Errorf("the model shares memory with the machine: %+v", again)
	}
	l.config(`{"op":"delete_tool","name":"btc"}`)
	if got := names(); !reflect.DeepEqual(got, []string{"weather", "hello"}) {
		t.Errorf("after delete: %v", got)
	}
	// apply replaces the tools; without tools, none are left.
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"tools":[{"name":"hello","code":"return 2"},{"name":"btc","code":"return 3"}]}`)
	if got := names(); !reflect.DeepEqual(got, []string{"hello", "btc"}) {
		t.Errorf("after apply: %v", got)
	}
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}]}`)
	if got := mustJSON(t, l.m.Model().Tools); got != "[]" {
		t.Errorf("after apply without tools: %s, want []", got)
	}
	fmt.Fprintf(&l.log, "= get tools %s\n", mustJSON(t, l.m.Model().Tools))
	l.golden("tools")
}

func TestToolsSnapshotAndExport(t *testing.T) {
	l := toolLight(t)
	l.config(`{"op":"define_tool","tools":[{"name":"hello","code":"return 'hi';"}]}`)
	snap, err := l.m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(snap, []byte(`"tools":[{"name":"weather"`)) {
		t.Errorf("the snapshot has no tools: %s", snap)
	}
	restored, err := machine.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if s2, _ := restored.Snapshot(); !bytes.Equal(s2, snap) {
		t.Errorf("the restored machine snapshots differently:\n%s\n%s", s2, snap)
	}
	if a, b := l.m.Model(), restored.Model(); !reflect.DeepEqual(a, b) {
		t.Errorf("models differ:\n%+v\n%+v", a, b)
	}
	// Both go on alike.
	ev := l.next()
	in := `{"op":"delete_tool","name":"weather"}`
	equalLines(t, outputs(t, restored.Apply(ev, messages.InConfig, []byte(in))), outputs(t, l.m.Apply(ev, messages.InConfig, []byte(in))))
	if a, b := l.m.Model().Tools, restored.Model().Tools; !reflect.DeepEqual(a, b) || len(a) != 1 {
		t.Errorf("tools differ after a delete: %+v, %+v", a, b)
	}

	// Export carries the tools, and apply takes them back.
	exp := l.m.Export()
	if len(exp.Tools) != 1 || exp.Tools[0].Name != "hello" {
		t.Fatalf("export tools %+v", exp.Tools)
	}
	l2 := newLight(t)
	l2.config(applyConfig(t, exp))
	if got := l2.m.Export(); !reflect.DeepEqual(got, exp) {
		t.Errorf("re-applied export differs:\n got %+v\nwant %+v", got, exp)
	}

	// A light without tools snapshots as before tools existed, and a
	// snapshot without tools restores to none.
	bare := newLight(t)
	s, _ := bare.m.Snapshot()
	if bytes.Contains(s, []byte(`"tools"`)) {
		t.Errorf("a snapshot without tools names them: %s", s)
	}
	m, err := machine.Restore(s)
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	if got := mustJSON(t, m.Model().Tools); got != "[]" {
		t.Errorf("restored tools %s", got)
	}
}

// A snapshot holding a tool that does not check is refused.
func TestRestoreRejectsBadTools(t *testing.T) {
	for _, given := range []string{
		`{"v":1,"state":"off","states":[],"tools":[{"name":"get_time","code":"return 1"}]}`,
		`{"v":1,"state":"off","states":[],"tools":[{"name":"x","code":"return ("}]}`,
	} {
		if m, err := machine.Restore([]byte(given)); err == nil {
			m.Close()
			t.Errorf("restored %s", given)
		}
	}
}
