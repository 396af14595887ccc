package machine_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

const testTimeout = 20 * time.Millisecond

// jsLight has states red and blue and the given rules.
func jsLight(t *testing.T, rules string) *light {
	t.Helper()
	l := newLight(t, machine.WithEvalTimeout(testTimeout))
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],"rules":` + rules + `}`)
	return l
}

func errorOf(t *testing.T, o machine.Output) messages.OutErrorData {
	t.Helper()
	e, ok := o.Data.(messages.OutErrorData)
	if o.Type != messages.OutError || !ok {
		t.Fatalf("output %s %v is not an error", o.Type, o.Data)
	}
	return e
}

func TestTimeout(t *testing.T) {
	tests := []struct {
		name  string
		given string // the first rule's condition and action
	}{
		{"in a condition", `"condition":"(() => { while (true) {} })()"`},
		{"in an action", `"action":"setData('x', 1); startTimer('t', 10); while (true) {}"`},
		{"in a loop of host calls", `"action":"for (let i = 0; ; i++) { JSON.stringify([getData('x'), i]) }"`},
		{"in a catch-all loop", `"action":"for (;;) { try { while (true) {} } catch (e) {} finally { continue } }"`},
		{"in a thrown object's toString", `"action":"throw { toString() { while (true) {} } }"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := jsLight(t, `[
				{"from":"*","on":"go","to":"red","priority":1,`+tt.given+`},
				{"from":"*","on":"go","to":"blue","action":"setData('y', 2)"}]`)
			start := time.Now()
			r := l.fire("go")
			if d := time.Since(start); d > 40*testTimeout {
				t.Errorf("took %v with a time limit of %v", d, testTimeout)
			}
			equalLines(t, outputs(t, r), []string{
				`error {"code":400,"error":"rule r1 ran longer, or used more memory, than an expression may and was skipped; make its condition and action finish quickly (no unbounded loops)","kind":"timeout","rule":"r1"}`,
				`var {"name":"y","value":2}`,
				`state {"from":"off","to":"blue","rule":"r2","transition":"go","changed":true}`,
			})
			if r.Err != nil {
				t.Errorf("a timeout rejected the input: %v", r.Err)
			}
			// The machine stays usable, and nothing of the timed-out action stuck.
			l.config(`{"op":"append_rules","rules":[{"from":"blue","on":"next","to":"red","condition":"getData('x') === undefined && getData('y') === 2"}]}`)
			if r := l.fire("next"); r.State != "red" {
				t.Errorf("next fire: %v", outputs(t, r))
			}
			if timers := l.m.PendingTimers(); len(timers) != 0 {
				t.Errorf("timers %v, want none", timers)
			}
		})
	}
}

// An expression that allocates without bound is stopped by the memory
// bound long before its (here generous) time bound, and the light goes on.
func TestMemoryBound(t *testing.T) {
	tests := []struct{ name, action string }{
		{"a string doubled", "let s = 'x'; while (true) s += s"},
		{"an array of arrays", "const a = []; while (true) a.push(new Array(1e5).fill(1))"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t, machine.WithEvalTimeout(20*time.Second))
			l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[
				{"from":"*","on":"go","to":"red","action":"` + tt.action + `"}]}`)
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			start := time.Now()
			r := l.fire("go")
			if d := time.Since(start); d > 10*time.Second {
				t.Fatalf("stopped after %v: the time bound, not the memory bound", d)
			}
			if e := errorOf(t, r.Outputs[0]); e.Kind != messages.ErrorTimeout || !strings.Contains(e.Error, "memory") {
				t.Fatalf("outputs %v", outputs(t, r))
			}
			if r.State != "off" {
				t.Fatalf("state %s after the rule was skipped", r.State)
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			t.Logf("stopped after %v; heap peak about %d MiB", time.Since(start), (after.HeapSys-before.HeapSys)>>20)
		})
	}
}

func TestException(t *testing.T) {
	tests := []struct {
		name  string
		given string // the first rule's condition and action
		want  string // the error sentence
	}{
		{"type error in a condition", `"condition":"getData('a').b.c"`,
			"rule r1: its condition threw TypeError: Cannot read property 'b' of undefined at line 1, column 14 and the rule was skipped; fix the JavaScript"},
		{"throw on line 3 of an action", `"action":"setData('x', 1);\nconst n = 2;\nthrow new Error('too many: ' + n)"`,
			"rule r1: its action threw Error: too many: 2 at line 3, column 7 and the rule was skipped; fix the JavaScript"},
		{"a thrown string", `"action":"throw 'nope'"`,
			"rule r1: its action threw nope at line 1, column 1 and the rule was skipped; fix the JavaScript"},
		{"a reference error", `"condition":"temperature > 3"`,
			"rule r1: its condition threw ReferenceError: temperature is not defined at line 1, column 1 and the rule was skipped; fix the JavaScript"},
		{"setData in a condition", `"condition":"setData('x', 1) || true"`,
			"rule r1: its condition threw TypeError: setData can only be called in a rule's action, not in its condition at line 1, column 8 and the rule was skipped; fix the JavaScript"},
		{"a function stored", `"action":"setData('f', () => 1)"`,
			`rule r1: its action threw TypeError: setData("f", …): a function cannot be stored; store JSON data (numbers, strings, booleans, null, arrays, objects) or undefined to unset at line 1, column 8 and the rule was skipped; fix the JavaScript`},
		{"a bad delay", `"action":"startTimer('t', -1)"`,
			`rule r1: its action threw TypeError: startTimer("t", ms): the delay must be between 0 and 1000000000000 milliseconds at line 1, column 11 and the rule was skipped; fix the JavaScript`},
		{"deep recursion", `"action":"function f() { return f() + 1 } f()"`,
			"rule r1: its action threw RangeError: maximum call stack size exceeded at line 1, column 24 and the rule was skipped; fix the JavaScript"},
		{"a frozen built-in", `"action":"Math.max = Math.min"`,
			"rule r1: its action threw TypeError: Cannot assign to read only property 'max' at line 1, column 6 and the rule was skipped; fix the JavaScript"},
		{"a new global", `"action":"globalThis.memo = 1"`,
			"rule r1: its action threw TypeError: Cannot add property memo, object is not extensible at line 1, column 12 and the rule was skipped; fix the JavaScript"},
		{"an undeclared variable", `"action":"memo = 1"`,
			"rule r1: its action threw ReferenceError: memo is not defined at line 1, column 1 and the rule was skipped; fix the JavaScript"},
		{"no eval", `"action":"eval('1')"`,
			"rule r1: its action threw ReferenceError: eval is not defined at line 1, column 5 and the rule was skipped; fix the JavaScript"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := jsLight(t, `[
				{"from":"*","on":"go","to":"red","priority":1,`+tt.given+`},
				{"from":"*","on":"go","to":"blue"}]`)
			r := l.fire("go")
			if len(r.Outputs) != 2 {
				t.Fatalf("outputs %v", outputs(t, r))
			}
			e := errorOf(t, r.Outputs[0])
			if e.Kind != messages.ErrorException || e.Code != 400 || e.Rule != "r1" || e.Error != tt.want {
				t.Errorf("error %+v\nwant %q", e, tt.want)
			}
			if r.State != "blue" || len(l.m.Model().Vars) != 0 {
				t.Errorf("state %s vars %v: the failed action left effects", r.State, l.m.Model().Vars)
			}
		})
	}
}

// A rule recorded as timed out is not run and gives the same error bytes
// as the live timeout did; random() after it does not depend on how many
// numbers the rule drew before it was stopped.
func TestTimedOutForced(t *testing.T) {
	rules := `[
		{"from":"*","on":"go","to":"red","priority":2,"condition":"random() < 2 && (() => { while (true) {} })()"},
		{"from":"*","on":"go","to":"red","priority":1,"condition":"random() > 2"},
		{"from":"*","on":"go","to":"blue","action":"setData('r', random())"}]`
	live := jsLight(t, rules)
	want := outputs(t, live.fire("go"))

	replay := jsLight(t, rules)
	ev := replay.next()
	ev.TimedOut = []string{"r1"}
	start := time.Now()
	got := outputs(t, replay.m.Apply(ev, messages.InFired, []byte(`{"transition":"go"}`)))
	if d := time.Since(start); d > testTimeout {
		t.Errorf("took %v: the recorded timeout was run", d)
	}
	equalLines(t, got, want)

	// A rule that would not time out is skipped all the same.
	l := jsLight(t, `[{"from":"*","on":"go","to":"red","priority":1,"action":"setData('ran', true)"},{"from":"*","on":"go","to":"blue"}]`)
	ev = l.next()
	ev.TimedOut = []string{"r1", "r9"}
	equalLines(t, outputs(t, l.m.Apply(ev, messages.InFired, []byte(`{"transition":"go"}`))), []string{
		`error {"code":400,"error":"rule r1 ran longer, or used more memory, than an expression may and was skipped; make its condition and action finish quickly (no unbounded loops)","kind":"timeout","rule":"r1"}`,
		`state {"from":"off","to":"blue","rule":"r2","transition":"go","changed":true}`,
	})
}

func TestRandomAndNow(t *testing.T) {
	rules := `[{"from":"*","on":"go","to":"red","action":"setData('a', random()); setData('b', Math.random()); setData('c', [random(), random()]); setData('now', now()); setData('date', Date.now()); setData('iso', new Date().toISOString())"}]`
	run := func(seq uint64, at time.Time) map[string]json.RawMessage {
		l := jsLight(t, rules)
		ev := machine.Event{Seq: seq, Time: at}
		if r := l.m.Fire(ev, "go"); r.Rule == nil {
			t.Fatalf("no rule fired: %v", outputs(t, r))
		}
		return l.m.Model().Vars
	}
	at := time.Date(2026, 3, 28, 12, 34, 56, 789_000_000, time.FixedZone("CET", 3600))
	a, b, c := run(42, at), run(42, at), run(43, at.Add(time.Second))
	if mustJSON(t, a) != mustJSON(t, b) {
		t.Errorf("same input, different values:\n%s\n%s", mustJSON(t, a), mustJSON(t, b))
	}
	for _, k := range []string{"a", "b", "c"} {
		if string(a[k]) == string(c[k]) {
			t.Errorf("%s: seq 42 and 43 both gave %s", k, a[k])
		}
	}
	if string(a["a"]) == string(a["b"]) {
		t.Error("random() and Math.random() returned the same number: they should share one stream")
	}
	var r float64
	if err := json.Unmarshal(a["a"], &r); err != nil || r < 0 || r >= 1 {
		t.Errorf("random() = %s", a["a"])
	}
	wantMs := fmt.Sprint(at.UnixMilli())
	if string(a["now"]) != wantMs || string(a["date"]) != wantMs {
		t.Errorf("now() = %s, Date.now() = %s, want %s", a["now"], a["date"], wantMs)
	}
	if got := string(a["iso"]); got != `"2026-03-28T11:34:56.789Z"` {
		t.Errorf("new Date() = %s", got)
	}
}

// Variables are JSON: canonical numbers, copies in and out of scripts.
func TestVariables(t *testing.T) {
	l := jsLight(t, `[
		{"from":"*","on":"mutate","to":"red","action":"const o = getData('o'); o.list.push(4); o.n = 9; setData('seen', getData('o').list.length)"},
		{"from":"*","on":"store","to":"red","action":"const o = {x: 1}; setData('p', o); o.x = 2; setData('q', {big: 1e21, small: 1e-7, frac: 0.1 + 0.2, neg: -0, nan: NaN, s: 'é\"\\n', u: undefined, d: new Date(0)})"},
		{"from":"*","on":"same","to":"red","action":"setData('n', getData('n'))"}]`)
	tests := []struct {
		name  string
		given struct{ typ, payload string }
		want  []string
	}{
		{"numbers print like JSON", in(messages.InVar, `{"name":"n","value":2.0}`), []string{`var {"name":"n","value":2}`}},
		{"objects are compacted", in(messages.InVar, `{"name":"o","value":{ "list": [1, 2, 3.50], "n": 1e2 }}`), []string{`var {"name":"o","value":{"list":[1,2,3.5],"n":100}}`}},
		{"null is a value", in(messages.InVar, `{"name":"z","value":null}`), []string{`var {"name":"z","value":null}`}},
		{"unset", in(messages.InVar, `{"name":"z","unset":true}`), []string{`var {"name":"z","unset":true}`}},
		{"a script cannot change a stored object", in(messages.InFired, `{"transition":"mutate"}`), []string{
			`var {"name":"seen","value":3}`,
			`state {"from":"off","to":"red","rule":"r1","transition":"mutate","changed":true}`}},
		{"setData copies", in(messages.InFired, `{"transition":"store"}`), []string{
			`var {"name":"p","value":{"x":1}}`,
			`var {"name":"q","value":{"big":1e+21,"small":1e-7,"frac":0.30000000000000004,"neg":0,"nan":null,"s":"é\"\n","d":"1970-01-01T00:00:00.000Z"}}`,
			`state {"from":"red","to":"red","rule":"r2","transition":"store","changed":false}`}},
		{"an unchanged value gives no var output", in(messages.InFired, `{"transition":"same"}`), []string{
			`state {"from":"red","to":"red","rule":"r3","transition":"same","changed":false}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.ok(tt.given.typ, tt.given.payload)
			equalLines(t, outputs(t, r), tt.want)
		})
	}
	if got := string(l.m.Model().Vars["o"]); got != `{"list":[1,2,3.5],"n":100}` {
		t.Errorf("o = %s after a script changed its copy", got)
	}
}

// The fast path for common shapes gives what goja gives: each condition
// runs as is (fast) and disguised so that goja runs it.
func TestFastPathEquivalence(t *testing.T) {
	values := []string{"", "0", "-0", "1", "2", "-3.5", "1e21", `"2"`, `"a"`, `""`, "true", "false", "null", "[]", "[1]", `{"a":1}`}
	conds := []string{
		"getData('x') === undefined", "getData('x') !== undefined", "getData('x') === 0", "getData('x') === -0",
		"getData('x') == null", "getData('x') != null", "getData('x') == 1", "getData('x') != '2'", "getData('x') === 'a'",
		"getData('x') === true", "getData('x') == false", "getData('x') > 0", "getData('x') >= 1", "getData('x') < -1",
		"getData('x') <= 2", "getData('x') > -5", "getData('x') < 1e22",
	}
	actions := []string{
		"setData('y', getData('x') - 1)", "setData('y', getData('x') + 1.5)", "setData('y', 'k'); setData('x', undefined)",
		"setData('y', -2); setData('y', null); setData('z', false)",
	}
	var rules []string
	for i, c := range conds {
		rules = append(rules,
			fmt.Sprintf(`{"from":"*","on":"c%d","to":"red","condition":%q}`, i, c),
			fmt.Sprintf(`{"from":"*","on":"c%d","to":"blue","condition":%q}`, i, "!!("+c+") && true"),
		)
	}
	for i, a := range actions {
		rules = append(rules, fmt.Sprintf(`{"from":"*","on":"a%d","to":"red","action":%q}`, i, a))
		rules = append(rules, fmt.Sprintf(`{"from":"*","on":"g%d","to":"red","action":%q}`, i, "if (true) { "+a+" }"))
	}
	for _, v := range values {
		for i, c := range conds {
			t.Run(fmt.Sprintf("%s with x=%s", c, v), func(t *testing.T) {
				l := jsLight(t, "["+strings.Join(rules, ",")+"]")
				if v != "" {
					l.ok(messages.InVar, `{"name":"x","value":`+v+`}`)
				}
				tr := fmt.Sprintf("c%d", i)
				// Fast: r(2i+1) fires to red when true; goja alone: the
				// disguised rule fires to blue.
				fast := l.fire(tr)
				l.config(fmt.Sprintf(`{"op":"delete_rules","ids":["r%d"]}`, 2*i+1))
				l.ok(messages.InState, `{"name":"off"}`)
				slow := l.fire(tr)
				if (fast.Rule != nil) != (slow.Rule != nil) {
					t.Errorf("fast path: %v, goja: %v", fast.Rule != nil, slow.Rule != nil)
				}
			})
		}
		for i := range actions {
			t.Run(fmt.Sprintf("%s with x=%s", actions[i], v), func(t *testing.T) {
				var got [2][]string
				for k, tr := range []string{fmt.Sprintf("a%d", i), fmt.Sprintf("g%d", i)} {
					l := jsLight(t, "["+strings.Join(rules, ",")+"]")
					if v != "" {
						l.ok(messages.InVar, `{"name":"x","value":`+v+`}`)
					}
					r := l.fire(tr)
					got[k] = outputs(t, r)[:len(r.Outputs)-1]
					got[k] = append(got[k], mustJSON(t, l.m.Model().Vars))
				}
				equalLines(t, got[0], got[1])
			})
		}
	}
}

// Nothing an expression does is left for a later one to see, so a
// machine restored from a snapshot behaves exactly as the original.
func TestNoLeaksBetweenEvaluations(t *testing.T) {
	l := jsLight(t, `[
		{"from":"*","on":"try","to":"red","action":"try { Object.prototype.leak = 1 } catch (e) {} try { Array.prototype.push = null } catch (e) {} try { (0, Function)('leak2 = 1')() } catch (e) {}"},
		{"from":"*","on":"check","to":"blue","condition":"({}).leak === undefined && typeof [].push === 'function' && typeof leak2 === 'undefined' && typeof eval === 'undefined'"}]`)
	l.fire("try")
	if r := l.fire("check"); r.State != "blue" {
		t.Errorf("state leaked between evaluations: %v", outputs(t, r))
	}
}

func TestStateAndTransitionInExpressions(t *testing.T) {
	l := jsLight(t, `[
		{"from":"*","on":"go","to":"red","condition":"state === 'off' && transition === 'go'","action":"setData('seen', state + ' ' + transition)"},
		{"from":"*","on":"go","to":"blue","condition":"state === 'red'"}]`)
	if r := l.fire("go"); r.State != "red" {
		t.Fatalf("first: %v", outputs(t, r))
	}
	if got := string(l.m.Model().Vars["seen"]); got != `"off go"` {
		t.Errorf("seen = %s", got)
	}
	if r := l.fire("go"); r.State != "blue" {
		t.Errorf("second: %v", outputs(t, r))
	}
}

// Close stops the watchdog goroutine; the machine then rejects inputs.
func TestClose(t *testing.T) {
	before := runtime.NumGoroutine()
	var ms []*machine.Machine
	for range 5 {
		m := machine.New()
		m.Fire(machine.Event{Seq: 1, Time: t0}, "x")
		ms = append(ms, m)
	}
	for _, m := range ms {
		m.Close()
	}
	lumentest.Within(2*time.Second, func() bool { return runtime.NumGoroutine() <= before })
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after Close, %d before", n, before)
	}
	if r := ms[0].Fire(machine.Event{Seq: 2, Time: t0}, "x"); r.Err == nil || r.Err.Code != 500 {
		t.Errorf("fire after Close: %+v", r)
	}
}

// The watchdog sleeps while the light is idle and wakes for the next
// evaluation.
func TestTimeoutAfterIdle(t *testing.T) {
	l := jsLight(t, `[{"from":"*","on":"loop","to":"red","action":"while (true) {}"},{"from":"*","on":"ok","to":"blue"}]`)
	for i := range 3 {
		time.Sleep(10 * testTimeout)
		start := time.Now()
		r := l.fire("loop")
		if d := time.Since(start); d > 10*testTimeout {
			t.Errorf("round %d: took %v", i, d)
		}
		if e := errorOf(t, r.Outputs[0]); e.Kind != messages.ErrorTimeout {
			t.Errorf("round %d: %+v", i, e)
		}
		if r := l.fire("ok"); r.State != "blue" {
			t.Errorf("round %d: %v", i, outputs(t, r))
		}
	}
}
