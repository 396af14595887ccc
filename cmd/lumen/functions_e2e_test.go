package main_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/agent/agenttest"
	"github.com/lumen-home/lumen/internal/lumentest"
)

// The agent (the scripted model) defines functions, a state whose color
// calls one, a new blue state (sky: replacing the light's own blue would
// need approval) and rules that call the other; clicks then alternate as
// the functions say, the LED shows the color the function computes, the
// next prompt lists the functions, and the light keeps them through
// export, apply, history, a SIGKILL and replay --verify.
func TestAgentDefinesFunction(t *testing.T) {
	t.Parallel()
	srv := agenttest.New(
		agenttest.Step{Calls: []agenttest.Call{
			scripted("defineFunction", `{"name":"is_odd","params":["n"],"code":"return n % 2 === 1;","description":"true for an odd number"}`),
			scripted("defineFunction", `{"name":"half","params":["v"],"code":"return v / 2;"}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{
			scripted("createState", `{"name":"dim","r":"half(255)","g":0,"b":0}`),
			scripted("createState", `{"name":"sky","r":0,"g":0,"b":255}`),
			scripted("appendRules", `{"rules":[
				{"from":"*","on":"button_click","to":"dim","priority":10,"condition":"is_odd(getData('clicks') || 0)","action":"setData('clicks', (getData('clicks') || 0) + 1)"},
				{"from":"*","on":"button_click","to":"sky","priority":10,"action":"setData('clicks', (getData('clicks') || 0) + 1)"}]}`),
		}},
		agenttest.Step{Calls: []agenttest.Call{scripted("done", `{"message":"Clicks now go blue, dim red, blue and so on."}`)}},
	)
	defer srv.Close()
	dir := t.TempDir()
	d := startDaemon(t, dir, agentArgs(srv, "--hardware", "sim")...)
	out, code := runCLI(t, d.URL, "ask", "make clicks alternate blue and a dim red, with a function that says whether a count is odd")
	if code != 0 {
		t.Fatalf("lumen ask: exit %d\n%s\n%s", code, out, d.Logs())
	}
	for _, want := range []string{"✓ defineFunction", "✓ appendRules", "Clicks now go blue"} {
		if !strings.Contains(out, want) {
			t.Fatalf("lumen ask output lacks %q (an approval would have stopped it):\n%s", want, out)
		}
	}
	if err := srv.Err(); err != nil {
		t.Fatal(err)
	}
	// The model's next turn saw the functions in the prompt.
	reqs := srv.Requests()
	if len(reqs) < 2 || !strings.Contains(string(reqs[1].Messages[0].Content), `is_odd(n): true for an odd number`) {
		t.Errorf("the second prompt does not list the function:\n%s", reqs[len(reqs)-1].Messages[0].Content)
	}

	nc := connect(t, d.URL)
	clickAndSee := func(want string, raw [3]int) {
		t.Helper()
		if out, code := runCLI(t, d.URL, "press"); code != 0 {
			t.Fatalf("press: %s", out)
		}
		lumentest.WaitFor(t, 10*time.Second, "the LED to show "+want, func() bool {
			state, _, px := led(t, nc, "demo")
			return state == want && len(px) == 1 && px[0] == raw
		})
	}
	clickAndSee("sky", [3]int{0, 0, 255})
	clickAndSee("dim", [3]int{128, 0, 0}) // half(255), rounded
	clickAndSee("sky", [3]int{0, 0, 255})

	// A person sees them, and cannot delete one a rule calls.
	if out, code := runCLI(t, d.URL, "function", "ls"); code != 0 || !strings.Contains(out, "is_odd(n)") || !strings.Contains(out, "true for an odd number") || !strings.Contains(out, "half(v)") {
		t.Errorf("lumen function ls: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "function", "rm", "is_odd"); code != 1 || !strings.Contains(out, `function "is_odd" is used by rule r`) || !strings.Contains(out, "code 409") {
		t.Errorf("lumen function rm is_odd: exit %d\n%s", code, out)
	}
	if out, _ := runCLI(t, d.URL, "history"); !strings.Contains(out, "+function is_odd") || !strings.Contains(out, "+function half") {
		t.Errorf("lumen history does not show the functions:\n%s", out)
	}

	// Export, then apply the file back: nothing changes.
	exp, code := runCLI(t, d.URL, "export")
	if code != 0 || !strings.Contains(exp, "functions:\n  - name: is_odd\n    description: true for an odd number\n    params: [n]\n") {
		t.Fatalf("lumen export: exit %d\n%s", code, exp)
	}
	file := filepath.Join(t.TempDir(), "light.yaml")
	if err := os.WriteFile(file, []byte(exp), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "apply", "-f", file); code != 0 || !strings.Contains(out, "changed: states: unchanged; rules: unchanged; vars: unchanged") || strings.Contains(out, "functions:") {
		t.Fatalf("apply of the export: exit %d\n%s", code, out)
	}

	// After a power cut the light still calls them.
	nc.Close()
	d.Kill()
	d = startDaemon(t, dir, agentArgs(srv, "--hardware", "sim")...)
	nc = connect(t, d.URL)
	clickAndSee("dim", [3]int{128, 0, 0})
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: exit %d\n%s", code, out)
	}
}

// A person defines, lists and deletes functions with lumen function, and
// a refusal says what is wrong in the CLI's words. (What the daemon does
// with them: actors/daemon's TestFunctionsDefineCallAndRefuse.)
func TestFunctionCLI(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	code := filepath.Join(t.TempDir(), "mix.js")
	if err := os.WriteFile(code, []byte("// the mean\nreturn (a + b) / 2;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"function", "define", "mix", "--params", "a,b", "--code-file", code, "--description", "the mean of a and b"}, 0, `config define function: function mix`},
		{[]string{"function", "define", "is_big", "--params", "v", "--code", "return mix(v, 0) > 100;"}, 0, "config define function: function is_big"},
		{[]string{"rule", "add", "*", "big", "red", "--if", "is_big(getData('level'))"}, 0, "rules"},
		{[]string{"function", "define", "bad"}, 2, "give the function's body with --code or --code-file"},
		{[]string{"function", "define", "-f", code, "x"}, 2, "-f FILE holds the whole definition"},
		{[]string{"function", "rm", "mix"}, 1, `function "mix" is used by function is_big; change or delete those first (code 409)`},
		{[]string{"function", "ls"}, 0, "mix(a, b)  the mean of a and b  // the mean …\nis_big(v)  -                    return mix(v, 0) > 100;"},
	} {
		out, got := runCLI(t, d.URL, tc.args...)
		if got != tc.code || !strings.Contains(out, tc.want) {
			t.Errorf("lumen %s: exit %d, want %d with %q:\n%s", strings.Join(tc.args, " "), got, tc.code, tc.want, out)
		}
	}
	// A file defines several at once.
	defs := filepath.Join(t.TempDir(), "functions.yaml")
	if err := os.WriteFile(defs, []byte("functions:\n  - name: one\n    code: return 1;\n  - name: two\n    params: [x]\n    code: return 2 * x;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, code := runCLI(t, d.URL, "function", "define", "-f", defs); code != 0 || !strings.Contains(out, "config define function: functions one, two") {
		t.Errorf("define -f: exit %d\n%s", code, out)
	}
	out, _ := runCLI(t, d.URL, "function", "ls", "--json")
	var g struct {
		Functions []struct{ Name string } `json:"functions"`
	}
	if err := json.Unmarshal([]byte(out), &g); err != nil || fmt.Sprint(g.Functions) != "[{mix} {is_big} {one} {two}]" {
		t.Errorf("function ls --json: %v\n%s", err, out)
	}
	if out, code := runCLI(t, d.URL, "function", "rm", "two"); code != 0 || !strings.Contains(out, "config delete function: function two") {
		t.Errorf("function rm two: exit %d\n%s", code, out)
	}
}

// Functions are configuration: lumen diff shows a redefinition, lumen
// history and rollback name it. (The rules calling the old one after the
// rollback: actors/daemon's TestFunctionsRedefineAndRollback.)
func TestFunctionDiffAndRollback(t *testing.T) {
	t.Parallel()
	d := startDaemon(t, t.TempDir())
	nc := connect(t, d.URL)
	seqOf := func(r reply) string { return fmt.Sprint(uint64(r.Body["seq"].(float64))) }
	first := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.define_function", `{"name":"target","code":"return 'red';"}`)))
	rules := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"go","to":"red","condition":"target() === 'red'"},{"from":"*","on":"go","to":"blue"}]}`)))
	second := seqOf(mustOK(t, request(t, nc, "lumen.demo.cmd.define_function", `{"name":"target","code":"return 'blue';"}`)))
	if out, code := runCLI(t, d.URL, "diff", second); code != 0 || !strings.Contains(out, "-    code: return 'red';") || !strings.Contains(out, "+    code: return 'blue';") {
		t.Errorf("lumen diff %s: exit %d\n%s", second, code, out)
	}
	if out, _ := runCLI(t, d.URL, "history"); !strings.Contains(out, first+" ") || !strings.Contains(out, "+function target") || !strings.Contains(out, "~function target") {
		t.Errorf("lumen history:\n%s", out)
	}
	if out, code := runCLI(t, d.URL, "rollback", rules); code != 0 || !strings.Contains(out, "functions: ~target") {
		t.Fatalf("lumen rollback %s: exit %d\n%s", rules, code, out)
	}
}
