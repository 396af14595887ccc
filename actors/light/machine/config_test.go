package machine_test

import (
	"bytes"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// validationLight is a light with some of everything, for checking that a
// rejected input changes nothing.
func validationLight(t *testing.T) *light {
	t.Helper()
	l := newLight(t)
	l.config(`{"op":"apply",
		"states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255},{"name":"color/green","r":0,"g":255,"b":0,"speed":40}],
		"rules":[
			{"from":"off","on":"button_click","to":"red"},
			{"from":"red","on":"button_click","to":"blue","condition":"getData('n') > 0"},
			{"from":"*","on":"button_hold","to":"off","priority":100},
			{"from":"*","on":"arm","to":"red","action":"startTimer('t', 60000)"}],
		"vars":{"n":1},
		"schedules":[{"name":"evening","cron":"0 19 * * *","tz":"Europe/Paris","fires":"evening"}]}`)
	l.fire("arm")
	return l
}

func TestValidation(t *testing.T) {
	tests := []struct {
		name  string
		given struct{ typ, payload string }
		want  struct {
			code int
			says []string
		}
	}{
		{"empty state name",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"","r":1,"g":2,"b":3}]}`), want(400, "states[0] has no name")},
		{"duplicate state name",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"x","r":1,"g":2,"b":3},{"name":"x","r":1,"g":2,"b":3}]}`), want(409, `state "x" is listed twice`)},
		{"duplicate state name in apply",
			in(messages.InConfig, `{"op":"apply","states":[{"name":"off","r":1,"g":2,"b":3},{"name":"off","r":1,"g":2,"b":3}]}`), want(409, `state "off" is listed twice`)},
		{"state named like a wildcard",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"color/*","r":1,"g":2,"b":3}]}`), want(400, "cannot be * or end in /*")},
		{"channel above 255",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"x","r":256,"g":2,"b":3}]}`), want(400, `state "x": channel r is 256; use a number from 0 to 255`)},
		{"negative channel",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"x","r":1,"g":2,"b":-1}]}`), want(400, "channel b is -1")},
		{"channel expression syntax",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"pulse","r":1,"g":"sin(frame*0.1)*127+","b":3}]}`), want(400, `state "pulse": channel g has a syntax error at the end`)},
		{"zero speed",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"x","r":1,"g":2,"b":3,"speed":0}]}`), want(400, "speed is 0; give a positive frame period")},
		{"negative speed",
			in(messages.InConfig, `{"op":"create_state","states":[{"name":"x","r":1,"g":2,"b":3,"speed":-5}]}`), want(400, "speed is -5")},
		{"empty create_state",
			in(messages.InConfig, `{"op":"create_state","states":[]}`), want(400, "at least one state")},
		{"rule to unknown state",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"nope"}]}`), want(404, `rule off --x--> nope (rules[0]): to names state "nope"`)},
		{"rule from unknown state",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"id":"mine","from":"nope","on":"x","to":"red"}]}`), want(404, `rule mine: from names state "nope"`)},
		{"rule with empty on",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"","to":"red"}]}`), want(400, "on is empty")},
		{"rule with empty from",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"on":"x","to":"red"}]}`), want(400, "from is empty")},
		{"rule with empty to",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x"}]}`), want(400, "to is empty")},
		{"duplicate rule id in the request",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"id":"a","from":"off","on":"x","to":"red"},{"id":"a","from":"off","on":"y","to":"red"}]}`), want(409, `rule id "a" is already used`)},
		{"rule id already taken",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"id":"r1","from":"off","on":"x","to":"red"}]}`), want(409, `rule id "r1" is already used`)},
		{"condition syntax",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","condition":"getData('n') >> > 1"}]}`), want(400, "rule off --x--> red (rules[0]): the condition has a syntax error at line 1, column 17")},
		{"condition with statements",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","condition":"1); x = (2"}]}`), want(400, "not a single expression")},
		{"condition escaping its function",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","condition":"1);}); (function(){ return (1"}]}`), want(400, "not a single expression")},
		{"action syntax on line 2",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"id":"act","from":"off","on":"x","to":"red","action":"setData('a', 1);\nsetData('b' 1);"}]}`), want(400, "rule act: the action has a syntax error at line 2, column 13")},
		{"action escaping its function",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","action":"}); (function() {"}]}`), want(400, "closes a bracket or brace it did not open")},
		{"strict mode error",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","action":"with (Math) { max(1, 2) }"}]}`), want(400, "the action has a syntax error")},
		{"empty append_rules",
			in(messages.InConfig, `{"op":"append_rules","rules":[]}`), want(400, "at least one rule")},
		{"priority out of range",
			in(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"x","to":"red","priority":1e12}]}`), want(400, "rules[0].priority: must be an integer")},
		{"delete a state rules use",
			in(messages.InConfig, `{"op":"delete_state","name":"red"}`), want(409, `state "red" is used by rules r1, r2, r4`)},
		{"delete off",
			in(messages.InConfig, `{"op":"delete_state","name":"off"}`), want(409, "built in and cannot be deleted")},
		{"delete an unknown state",
			in(messages.InConfig, `{"op":"delete_state","name":"nope"}`), want(404, `state "nope" does not exist`)},
		{"delete_state without a name",
			in(messages.InConfig, `{"op":"delete_state"}`), want(400, "name is empty")},
		{"delete unknown rule ids",
			in(messages.InConfig, `{"op":"delete_rules","ids":["r1","r9","x"]}`), want(404, "no rule has id r9, x; nothing was deleted")},
		{"delete_rules with an empty selector",
			in(messages.InConfig, `{"op":"delete_rules"}`), want(400, "give ids, or match")},
		{"delete_rules with an empty match",
			in(messages.InConfig, `{"op":"delete_rules","match":{}}`), want(400, "give ids, or match")},
		{"delete_rules with ids and match",
			in(messages.InConfig, `{"op":"delete_rules","ids":["r1"],"match":{"on":"x"}}`), want(400, "not both")},
		{"delete_rules matching nothing",
			in(messages.InConfig, `{"op":"delete_rules","match":{"on":"nope"}}`), want(404, "nothing was deleted")},
		{"apply with one bad rule changes nothing",
			in(messages.InConfig, `{"op":"apply","states":[{"name":"x","r":1,"g":2,"b":3}],"rules":[{"from":"off","on":"a","to":"x"},{"from":"x","on":"b","to":"red"}]}`), want(404, `rule x --b--> red (rules[1]): to names state "red"`)},
		{"apply with an unknown initial state",
			in(messages.InConfig, `{"op":"apply","initial":"red"}`), want(404, `initial names state "red"`)},
		{"apply with an unnamed variable",
			in(messages.InConfig, `{"op":"apply","vars":{"":1}}`), want(400, "empty name")},
		{"unknown config op",
			in(messages.InConfig, `{"op":"frobnicate"}`), want(400, `unknown op "frobnicate"`)},
		{"config op without op",
			in(messages.InConfig, `{}`), want(400, "op is empty")},
		{"a field the op does not take",
			in(messages.InConfig, `{"op":"delete_state","name":"red","rules":[]}`), want(400, "delete_state does not take rules")},
		{"unknown field",
			in(messages.InConfig, `{"op":"apply","statez":[]}`), want(400, `statez: unknown field`)},
		{"bad cron",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"61 * * * *","fires":"x"}]}`), want(400, `schedule "s": cron "61 * * * *" is not valid`)},
		{"cron that never fires",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"0 0 30 2 *","fires":"x"}]}`), want(400, "never fires")},
		{"bad time zone",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly","tz":"Mars/Olympus","fires":"x"}]}`), want(400, `unknown time zone "Mars/Olympus"`)},
		{"local time zone",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly","tz":"Local","fires":"x"}]}`), want(400, "tz Local depends on the machine")},
		{"time zone in cron",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"CRON_TZ=Europe/Paris 0 19 * * *","fires":"x"}]}`), want(400, "put the time zone in tz")},
		{"schedule without fires",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly"}]}`), want(400, "fires is empty")},
		{"duplicate schedule",
			in(messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"s","cron":"@hourly","fires":"x"},{"name":"s","cron":"@daily","fires":"x"}]}`), want(409, "listed twice")},
		{"delete an unknown schedule",
			in(messages.InConfig, `{"op":"delete_schedule","name":"nope"}`), want(404, `schedule "nope" does not exist`)},
		{"set_var without a name",
			in(messages.InVar, `{"value":1}`), want(400, "name is empty")},
		{"set_var without a value",
			in(messages.InVar, `{"name":"n"}`), want(400, "give a value")},
		{"set_var with value and unset",
			in(messages.InVar, `{"name":"n","value":1,"unset":true}`), want(400, "not both")},
		{"set_state to an unknown state",
			in(messages.InState, `{"name":"nope"}`), want(404, `state "nope" does not exist; create it first (create_state), or pick one of: off, red, blue, color/green`)},
		{"set_state without a name",
			in(messages.InState, `{}`), want(400, "name is empty")},
		{"fire without a transition",
			in(messages.InFired, `{"transition":""}`), want(400, "transition is empty")},
		{"fire with a malformed payload",
			in(messages.InFired, `{"transition":1}`), want(400, `transition: must be a string`)},
		{"fire with broken JSON",
			in(messages.InFired, `{"transition":`), want(400, "malformed JSON")},
		{"timer without a name",
			in(messages.InTimer, `{"deadline":"2026-03-28T12:00:00Z"}`), want(400, "name is empty")},
		{"schedule tick without a name",
			in(messages.InSchedule, `{"at":"2026-03-28T12:00:00Z"}`), want(400, "name is empty")},
		{"unknown input type",
			in("frobnicate", `{}`), want(400, `unknown input type "frobnicate"`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := validationLight(t)
			before, _ := l.m.Snapshot()
			model := l.m.Model()
			r := l.apply(tt.given.typ, tt.given.payload)
			if r.Err == nil {
				t.Fatalf("accepted: %v", outputs(t, r))
			}
			if r.Err.Code != tt.want.code || r.Err.Kind != messages.ErrorRejected {
				t.Errorf("code %d kind %s, want %d rejected: %s", r.Err.Code, r.Err.Kind, tt.want.code, r.Err.Error)
			}
			for _, s := range tt.want.says {
				if !strings.Contains(r.Err.Error, s) {
					t.Errorf("error %q does not say %q", r.Err.Error, s)
				}
			}
			if len(r.Outputs) != 1 || r.Outputs[0].Type != messages.OutError || !reflect.DeepEqual(r.Outputs[0].Data, *r.Err) {
				t.Errorf("outputs %v, want the error alone", outputs(t, r))
			}
			if r.State != "red" || r.Changed || r.Rule != nil {
				t.Errorf("result state %q changed %v rule %v", r.State, r.Changed, r.Rule)
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

func in(typ, payload string) struct{ typ, payload string } {
	return struct{ typ, payload string }{typ, payload}
}

func want(code int, says ...string) struct {
	code int
	says []string
} {
	return struct {
		code int
		says []string
	}{code, says}
}

// A rejected input uses no rule id: the next accepted one gets it.
func TestRuleIDs(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"create_state","states":[{"name":"red","r":255,"g":0,"b":0}]}`)
	tests := []struct {
		name  string
		given string // rules
		want  []string
	}{
		{"assigned from r1", `[{"from":"off","on":"a","to":"red"},{"from":"off","on":"b","to":"red"}]`, []string{"r1", "r2"}},
		{"explicit ids are kept", `[{"id":"mine","from":"off","on":"c","to":"red"},{"from":"off","on":"d","to":"red"}]`, []string{"mine", "r3"}},
		{"an explicit r<N> moves the counter past N", `[{"id":"r10","from":"off","on":"e","to":"red"},{"from":"off","on":"f","to":"red"}]`, []string{"r10", "r11"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.config(`{"op":"append_rules","rules":` + tt.given + `}`)
			if got := r.Outputs[0].Data.(messages.OutConfigData).Rules; !reflect.DeepEqual(got, tt.want) {
				t.Errorf("ids %v, want %v", got, tt.want)
			}
		})
	}
	if r := l.apply(messages.InConfig, `{"op":"append_rules","rules":[{"from":"off","on":"g","to":"nope"}]}`); r.Err == nil {
		t.Fatal("accepted a rule to an unknown state")
	}
	r := l.config(`{"op":"append_rules","rules":[{"from":"off","on":"g","to":"red"}]}`)
	if got := r.Outputs[0].Data.(messages.OutConfigData).Rules; !reflect.DeepEqual(got, []string{"r12"}) {
		t.Errorf("after a rejection: %v, want [r12]", got)
	}
	// Deleted ids are never reused, even by apply.
	l.config(`{"op":"delete_rules","ids":["r12","r11"]}`)
	r = l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[{"from":"off","on":"g","to":"red"}]}`)
	if got := r.Outputs[0].Data.(messages.OutConfigData).Rules; !reflect.DeepEqual(got, []string{"r13"}) {
		t.Errorf("after deletes and apply: %v, want [r13]", got)
	}
}

func TestConfigOps(t *testing.T) {
	l := newLight(t)
	l.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, machine.Level))
	// Apply goes to the state it names; initial is only configured.
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}],
		"rules":[{"from":"off","on":"click","to":"red"},{"from":"red","on":"click","to":"blue"},{"from":"blue","on":"click","to":"off"}],
		"initial":"red","state":"blue","vars":{"a":1.50,"b":"x"}}`)
	// off is recolored in place and stays first.
	l.config(`{"op":"create_state","states":[{"name":"off","r":1,"g":1,"b":1,"description":"night light"},{"name":"green","r":0,"g":255,"b":0}]}`)
	// Deleting the current state's last user then the state moves to
	// initial (red); the applies after keep red.
	l.config(`{"op":"delete_rules","match":{"to":"blue"}}`)
	l.config(`{"op":"delete_rules","match":{"from":"blue"}}`)
	l.config(`{"op":"delete_state","name":"blue"}`)
	l.config(`{"op":"create_schedule","schedules":[{"name":"tick","cron":"*/15 * * * *","fires":"click"}]}`)
	l.config(`{"op":"delete_schedule","name":"tick"}`)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"schedules":[{"name":"evening","cron":"0 19 * * *","tz":"America/New_York","fires":"click"}]}`)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}]}`)
	m := l.m.Model()
	if m.Initial != "off" || m.State != "red" || len(m.Rules) != 0 || len(m.Vars) != 0 || len(m.Schedules) != 0 {
		t.Errorf("model after the last apply: %+v", m)
	}
	l.golden("config")
}

// Export gives a configuration that apply takes back as it was.
func TestExport(t *testing.T) {
	l := validationLight(t)
	exp := l.m.Export()
	l2 := newLight(t)
	l2.config(applyConfig(t, exp))
	if got := l2.m.Export(); !reflect.DeepEqual(got, exp) {
		t.Errorf("re-applied export differs:\n got %+v\nwant %+v", got, exp)
	}
	m1, m2 := l.m.Model(), l2.m.Model()
	if !reflect.DeepEqual(m1.States, m2.States) || !reflect.DeepEqual(m1.Rules, m2.Rules) || !reflect.DeepEqual(m1.Vars, m2.Vars) {
		t.Errorf("models differ:\n%+v\n%+v", m1, m2)
	}
}

// apply and the variables: kept when the request gave none, replaced with
// an output for each one set, changed or unset when it did, and replaced
// silently by an input journaled before vars_op existed, as it was then.
func TestApplyVarsOp(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[],"vars":{"a":1,"b":"x","c":true},"vars_op":"replace"}`)
	l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[],"vars_op":"keep"}`)
	if v := l.m.Model().Vars; len(v) != 3 {
		t.Fatalf("keep lost variables: %v", v)
	}
	r := l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[],"vars":{"a":1,"b":"y","d":null},"vars_op":"replace"}`)
	equalLines(t, outputs(t, r)[1:], []string{
		`var {"name":"b","value":"y"}`,
		`var {"name":"c","unset":true}`,
		`var {"name":"d","value":null}`,
	})
	r = l.config(`{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[]}`)
	if len(r.Outputs) != 1 || len(l.m.Model().Vars) != 0 {
		t.Fatalf("an old apply without vars: %v, vars %v", outputs(t, r), l.m.Model().Vars)
	}
	for _, bad := range []string{`{"op":"apply","states":[],"rules":[],"vars":{"a":1},"vars_op":"keep"}`, `{"op":"apply","states":[],"rules":[],"vars_op":"merge"}`, `{"op":"create_state","states":[{"name":"x","r":1,"g":1,"b":1}],"vars_op":"keep"}`} {
		if r := l.apply(messages.InConfig, bad); r.Err == nil || r.Err.Code != 400 {
			t.Errorf("%s: %+v", bad, r.Err)
		}
	}
}
