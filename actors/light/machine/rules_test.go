package machine_test

import (
	"slices"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// The seed's test_wildcards.py, through the matching the machine runs: a
// rule whose from is the pattern fires from the state, or is not tried.
func TestMatches(t *testing.T) {
	tests := []struct {
		name  string
		given struct{ from, state string }
		want  bool
	}{
		{"exact match", struct{ from, state string }{"off", "off"}, true},
		{"exact mismatch", struct{ from, state string }{"off", "on"}, false},
		{"star matches off", struct{ from, state string }{"*", "off"}, true},
		{"star matches on", struct{ from, state string }{"*", "on"}, true},
		{"star matches rainbow", struct{ from, state string }{"*", "rainbow"}, true},
		{"prefix matches color/red", struct{ from, state string }{"color/*", "color/red"}, true},
		{"prefix matches color/blue", struct{ from, state string }{"color/*", "color/blue"}, true},
		{"prefix matches deeper", struct{ from, state string }{"color/*", "color/dark/blue"}, true},
		{"prefix does not match other tree", struct{ from, state string }{"color/*", "animation/pulse"}, false},
		{"prefix does not match the prefix itself", struct{ from, state string }{"color/*", "color"}, false},
		{"prefix does not match a longer word", struct{ from, state string }{"color/*", "colorful/red"}, false},
	}
	const states = `{"op":"create_state","states":[{"name":"matched","r":1,"g":2,"b":3},
		{"name":"on","r":255,"g":255,"b":255},{"name":"rainbow","r":"random()*255","g":0,"b":0},
		{"name":"color","r":9,"g":9,"b":9},{"name":"color/red","r":255,"g":0,"b":0},{"name":"color/blue","r":0,"g":0,"b":255},
		{"name":"color/dark/blue","r":0,"g":0,"b":99},{"name":"colorful/red","r":200,"g":0,"b":0},
		{"name":"animation/pulse","r":"sin(frame*0.1)*127+128","g":0,"b":0,"speed":33}]}`
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.config(states)
			l.config(`{"op":"append_rules","rules":[{"from":"` + tt.given.from + `","on":"go","to":"matched"}]}`)
			l.ok(messages.InState, `{"name":"`+tt.given.state+`"}`)
			r := l.fire("go")
			if got := r.Rule != nil; got != tt.want {
				t.Errorf("rule from %q in state %q fired: %v, want %v: %v", tt.given.from, tt.given.state, got, tt.want, outputs(t, r))
			}
		})
	}
}

// The seed's test_wildcards.py through the machine: the rule fires only on
// its transition, from the states its from matches.
func TestWildcardRules(t *testing.T) {
	const states = `{"op":"create_state","states":[
		{"name":"on","r":255,"g":255,"b":255},{"name":"rainbow","r":"random()*255","g":0,"b":0},
		{"name":"color/red","r":255,"g":0,"b":0},{"name":"color/blue","r":0,"g":0,"b":255},
		{"name":"animation/pulse","r":"sin(frame*0.1)*127+128","g":0,"b":0,"speed":33}]}`
	tests := []struct {
		name  string
		given struct {
			rule, state, transition string
		}
		want string // the state after, "" if ignored
	}{
		{"exact rule from its state", struct{ rule, state, transition string }{`{"from":"off","on":"button_click","to":"on"}`, "off", "button_click"}, "on"},
		{"exact rule from another state", struct{ rule, state, transition string }{`{"from":"off","on":"button_click","to":"on"}`, "on", "button_click"}, ""},
		{"star from off", struct{ rule, state, transition string }{`{"from":"*","on":"button_hold","to":"off"}`, "off", "button_hold"}, "off"},
		{"star from on", struct{ rule, state, transition string }{`{"from":"*","on":"button_hold","to":"off"}`, "on", "button_hold"}, "off"},
		{"star from rainbow", struct{ rule, state, transition string }{`{"from":"*","on":"button_hold","to":"off"}`, "rainbow", "button_hold"}, "off"},
		{"star on another transition", struct{ rule, state, transition string }{`{"from":"*","on":"button_hold","to":"off"}`, "off", "button_click"}, ""},
		{"prefix from color/red", struct{ rule, state, transition string }{`{"from":"color/*","on":"button_click","to":"off"}`, "color/red", "button_click"}, "off"},
		{"prefix from color/blue", struct{ rule, state, transition string }{`{"from":"color/*","on":"button_click","to":"off"}`, "color/blue", "button_click"}, "off"},
		{"prefix from animation/pulse", struct{ rule, state, transition string }{`{"from":"color/*","on":"button_click","to":"off"}`, "animation/pulse", "button_click"}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.config(states)
			l.config(`{"op":"append_rules","rules":[` + tt.given.rule + `]}`)
			l.ok(messages.InState, `{"name":"`+tt.given.state+`"}`)
			r := l.fire(tt.given.transition)
			if tt.want == "" {
				if r.Rule != nil || r.Outputs[0].Type != messages.OutIgnored {
					t.Fatalf("fired %v, want ignored: %v", *r.Rule, outputs(t, r))
				}
				want := "no rule matches " + tt.given.transition + " in state " + tt.given.state
				if got := r.Outputs[0].Data.(messages.OutIgnoredData).Reason; got != want {
					t.Errorf("reason %q, want %q", got, want)
				}
				return
			}
			if r.State != tt.want || r.Rule == nil || *r.Rule != "r1" {
				t.Errorf("state %q by %v, want %q by r1", r.State, r.Rule, tt.want)
			}
		})
	}
}

// The seed's test_priority.py, and priority across exact and wildcard
// rules.
func TestPriority(t *testing.T) {
	tests := []struct {
		name  string
		given string // rules
		want  string // state after click from off
	}{
		{"higher priority wins", `[
			{"from":"off","on":"click","to":"blue","priority":0},
			{"from":"off","on":"click","to":"red","priority":10}]`, "red"},
		{"same priority, first added wins", `[
			{"from":"off","on":"click","to":"blue","priority":0},
			{"from":"off","on":"click","to":"red","priority":0}]`, "blue"},
		{"wildcard safety rule beats exact default", `[
			{"state1":"off","transition":"click","state2":"on","priority":0},
			{"state1":"*","transition":"click","state2":"off","priority":100}]`, "off"},
		{"equal priority: a wildcard added first beats a later exact rule", `[
			{"from":"*","on":"click","to":"red"},
			{"from":"off","on":"click","to":"blue"}]`, "red"},
		{"negative priority is tried last", `[
			{"from":"*","on":"click","to":"red","priority":-1},
			{"from":"off","on":"click","to":"blue"}]`, "blue"},
		{"a failing condition passes to the next rule", `[
			{"from":"off","on":"click","to":"red","priority":5,"condition":"false"},
			{"from":"off","on":"click","to":"blue"}]`, "blue"},
		{"a disabled rule is never tried", `[
			{"from":"off","on":"click","to":"red","priority":5,"enabled":false},
			{"from":"off","on":"click","to":"blue"}]`, "blue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.config(`{"op":"create_state","states":[{"name":"on","r":255,"g":255,"b":255},{"name":"red","r":255,"g":0,"b":0},{"name":"blue","r":0,"g":0,"b":255}]}`)
			l.config(`{"op":"append_rules","rules":` + tt.given + `}`)
			if r := l.fire("click"); r.State != tt.want {
				t.Errorf("state %q, want %q: %v", r.State, tt.want, outputs(t, r))
			}
		})
	}
}

// The seed's counter example, verbatim: "next 3 clicks show red, then back
// to normal".
func TestCounterExample(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"create_state","states":[{"name": "red", "r": 255, "g": 0, "b": 0}]}`)
	l.config(`{"op":"append_rules","rules":[
		{"from": "*", "on": "button_click", "to": "red", "condition": "getData('counter') === undefined", "action": "setData('counter', 2)"},
		{"from": "red", "on": "button_click", "to": "red", "condition": "getData('counter') > 0", "action": "setData('counter', getData('counter') - 1)"},
		{"from": "red", "on": "button_click", "to": "off", "condition": "getData('counter') === 0", "action": "setData('counter', undefined)"}
	]}`)
	var got []string
	for range 4 {
		got = append(got, l.fire("button_click").State)
	}
	if want := []string{"red", "red", "red", "off"}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
	if vars := l.m.Model().Vars; len(vars) != 0 {
		t.Errorf("vars after the counter ran out: %v, want none", vars)
	}
	// It starts over.
	if r := l.fire("button_click"); r.State != "red" {
		t.Errorf("fifth click: %s, want red", r.State)
	}
	l.golden("counter")
}

func TestToggle(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"create_state","states":[{"name":"on","r":255,"g":200,"b":120}]}`)
	l.config(`{"op":"append_rules","rules":[
		{"from":"off","on":"button_click","to":"on"},
		{"from":"on","on":"button_click","to":"off"}]}`)
	var got []string
	for range 4 {
		r := l.fire("button_click")
		if !r.Changed {
			t.Errorf("click %d: changed is false", len(got)+1)
		}
		got = append(got, r.State)
	}
	if want := []string{"on", "off", "on", "off"}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
}

// The seed's weather-reactive light: a data source stores temperature,
// then fires weather_updated.
func TestWeather(t *testing.T) {
	l := newLight(t)
	l.config(`{"op":"create_state","states":[
		{"name": "cold_blue", "r": 0, "g": 100, "b": 255},
		{"name": "hot_red", "r": 255, "g": 50, "b": 0}]}`)
	l.config(`{"op":"append_rules","rules":[
		{"from": "*", "on": "weather_updated", "to": "cold_blue", "condition": "getData('temperature') < 60"},
		{"from": "*", "on": "weather_updated", "to": "hot_red", "condition": "getData('temperature') >= 80"}]}`)
	tests := []struct {
		name  string
		given string // temperature
		want  string // state after, or "ignored"
	}{
		{"no temperature yet", "", "ignored"},
		{"cold", "45", "cold_blue"},
		{"hot", "85", "hot_red"},
		{"mild keeps the last color", "70", "ignored"},
		{"boundary 80 is hot", "80", "hot_red"},
		{"boundary 60 is not cold", "60", "ignored"},
		{"freezing", "-5.5", "cold_blue"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := l.m.State()
			if tt.given != "" {
				l.ok(messages.InVar, `{"name":"temperature","value":`+tt.given+`}`)
			}
			r := l.fire("weather_updated")
			switch {
			case tt.want == "ignored" && (r.Rule != nil || r.State != before):
				t.Errorf("fired %v to %s, want ignored", r.Rule, r.State)
			case tt.want != "ignored" && r.State != tt.want:
				t.Errorf("state %s, want %s", r.State, tt.want)
			}
		})
	}
}

// The seed's emergency exit, with its alias names.
func TestEmergencyOff(t *testing.T) {
	l := newLight(t)
	l.config(applyConfig(t, machine.Demo()))
	l.config(`{"op":"append_rules","rules":[{"state1": "*", "transition": "button_hold", "state2": "off", "priority": 100}]}`)
	for _, s := range []string{"off", "red", "green", "blue"} {
		l.ok(messages.InState, `{"name":"`+s+`"}`)
		r := l.fire("button_hold")
		if r.State != "off" || r.Changed != (s != "off") {
			t.Errorf("hold from %s: state %s changed %v", s, r.State, r.Changed)
		}
		// The demo has its own hold rule (r5), added before r6 at the same
		// priority, so it wins.
		if *r.Rule != "r5" {
			t.Errorf("hold from %s fired %s, want r5", s, *r.Rule)
		}
	}
	l.config(`{"op":"delete_rules","ids":["r5"]}`)
	l.ok(messages.InState, `{"name":"blue"}`)
	if r := l.fire("button_hold"); r.State != "off" || *r.Rule != "r6" {
		t.Errorf("hold: %s by %s, want off by r6", r.State, *r.Rule)
	}
}

func TestDemo(t *testing.T) {
	l := newLight(t)
	l.config(applyConfig(t, machine.Demo()))
	var got []string
	for range 5 {
		got = append(got, l.fire("button_click").State)
	}
	got = append(got, l.fire("button_hold").State)
	if want := []string{"red", "green", "blue", "red", "green", "off"}; !slices.Equal(got, want) {
		t.Errorf("states %v, want %v", got, want)
	}
}

// Outputs of one fire: rule errors, then variables in order of first
// change with their final value (none when unchanged), then timers in call
// order, then the state.
func TestFireOutputOrder(t *testing.T) {
	l := newLight(t, machine.WithEvalTimeout(20e6))
	l.config(`{"op":"create_state","states":[{"name":"red","r":255,"g":0,"b":0}]}`)
	l.ok(messages.InVar, `{"name":"same","value":1}`)
	l.config(`{"op":"append_rules","rules":[
		{"from":"*","on":"go","to":"red","priority":2,"condition":"getData('nope').x"},
		{"from":"*","on":"go","to":"red","priority":1,
		 "action":"setData('b', 1); setData('a', [1, {\"k\": 2.50}]); startTimer('t1', 1000); setData('b', 2); setData('same', 2); setData('same', 1); setData('gone', 5); setData('gone', undefined); startTimer('t2', 250); cancelTimer('t1')"}]}`)
	r := l.fire("go")
	equalLines(t, outputs(t, r), []string{
		`error {"code":400,"error":"rule r1: its condition threw TypeError: Cannot read property 'x' of undefined at line 1, column 17 and the rule was skipped; fix the JavaScript","kind":"exception","rule":"r1"}`,
		`var {"name":"b","value":2}`,
		`var {"name":"a","value":[1,{"k":2.5}]}`,
		`timer {"op":"set","name":"t1","deadline":"2026-03-28T12:00:04Z"}`,
		`timer {"op":"set","name":"t2","deadline":"2026-03-28T12:00:03.25Z"}`,
		`timer {"op":"cancel","name":"t1","deadline":"2026-03-28T12:00:04Z"}`,
		`state {"from":"off","to":"red","rule":"r2","transition":"go","changed":true}`,
	})
	if !r.Changed || r.State != "red" || *r.Rule != "r2" || r.Err != nil {
		t.Errorf("result %+v", r)
	}
	// A self-transition fires too.
	l.config(`{"op":"append_rules","rules":[{"from":"red","on":"again","to":"red"}]}`)
	equalLines(t, outputs(t, l.fire("again")), []string{
		`state {"from":"red","to":"red","rule":"r3","transition":"again","changed":false}`,
	})
}
