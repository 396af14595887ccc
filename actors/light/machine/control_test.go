package machine_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// controlLight has two states, a rule that dims (setBrightness) and one
// whose condition reads the dimmer, and an on_state.
const controlLight = `{"op":"apply","initial":"off","on_state":"warm",
	"states":[{"name":"white","r":255,"g":255,"b":255},{"name":"warm","r":255,"g":180,"b":100}],
	"rules":[{"from":"*","on":"night","to":"warm","action":"setBrightness(10)"},
		{"from":"*","on":"check","to":"white","condition":"brightness > 50"}]}`

func power(on bool) step {
	if on {
		return step{typ: messages.InPower, body: `{"on":true}`}
	}
	return step{typ: messages.InPower, body: `{"on":false}`}
}

func toggle() step { return step{typ: messages.InPower, body: `{"toggle":true}`} }

func bright(body string) step { return step{typ: messages.InBrightness, body: body} }

func paint(body string) step { return step{typ: messages.InColor, body: body} }

func fired(tr string) step {
	return step{typ: messages.InFired, body: `{"transition":"` + tr + `"}`}
}

// Power, the dimmer and the state color, live, replayed and restored
// from a snapshot after every input: on goes to on_state the first time,
// then back to the state before off; a color creates the state color once
// and recolors it after; brightness survives everything and is read and
// set by rules.
func TestEverydayControlScenario(t *testing.T) {
	live, states := scenario(t, "control", []step{
		cfg(controlLight),
		power(true), // on_state: warm
		power(true), // already on
		{typ: messages.InState, body: `{"name":"white"}`},
		power(false),              // off, remembering white
		power(false),              // already off
		toggle(),                  // back to white
		bright(`{"percent":40}`),  //
		bright(`{"delta":-50}`),   // clamped to 1
		bright(`{"delta":99}`),    // clamped to 100
		bright(`{"percent":100}`), // already 100
		fired("check"),            // brightness 100 > 50: white
		fired("night"),            // warm at 10%
		fired("check"),            // 10 is not > 50: ignored
		paint(`{"r":255,"g":165,"b":0,"as":"orange"}`), // creates color
		toggle(),                       // off
		paint(`{"r":0,"g":0,"b":255}`), // recolors, and turns on
		power(false),                   //
		bright(`{"percent":60}`),       // turns on: back to color
		cfg(`{"op":"delete_state","name":"color"}`),
		power(false),
		power(true), // color is gone: on_state warm
		cfg(`{"op":"delete_rules","ids":["r1"]}`),
		cfg(`{"op":"delete_state","name":"warm"}`),
		power(false),
		power(true), // neither: the first state, white
	})
	want := []string{"off", "warm", "warm", "white", "off", "off", "white", "white", "white", "white", "white", "white", "warm", "warm",
		"color", "off", "color", "off", "color", "off", "off", "warm", "warm", "off", "off", "white"}
	if strings.Join(states, " ") != strings.Join(want, " ") {
		t.Errorf("states:\n%v\nwant\n%v", states, want)
	}
	g := live.m.Model()
	if g.Brightness != 60 || g.OnState != "" || g.LastOn != "" {
		t.Errorf("model: brightness %d, on_state %q, last_on %q; want 60, and none (warm and color were deleted)", g.Brightness, g.OnState, g.LastOn)
	}
}

// The state color is configuration: exported with its color and applied
// elsewhere, it is the same state, and set_color recolors it there. A
// state of the light's own named color is never recolored.
func TestColorStateExportApply(t *testing.T) {
	l := newLight(t)
	l.config(controlLight)
	l.ok(messages.InColor, `{"r":1,"g":2,"b":3}`)
	exp := l.m.Export()
	if exp.OnState != "warm" {
		t.Errorf("export on_state = %q, want warm", exp.OnState)
	}
	other := newLight(t)
	other.config(applyConfig(t, exp))
	if a, b := mustJSON(t, l.m.Export()), mustJSON(t, other.m.Export()); a != b {
		t.Fatalf("export applied elsewhere differs:\n%s\n%s", b, a)
	}
	if r := other.ok(messages.InColor, `{"r":9,"g":9,"b":9}`); r.State != messages.ColorState {
		t.Errorf("set_color on the applied copy: %+v", r)
	}

	own := newLight(t)
	own.config(`{"op":"apply","states":[{"name":"color","r":"random()*255","g":0,"b":0}],"rules":[]}`)
	r := own.apply(messages.InColor, `{"r":1,"g":2,"b":3}`)
	if r.Err == nil || r.Err.Code != 409 || !strings.Contains(r.Err.Error, "rename it") {
		t.Errorf("set_color over the light's own color state: %+v, want 409", r.Err)
	}
	if r := own.m.Refuses(messages.InColor, []byte(`{"r":1}`)); r == nil || r.Code != 409 {
		t.Errorf("Refuses set_color over the light's own color state: %+v, want 409", r)
	}
}

// Bad input published straight to the light's inputs is refused by the
// machine itself; setBrightness outside 1–100 fails its rule.
func TestEverydayControlRejected(t *testing.T) {
	l := newLight(t)
	for _, tt := range []struct{ typ, body, says string }{
		{messages.InPower, `{"on":true}`, "no state besides off"},
		{messages.InBrightness, `{"percent":50}`, "no state besides off"},
		{messages.InBrightness, `{}`, "give percent"},
		{messages.InBrightness, `{"percent":101}`, "out of range"},
		{messages.InBrightness, `{"percent":1,"delta":1}`, "not both"},
		{messages.InBrightness, `{"delta":-100}`, "out of range"},
		{messages.InPower, `{"on":"x"}`, "power:"},
	} {
		r := l.apply(tt.typ, tt.body)
		if r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, tt.says) {
			t.Errorf("%s %s: %+v, want 400 saying %s", tt.typ, tt.body, r.Err, tt.says)
		}
	}
	if r := l.m.Refuses(messages.InPower, []byte(`{"on":true}`)); r == nil || r.Code != 400 {
		t.Errorf("Refuses power on with only off: %+v", r)
	}
	if r := l.m.Refuses(messages.InPower, []byte(`{"on":false}`)); r != nil {
		t.Errorf("Refuses power off: %+v, want nil", r)
	}
	l.config(`{"op":"apply","states":[{"name":"a","r":1,"g":1,"b":1}],
		"rules":[{"from":"*","on":"x","to":"a","action":"setBrightness(0)"},{"from":"*","on":"y","to":"a","action":"setBrightness('50')"}]}`)
	for _, tr := range []string{"x", "y"} {
		r := l.fire(tr)
		if !strings.Contains(strings.Join(outputs(t, r), "\n"), "setBrightness(n): n must be a number from 1 to 100") {
			t.Errorf("fire %s: %v, want the rule's error", tr, outputs(t, r))
		}
	}
	if r := l.apply(messages.InConfig, `{"op":"apply","on_state":"off","states":[],"rules":[]}`); r.Err == nil || !strings.Contains(r.Err.Error, "on_state") {
		t.Errorf("on_state off: %+v, want refused", r.Err)
	}
	if r := l.apply(messages.InConfig, `{"op":"apply","on_state":"nope","states":[],"rules":[]}`); r.Err == nil || r.Err.Code != 404 {
		t.Errorf("on_state of no state: %+v, want 404", r.Err)
	}
}

// power_on is configuration: checked, normalized, exported and applied,
// and reset to restore when its state is deleted.
func TestPowerOnConfig(t *testing.T) {
	l := newLight(t)
	for _, tt := range []struct {
		powerOn string
		code    int
		says    string
	}{
		{"sideways", 400, `give restore (the state it was in), off, or "state NAME"`},
		{"state nope", 404, `power_on names state "nope"`},
		{"state ", 400, "give restore"},
	} {
		r := l.apply(messages.InConfig, `{"op":"apply","power_on":"`+tt.powerOn+`","states":[{"name":"a","r":1,"g":1,"b":1}],"rules":[]}`)
		if r.Err == nil || r.Err.Code != tt.code || !strings.Contains(r.Err.Error, tt.says) {
			t.Errorf("power_on %q: %+v, want %d saying %s", tt.powerOn, r.Err, tt.code, tt.says)
		}
	}
	for _, tt := range []struct{ given, kept string }{{"restore", ""}, {"", ""}, {"off", "off"}, {"state off", "off"}, {"state a", "state a"}} {
		l.config(`{"op":"apply","power_on":"` + tt.given + `","states":[{"name":"a","r":1,"g":1,"b":1}],"rules":[]}`)
		if g := l.m.Model(); g.PowerOn != tt.kept || l.m.Export().PowerOn != tt.kept {
			t.Errorf("power_on %q: model %q, export %q; want %q", tt.given, g.PowerOn, l.m.Export().PowerOn, tt.kept)
		}
		if got := messages.PowerOnTarget(l.m.Model().PowerOn); got != map[string]string{"": "", "off": "off", "state a": "a"}[tt.kept] {
			t.Errorf("PowerOnTarget(%q) = %q", tt.kept, got)
		}
	}
	if m := l.restored(); m.Model().PowerOn != "state a" {
		t.Errorf("restored from a snapshot: power_on %q", m.Model().PowerOn)
	}
	l.config(`{"op":"delete_state","name":"a"}`)
	if g := l.m.Model(); g.PowerOn != "" {
		t.Errorf("power_on after its state was deleted: %q, want restore", g.PowerOn)
	}
}
