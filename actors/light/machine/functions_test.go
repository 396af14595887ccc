package machine_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/jsbox"
	"github.com/lumen-home/lumen/messages"
)

// functionLight has two functions, rules that call them, a state whose
// color calls one, and a function that calls another.
func functionLight(t *testing.T, opts ...machine.Option) *light {
	t.Helper()
	l := newLight(t, opts...)
	l.config(`{"op":"apply",
		"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255},{"name":"glow","r":"double(frame)","g":0,"b":0,"speed":40}],
		"functions":[
			{"name":"is_evening","description":"true from 18:00 (UTC)","params":["h"],"code":"const hour = h === undefined ? new Date(now()).getUTCHours() : h;\nreturn hour >= 18;"},
			{"name":"double","params":["x"],"code":"return 2 * x;"},
			{"name":"quadruple","params":["x"],"code":"return double(double(x));"}],
		"rules":[
			{"from":"*","on":"button_click","to":"blue","condition":"is_evening(getData('h'))"},
			{"from":"*","on":"button_click","to":"red","action":"setData('n', double(getData('n') || 1))"}]}`)
	return l
}

// defineFunction is a define_function input of one function with the
// given fields (JSON members) besides a name and valid code, unless they
// are given.
func defineFunction(fields string) string {
	f := map[string]json.RawMessage{"name": json.RawMessage(`"f"`), "code": json.RawMessage(`"return 1"`)}
	var extra map[string]json.RawMessage
	if err := json.Unmarshal([]byte("{"+fields+"}"), &extra); err != nil {
		panic(err)
	}
	for k, v := range extra {
		f[k] = v
	}
	b, _ := json.Marshal(map[string]any{"op": "define_function", "functions": []any{f}})
	return string(b)
}

func TestFunctionValidation(t *testing.T) {
	const fixJS = "; fix the JavaScript (it is the body of a function of its params: statements, and return gives the value)"
	reserved := func(name string) string {
		return `the function name "` + name + `" is taken by a built-in, an expression's parameter or a JavaScript reserved word; pick another name`
	}
	big, _ := json.Marshal("return 1;" + strings.Repeat(" ", 16<<10))
	many := make([]string, 17)
	for i := range many {
		many[i] = fmt.Sprintf("p%d", i)
	}
	manyParams, _ := json.Marshal(many)
	var hundredAndOne []messages.Function
	for i := range 101 {
		hundredAndOne = append(hundredAndOne, messages.Function{Name: fmt.Sprintf("f%d", i), Code: "return 1"})
	}
	tooMany, _ := json.Marshal(map[string]any{"op": "apply", "states": []any{}, "functions": hundredAndOne})
	tests := []struct {
		name    string
		payload string
		code    int
		says    string
	}{
		{"no functions", `{"op":"define_function","functions":[]}`,
			400, "define_function needs at least one function in functions"},
		{"no name", defineFunction(`"name":""`),
			400, "functions[0] has no name; give every function a name like is_evening"},
		{"a dash in the name", defineFunction(`"name":"is-evening"`),
			400, `the function name "is-evening" is not a JavaScript name; use letters, digits and _, not starting with a digit, e.g. is_evening`},
		{"a digit first", defineFunction(`"name":"2x"`),
			400, `the function name "2x" is not a JavaScript name; use letters, digits and _, not starting with a digit, e.g. is_evening`},
		{"a name too long", defineFunction(`"name":"` + strings.Repeat("a", 65) + `"`),
			400, `the function name "` + strings.Repeat("a", 40) + `"… is 65 characters long; names are at most 64 characters`},
		{"getData", defineFunction(`"name":"getData"`), 409, reserved("getData")},
		{"setData", defineFunction(`"name":"setData"`), 409, reserved("setData")},
		{"random", defineFunction(`"name":"random"`), 409, reserved("random")},
		{"now", defineFunction(`"name":"now"`), 409, reserved("now")},
		{"startTimer", defineFunction(`"name":"startTimer"`), 409, reserved("startTimer")},
		{"cancelTimer", defineFunction(`"name":"cancelTimer"`), 409, reserved("cancelTimer")},
		{"a color helper", defineFunction(`"name":"hsv"`), 409, reserved("hsv")},
		{"frame", defineFunction(`"name":"frame"`), 409, reserved("frame")},
		{"t", defineFunction(`"name":"t"`), 409, reserved("t")},
		{"i", defineFunction(`"name":"i"`), 409, reserved("i")},
		{"n", defineFunction(`"name":"n"`), 409, reserved("n")},
		{"state", defineFunction(`"name":"state"`), 409, reserved("state")},
		{"transition", defineFunction(`"name":"transition"`), 409, reserved("transition")},
		{"a reserved word", defineFunction(`"name":"return"`), 409, reserved("return")},
		{"a strict reserved word", defineFunction(`"name":"let"`), 409, reserved("let")},
		{"a standard global", defineFunction(`"name":"Math"`), 409, reserved("Math")},
		{"undefined", defineFunction(`"name":"undefined"`), 409, reserved("undefined")},
		{"listed twice", `{"op":"define_function","functions":[{"name":"a","code":"return 1"},{"name":"a","code":"return 2"}]}`,
			409, `function "a" is listed twice; list each function once`},
		{"too many params", defineFunction(`"params":` + string(manyParams)),
			400, `function "f" takes 17 parameters; a function takes at most 16 (pass an object for more)`},
		{"a param not a name", defineFunction(`"params":["a b"]`),
			400, `function "f": params[0]: the parameter name "a b" is not a JavaScript name; use letters, digits and _, not starting with a digit, e.g. is_evening`},
		{"a param a reserved word", defineFunction(`"params":["x","if"]`),
			400, `function "f": params[1]: the parameter name "if" is a JavaScript reserved word; pick another name`},
		{"a param twice", defineFunction(`"params":["x","x"]`),
			400, `function "f": parameter "x" is listed twice; give each parameter its own name`},
		{"a param that hides a function", defineFunction(`"params":["double"],"code":"return double"`),
			409, `function "f": parameter "double" has the name of the function double, which it would hide inside f; rename the parameter`},
		{"no code", defineFunction(`"code":""`),
			400, `function "f": code is empty; write the body of a function of its params, e.g. return h >= 18`},
		{"blank code", defineFunction(`"code":" \n "`),
			400, `function "f": code is empty; write the body of a function of its params, e.g. return h >= 18`},
		{"code over 16 KiB", defineFunction(`"code":` + string(big)),
			400, `function "f": the code is 16393 bytes; keep it at most 16384 bytes (16 KiB)`},
		{"a syntax error on line 2", defineFunction(`"code":"const a = 1;\nreturn a +;"`),
			400, `function "f": the code has a syntax error at line 2, column 11 (Unexpected token ;)` + fixJS},
		{"a brace left open", defineFunction(`"code":"if (true) {\n  return 1;"`),
			400, `function "f": the code has a syntax error at the end of the code (` + jsbox.EndsEarly + `)` + fixJS},
		{"escaping the function", defineFunction(`"code":"return 1;\n}); (function() {"`),
			400, `function "f": the code has a syntax error (it closes a brace it did not open)` + fixJS},
		{"a compile error", defineFunction(`"code":"let a = 1;\nlet a = 2;\nreturn a;"`),
			400, `function "f": the code has a syntax error at line 2, column 5 (Identifier 'a' has already been declared)` + fixJS},
		{"strict mode", defineFunction(`"code":"with (Math) { return max(1, 2) }"`),
			400, `function "f": the code has a syntax error at line 1, column 1 (Strict mode code may not include a with statement)` + fixJS},
		{"calling a function with too many arguments", defineFunction(`"code":"return double(1, 2)"`),
			400, `function "f" calls double with 2 arguments, but double takes 1 (x); pass what it takes, or change the function`},
		{"a redefinition a rule's call no longer fits", `{"op":"define_function","functions":[{"name":"is_evening","code":"return false"}]}`,
			409, `function is_evening: rule r1's condition calls is_evening with 1 argument, but is_evening takes no arguments; pass what it takes, or change the function`},
		{"a redefinition a function's call no longer fits", `{"op":"define_function","functions":[{"name":"double","code":"return 2"}]}`,
			400, `function "quadruple" calls double with 1 argument, but double takes no arguments; pass what it takes, or change the function`},
		{"a redefinition a color's call no longer fits", `{"op":"apply","states":[{"name":"glow","r":"double(frame)","g":0,"b":0}],"functions":[{"name":"double","code":"return 2"}]}`,
			400, `state "glow": channel r calls double with 1 argument, but double takes no arguments; pass what it takes, or change the function`},
		{"two functions defined together that do not fit", `{"op":"define_function","functions":[{"name":"double","params":["x"],"code":"return 2 * x"},{"name":"quadruple","params":["x","y"],"code":"return double(x, y)"}]}`,
			400, `function "quadruple" calls double with 2 arguments, but double takes 1 (x); pass what it takes, or change the function`},
		{"more than 100 functions", string(tooMany),
			400, "the configuration has 101 functions; a light has at most 100"},
		{"a rule calling with too many arguments", `{"op":"append_rules","rules":[{"from":"*","on":"x","to":"red","condition":"is_evening(1, 2)"}]}`,
			400, `rule * --x--> red (rules[0]): the condition calls is_evening with 2 arguments, but is_evening takes 1 (h); pass what it takes, or change the function`},
		{"a color calling with too many arguments", `{"op":"create_state","states":[{"name":"x","r":"double(1, t)","g":0,"b":0}]}`,
			400, `state "x": channel r calls double with 2 arguments, but double takes 1 (x); pass what it takes, or change the function`},
		{"delete_function without a name", `{"op":"delete_function"}`,
			400, "delete_function: name is empty; give the name of the function to delete"},
		{"delete an unknown function", `{"op":"delete_function","name":"nope"}`,
			404, `function "nope" does not exist; nothing to delete (get lists the functions)`},
		{"delete a function rules call", `{"op":"delete_function","name":"is_evening"}`,
			409, `function "is_evening" is used by rule r1; change or delete those first`},
		{"delete a function rules, states and functions call", `{"op":"delete_function","name":"double"}`,
			409, `function "double" is used by rule r2 and state glow and function quadruple; change or delete those first`},
		{"define_function with a name", `{"op":"define_function","name":"f"}`,
			400, "config: define_function does not take name; it takes functions"},
		{"delete_function with functions", `{"op":"delete_function","name":"f","functions":[]}`,
			400, "config: delete_function does not take functions; it takes name"},
		{"a function with an unknown field", `{"op":"define_function","functions":[{"name":"f","code":"return 1","param":["x"]}]}`,
			400, "config: functions[0].param: unknown field; check the spelling against the documented fields: code, description, name, params"},
		{"one bad function of two defines nothing", `{"op":"define_function","functions":[{"name":"ok","code":"return 1"},{"name":"bad","code":"return ("}]}`,
			400, `function "bad": the code has a syntax error at the end of the code (` + jsbox.EndsEarly + `)` + fixJS},
		{"apply with a bad function changes nothing", `{"op":"apply","states":[],"functions":[{"name":"random","code":"return 4"}]}`,
			409, reserved("random")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := functionLight(t)
			before, _ := l.m.Snapshot()
			model := l.m.Model()
			r := l.apply(messages.InConfig, tt.payload)
			if r.Err == nil {
				t.Fatalf("accepted: %v", outputs(t, r))
			}
			if r.Err.Code != tt.code || r.Err.Kind != messages.ErrorRejected || r.Err.Error != tt.says {
				t.Errorf("got  %d %s: %s\nwant %d rejected: %s", r.Err.Code, r.Err.Kind, r.Err.Error, tt.code, tt.says)
			}
			after, _ := l.m.Snapshot()
			if !bytes.Equal(before, after) {
				t.Errorf("the machine changed:\nbefore %s\nafter  %s", before, after)
			}
			if got := l.m.Model(); !reflect.DeepEqual(got, model) {
				t.Errorf("the model changed:\nbefore %+v\nafter  %+v", model, got)
			}
			// The functions still work as before.
			if r := l.fire("button_click"); r.State != "red" {
				t.Errorf("a click after the refusal: %v", outputs(t, r))
			}
		})
	}
}

// Every global of the machine's JavaScript is a name no function can take.
func TestFunctionNamesAreNotGlobals(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"apply","states":[],"rules":[{"from":"*","on":"go","to":"off","action":"setData('globals', Object.getOwnPropertyNames(globalThis))"}]}`)
	l.fire("go")
	var names []string
	if err := json.Unmarshal(l.m.Model().Vars["globals"], &names); err != nil || len(names) < 20 {
		t.Fatalf("globals %s: %v", l.m.Model().Vars["globals"], err)
	}
	for _, n := range names {
		if !messages.ReservedName(n) {
			t.Errorf("global %s is not a reserved function name", n)
		}
	}
}

func TestFunctionOps(t *testing.T) {
	l := newLight(t)
	if got := mustJSON(t, l.m.Model().Functions); got != "[]" {
		t.Errorf("functions of a new light: %s, want []", got)
	}
	l.config(`{"op":"apply","states":[{"name":"white","r":255,"g":255,"b":255},{"name":"blue","r":0,"g":0,"b":255}],"rules":[
		{"from":"off","on":"button_click","to":"blue","condition":"is_evening()"},
		{"from":"off","on":"button_click","to":"white"},
		{"from":"*","on":"button_click","to":"off"}]}`)
	// Called before it exists: a reference error, and the next rule fires.
	l.fire("button_click")
	l.fire("button_click")
	// Defined: the rule that names it calls it. The light's clock is
	// 12:00, so it is false until it is redefined.
	l.config(`{"op":"define_function","functions":[{"name":"is_evening","description":"after 18:00","code":"return new Date(now()).getUTCHours() >= 18;"}]}`)
	l.fire("button_click")
	l.fire("button_click")
	l.config(`{"op":"define_function","functions":[{"name":"is_evening","description":"after noon","code":"return hour() >= 12;"},{"name":"hour","code":"return new Date(now()).getUTCHours();"}]}`)
	l.fire("button_click")
	fmt.Fprintf(&l.log, "= get functions %s\n", mustJSON(t, l.m.Model().Functions))
	// An action calls a function that sets data and starts a timer; a
	// condition that calls it throws, as a condition calling setData does.
	l.config(`{"op":"define_function","functions":[{"name":"remember","params":["k","v"],"code":"setData(k, v);\nstartTimer('forget', 60000);\nreturn true;"}]}`)
	l.config(`{"op":"append_rules","rules":[
		{"from":"*","on":"mark","to":"white","priority":1,"condition":"remember('x', 1)"},
		{"from":"*","on":"mark","to":"blue","action":"remember('x', hour())"}]}`)
	l.fire("mark")
	// A failure inside a function says where.
	l.config(`{"op":"define_function","functions":[{"name":"boom","params":["why"],"code":"if (why) {\n  throw new Error('boom: ' + why);\n}\nreturn 1;"},{"name":"forever","code":"return forever() + 1;"}]}`)
	l.config(`{"op":"append_rules","rules":[
		{"from":"*","on":"fail","to":"white","priority":2,"condition":"boom('no') > 0"},
		{"from":"*","on":"fail","to":"white","priority":1,"action":"forever()"},
		{"from":"*","on":"fail","to":"off"}]}`)
	l.fire("fail")
	// Functions cannot keep anything between evaluations.
	l.config(`{"op":"define_function","functions":[{"name":"leak","code":"try { leak.n = 1 } catch (e) { setData('e1', String(e)) }\ntry { hour = null } catch (e) { setData('e2', String(e)) }\ntry { leak.prototype.x = 1 } catch (e) { setData('e3', String(e)) }\nreturn 0;"}]}`)
	l.config(`{"op":"append_rules","rules":[{"from":"*","on":"leak","to":"off","action":"leak()"}]}`)
	l.fire("leak")
	// Deleting: refused while a rule calls it, taken once none does.
	l.apply(messages.InConfig, `{"op":"delete_function","name":"leak"}`)
	l.config(`{"op":"delete_rules","match":{"on":"leak"}}`)
	l.config(`{"op":"delete_function","name":"leak"}`)
	names := func() []string {
		var out []string
		for _, f := range l.m.Model().Functions {
			out = append(out, f.Name)
		}
		return out
	}
	if got := names(); !reflect.DeepEqual(got, []string{"is_evening", "hour", "remember", "boom", "forever"}) {
		t.Errorf("functions %v", got)
	}
	// The model is a copy.
	fns := l.m.Model().Functions
	fns[2].Params[0] = "z"
	if again := l.m.Model().Functions[2]; again.Params[0] != "k" {
		t.Errorf("the model shares memory with the machine: %+v", again)
	}
	// apply replaces the functions; without functions, none are left,
	// and a rule that calls one throws a reference error.
	exp := l.m.Export()
	exp.Functions = exp.Functions[:2]
	exp.Rules = exp.Rules[:3]
	exp.Vars = nil
	l.config(applyConfig(t, exp))
	if got := names(); !reflect.DeepEqual(got, []string{"is_evening", "hour"}) {
		t.Errorf("after apply: %v", got)
	}
	exp.Functions = nil
	l.config(applyConfig(t, exp))
	if got := mustJSON(t, l.m.Model().Functions); got != "[]" {
		t.Errorf("after apply without functions: %s, want []", got)
	}
	l.fire("button_click")
	l.golden("functions")
}

// A rule calling functions is bounded in time as a whole: functions
// calling functions that never end are stopped, the rule skipped and the
// next one fires, with a recursion bound besides.
func TestFunctionTimeBound(t *testing.T) {
	l := newLight(t, machine.WithEvalTimeout(testTimeout))
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
		"functions":[
			{"name":"outer","code":"return middle() + 1;"},
			{"name":"middle","code":"let s = 0;\nfor (let i = 0; i < 3; i++) s += inner(i);\nreturn s;"},
			{"name":"inner","params":["i"],"code":"while (true) {}"},
			{"name":"quick","code":"return 1;"}],
		"rules":[
			{"from":"*","on":"go","to":"red","priority":1,"condition":"outer() > 0"},
			{"from":"*","on":"go","to":"blue","action":"for (;;) quick()"},
			{"from":"*","on":"go","to":"off","action":"setData('ok', quick())"}]}`)
	start := time.Now()
	r := l.fire("go")
	if d := time.Since(start); d > 80*testTimeout {
		t.Errorf("took %v with a time limit of %v per rule", d, testTimeout)
	}
	equalLines(t, outputs(t, r), []string{
		`error {"code":400,"error":"rule r1 ran longer, or used more memory, than an expression may and was skipped; make its condition and action finish quickly (no unbounded loops)","kind":"timeout","rule":"r1"}`,
		`error {"code":400,"error":"rule r2 ran longer, or used more memory, than an expression may and was skipped; make its condition and action finish quickly (no unbounded loops)","kind":"timeout","rule":"r2"}`,
		`var {"name":"ok","value":1}`,
		`state {"from":"off","to":"off","rule":"r3","transition":"go","changed":false}`,
	})
	// The memory bound holds across calls too.
	l = newLight(t, machine.WithEvalTimeout(20*time.Second))
	l.config(`{"op":"apply","states":[],"functions":[{"name":"grow","params":["s"],"code":"return grow(s + s);"},{"name":"start","code":"let s = 'x';\nwhile (true) s = s + s;"}],
		"rules":[{"from":"*","on":"go","to":"off","action":"start()"}]}`)
	start = time.Now()
	r = l.fire("go")
	if d := time.Since(start); d > 10*time.Second {
		t.Fatalf("stopped after %v: the time bound, not the memory bound", d)
	}
	if e := errorOf(t, r.Outputs[0]); e.Kind != messages.ErrorTimeout || !strings.Contains(e.Error, "memory") {
		t.Fatalf("outputs %v", outputs(t, r))
	}
}

// Functions draw from the input's random() and see its now(), so a
// replay of the journal, or a machine restored from a snapshot, gives the
// same outputs byte for byte.
func TestFunctionDeterminism(t *testing.T) {
	inputs := []struct{ typ, payload string }{
		{messages.InConfig, `{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
			"functions":[
				{"name":"pick","params":["a","b"],"code":"return random() < 0.5 ? a : b;"},
				{"name":"stamp","code":"return {at: now(), iso: new Date().toISOString(), r: Math.random()};"}],
			"rules":[
				{"from":"*","on":"button_click","to":"red","condition":"pick(true, false)","action":"setData('last', stamp())"},
				{"from":"*","on":"button_click","to":"blue","action":"setData('roll', [random(), pick(1, 2)])"}]}`},
		{messages.InFired, `{"transition":"button_click"}`},
		{messages.InFired, `{"transition":"button_click"}`},
		{messages.InConfig, `{"op":"define_function","functions":[{"name":"pick","params":["a","b"],"code":"return random() < 0.25 ? a : b;"}]}`},
		{messages.InFired, `{"transition":"button_click"}`},
		{messages.InFired, `{"transition":"button_click"}`},
		{messages.InFired, `{"transition":"button_click"}`},
		{messages.InFired, `{"transition":"button_click"}`},
	}
	live := newLight(t)
	for _, in := range inputs {
		live.ok(in.typ, in.payload)
	}
	live.golden("functions_replay")

	replay := newLight(t)
	for _, in := range inputs {
		replay.ok(in.typ, in.payload)
	}
	if !bytes.Equal(replay.log.Bytes(), live.log.Bytes()) {
		t.Errorf("replay differs:\n%s\nlive:\n%s", replay.log.Bytes(), live.log.Bytes())
	}

	// From a snapshot taken halfway, the rest gives the same outputs.
	half := newLight(t)
	for _, in := range inputs[:4] {
		half.ok(in.typ, in.payload)
	}
	snap, err := half.m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(snap, []byte(`"functions":[{"name":"pick"`)) {
		t.Errorf("the snapshot has no functions: %s", snap)
	}
	restored, err := machine.Restore(snap)
	if err != nil {
		t.Fatal(err)
	}
	defer restored.Close()
	if s2, _ := restored.Snapshot(); !bytes.Equal(s2, snap) {
		t.Errorf("the restored machine snapshots differently:\n%s\n%s", s2, snap)
	}
	for _, in := range inputs[4:] {
		ev := half.next()
		equalLines(t, outputs(t, restored.Apply(ev, in.typ, []byte(in.payload))), outputs(t, half.m.Apply(ev, in.typ, []byte(in.payload))))
	}
	if a, b := mustJSON(t, half.m.Model()), mustJSON(t, restored.Model()); a != b {
		t.Errorf("models differ:\n%s\n%s", a, b)
	}
}

// Export carries the functions, and apply takes them back: the same
// configuration, and the same behaviour.
func TestFunctionsExportApply(t *testing.T) {
	l := functionLight(t)
	exp := l.m.Export()
	if len(exp.Functions) != 3 || exp.Functions[0].Name != "is_evening" || exp.Functions[0].Description != "true from 18:00 (UTC)" {
		t.Fatalf("export functions %+v", exp.Functions)
	}
	l2 := newLight(t)
	l2.config(applyConfig(t, exp))
	if got := l2.m.Export(); !reflect.DeepEqual(got, exp) {
		t.Errorf("re-applied export differs:\n got %+v\nwant %+v", got, exp)
	}
	for range 3 {
		ev := l.next()
		l2.next()
		equalLines(t, outputs(t, l2.m.Fire(ev, "button_click")), outputs(t, l.m.Fire(ev, "button_click")))
	}

	// A light without functions snapshots and exports as before
	// functions existed.
	bare := newLight(t)
	s, _ := bare.m.Snapshot()
	if bytes.Contains(s, []byte(`"functions"`)) {
		t.Errorf("a snapshot without functions names them: %s", s)
	}
	if b, _ := json.Marshal(bare.m.Export()); bytes.Contains(b, []byte(`"functions"`)) {
		t.Errorf("an export without functions names them: %s", b)
	}
}

// A snapshot holding a function that does not check is refused.
func TestRestoreRejectsBadFunctions(t *testing.T) {
	for _, given := range []string{
		`{"v":1,"state":"off","states":[],"functions":[{"name":"now","code":"return 1"}]}`,
		`{"v":1,"state":"off","states":[],"functions":[{"name":"x","code":"return ("}]}`,
		`{"v":1,"state":"off","states":[],"functions":[{"name":"x","code":"return 1"}],"rules":[{"from":"*","on":"a","to":"off","condition":"x(1)"}]}`,
	} {
		if m, err := machine.Restore([]byte(given)); err == nil {
			m.Close()
			t.Errorf("restored %s", given)
		}
	}
}

// A redefinition is checked against the states' colors that call the
// function too.
func TestFunctionRedefinitionChecksColors(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"apply","states":[{"name":"glow","r":"level(frame)","g":0,"b":0,"speed":40}],
		"functions":[{"name":"level","params":["f"],"code":"return f % 256;"}]}`)
	r := l.apply(messages.InConfig, `{"op":"define_function","functions":[{"name":"level","code":"return 128;"}]}`)
	if r.Err == nil || r.Err.Code != 409 || r.Err.Error != `function level: state "glow"'s color calls level with 1 argument, but level takes no arguments; pass what it takes, or change the function` {
		t.Errorf("outputs %v", outputs(t, r))
	}
	r = l.apply(messages.InConfig, `{"op":"delete_function","name":"level"}`)
	if r.Err == nil || r.Err.Code != 409 || r.Err.Error != `function "level" is used by state glow; change or delete those first` {
		t.Errorf("outputs %v", outputs(t, r))
	}
	l.config(`{"op":"define_function","functions":[{"name":"level","params":["f","g"],"code":"return 128;"}]}`)
}
