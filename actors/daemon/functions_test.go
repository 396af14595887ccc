package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// A light's functions on the wire, in process: defined, called by rules
// and by other functions, refused with a sentence, deleted, and rolled
// back as configuration. (lumen function's words: cmd/lumen's
// functions_e2e_test.go.)

// Functions are defined one or several at once, a rule's condition calls
// them, and a refusal says what is wrong: a call with the wrong number
// of arguments, a built-in's name, a syntax error, deleting one that is
// used or that does not exist.
func TestFunctionsDefineCallAndRefuse(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	mustOK(t, nc, messages.VerbDefineFunction, `{"name":"mix","params":["a","b"],"code":"// the mean\nreturn (a + b) / 2;\n","description":"the mean of a and b"}`)
	mustOK(t, nc, messages.VerbDefineFunction, `{"name":"is_big","params":["v"],"code":"return mix(v, 0) > 100;"}`)
	mustOK(t, nc, messages.VerbAppendRules, `{"rules":[{"from":"*","on":"big","to":"red","condition":"is_big(getData('level'))"}]}`)
	for _, tc := range []struct{ verb, body, code, says string }{
		{messages.VerbDefineFunction, `{"name":"mix","code":"return 1"}`, "", `function "is_big" calls mix with 2 arguments, but mix takes no arguments`},
		{messages.VerbDefineFunction, `{"name":"random","code":"return 4"}`, "", `the function name "random" is taken by a built-in`},
		{messages.VerbDefineFunction, `{"name":"bad","code":"return (1"}`, "", `function "bad": the code has a syntax error at the end of the code`},
		{messages.VerbDeleteFunction, `{"name":"mix"}`, "409", `function "mix" is used by function is_big; change or delete those first`},
		{messages.VerbDeleteFunction, `{"name":"is_big"}`, "409", `function "is_big" is used by rule r`},
		{messages.VerbDeleteFunction, `{"name":"nope"}`, "", `function "nope" does not exist`},
	} {
		b, code := request(t, nc, tc.verb, tc.body)
		var e messages.ErrorReply
		if code == "" || (tc.code != "" && code != tc.code) || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s %s: %s %s, want a refusal (%s) saying %q", tc.verb, tc.body, code, b, tc.code, tc.says)
		}
	}
	// The rule calls the function, which calls the other.
	mustOK(t, nc, messages.VerbSetVar, `{"name":"level","value":300}`)
	if r := mustOK(t, nc, messages.VerbFire, `{"transition":"big"}`); r["state"] != "red" {
		t.Errorf("fire big: %v", r)
	}
	// Several at once.
	mustOK(t, nc, messages.VerbDefineFunction, `{"functions":[{"name":"one","code":"return 1;"},{"name":"two","params":["x"],"code":"return 2 * x;"}]}`)
	names := func() string {
		t.Helper()
		var g messages.GetReply
		b, _ := request(t, nc, messages.VerbGet, `{}`)
		if err := json.Unmarshal(b, &g); err != nil {
			t.Fatal(err)
		}
		var ns []string
		for _, f := range g.Functions {
			ns = append(ns, f.Name)
		}
		return fmt.Sprint(ns)
	}
	if got := names(); got != "[mix is_big one two]" {
		t.Errorf("functions: %s", got)
	}
	mustOK(t, nc, messages.VerbDeleteFunction, `{"name":"two"}`)
	if got := names(); got != "[mix is_big one]" {
		t.Errorf("functions after deleting two: %s", got)
	}
}

// Functions are configuration: a redefinition is a change in the
// history, and a rollback brings the old one back, which the rules then
// call.
func TestFunctionsRedefineAndRollback(t *testing.T) {
	nc := connectTo(t, start(t, t.TempDir(), "demo"))
	seqOf := func(verb, body string) uint64 { return uint64(mustOK(t, nc, verb, body)["seq"].(float64)) }
	first := seqOf(messages.VerbDefineFunction, `{"name":"target","code":"return 'red';"}`)
	rules := seqOf(messages.VerbAppendRules, `{"rules":[{"from":"*","on":"go","to":"red","condition":"target() === 'red'"},{"from":"*","on":"go","to":"blue"}]}`)
	second := seqOf(messages.VerbDefineFunction, `{"name":"target","code":"return 'blue';"}`)
	fire := func() any { return mustOK(t, nc, messages.VerbFire, `{"transition":"go"}`)["state"] }
	if s := fire(); s != "blue" {
		t.Fatalf("after the redefinition: %v", s)
	}
	b, code := request(t, nc, messages.VerbHistory, `{}`)
	var h messages.HistoryReply
	if code != "" || json.Unmarshal(b, &h) != nil {
		t.Fatalf("history: %s %s", code, b)
	}
	summaries := map[uint64]string{}
	for _, c := range h.Changes {
		summaries[c.Seq] = c.Summary
	}
	if !strings.Contains(summaries[first], "+function target") || !strings.Contains(summaries[second], "~function target") {
		t.Errorf("history: %v", summaries)
	}
	if b, code := request(t, nc, messages.VerbRollback, fmt.Sprintf(`{"seq":%d}`, rules)); code != "" || !strings.Contains(string(b), `"functions":{"changed":["target"]}`) {
		t.Fatalf("rollback %d: %s %s", rules, code, b)
	}
	if s := fire(); s != "red" {
		t.Errorf("after the rollback: %v", s)
	}
}
