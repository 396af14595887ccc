package daemon_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// controlCall sends verb to the demo light and decodes its reply; a
// refusal fails the test.
func (r *simRig) controlCall(verb string, req any) messages.Reply {
	r.t.Helper()
	var rep messages.Reply
	if err := r.c.Call(context.Background(), "demo", verb, req, &rep); err != nil {
		r.t.Fatalf("%s %v: %v", verb, req, err)
	}
	return rep
}

// controlModel is the demo light's model.
func (r *simRig) controlModel() messages.GetReply {
	r.t.Helper()
	var g messages.GetReply
	if err := r.c.Call(context.Background(), "demo", messages.VerbGet, nil, &g); err != nil {
		r.t.Fatal(err)
	}
	return g
}

// waitRaw waits for the LED to show state with raw color raw.
func (r *simRig) waitRaw(state string, raw messages.Pixel) messages.LEDReply {
	r.t.Helper()
	var l messages.LEDReply
	lumentest.WaitFor(r.t, 10*time.Second, "the LED to show "+state, func() bool {
		l = r.led()
		return l.State == state && len(l.Raw) == 1 && l.Raw[0] == raw
	})
	return l
}

// A person's everyday control: a color by name, the dimmer on every
// state's colors, off and back on to the same state, toggle; each
// answer says whether the light changed, and the LED shows it.
func TestEverydayControl(t *testing.T) {
	r := newSimRig(t)
	on, off := true, false
	pct := func(n int) *int { return &n }

	rep := r.controlCall(messages.VerbSetColor, messages.ColorRequest{Name: "Orange"})
	if !rep.Changed || rep.State != messages.ColorState {
		t.Fatalf("set_color orange: %+v, want the light in state color", rep)
	}
	r.waitRaw(messages.ColorState, messages.Pixel{R: 255, G: 165, B: 0})

	r.controlCall(messages.VerbSetBrightness, messages.BrightnessRequest{Percent: pct(50)})
	l := r.waitRaw(messages.ColorState, messages.Pixel{R: 128, G: 83, B: 0})
	if l.Brightness != 50 {
		t.Errorf("led says brightness %d, want 50", l.Brightness)
	}
	r.controlCall(messages.VerbSetBrightness, messages.BrightnessRequest{Delta: pct(-60)})
	if g := r.controlModel(); g.Brightness != 1 {
		t.Errorf("50%% - 60 = brightness %d, want 1 (clamped)", g.Brightness)
	}
	r.controlCall(messages.VerbSetBrightness, messages.BrightnessRequest{Delta: pct(49)})

	// Off, then on: back to the color, at the same brightness.
	if rep := r.controlCall(messages.VerbPower, messages.PowerRequest{On: &off}); !rep.Changed || rep.State != "off" {
		t.Fatalf("power off: %+v", rep)
	}
	if rep := r.controlCall(messages.VerbPower, messages.PowerRequest{On: &off}); rep.Changed {
		t.Errorf("power off when off: %+v, want changed false", rep)
	}
	if g := r.controlModel(); g.LastOn != messages.ColorState {
		t.Errorf("last_on = %q, want color", g.LastOn)
	}
	if rep := r.controlCall(messages.VerbPower, messages.PowerRequest{On: &on}); !rep.Changed || rep.State != messages.ColorState {
		t.Fatalf("power on: %+v, want back to color", rep)
	}
	r.waitRaw(messages.ColorState, messages.Pixel{R: 128, G: 83, B: 0})
	if rep := r.controlCall(messages.VerbPower, messages.PowerRequest{On: &on}); rep.Changed {
		t.Errorf("power on when on: %+v, want changed false", rep)
	}

	// A rule's state, off by the button, and toggle back to it.
	r.controlCall(messages.VerbSetState, messages.SetStateRequest{Name: "blue"})
	if rep := r.controlCall(messages.VerbToggle, nil); rep.State != "off" {
		t.Fatalf("toggle from blue: %+v, want off", rep)
	}
	if rep := r.controlCall(messages.VerbToggle, nil); rep.State != "blue" {
		t.Fatalf("toggle from off: %+v, want blue", rep)
	}
	// A brightness on a light that is off turns it on.
	r.controlCall(messages.VerbPower, messages.PowerRequest{On: &off})
	if rep := r.controlCall(messages.VerbSetBrightness, messages.BrightnessRequest{Percent: pct(100)}); rep.State != "blue" {
		t.Fatalf("set_brightness on an off light: %+v, want it on, in blue", rep)
	}
	r.waitRaw("blue", messages.Pixel{B: 255})
	// A color on a light that is off turns it on; the color state is
	// listed like any other.
	r.controlCall(messages.VerbPower, messages.PowerRequest{On: &off})
	r.controlCall(messages.VerbSetColor, messages.ColorRequest{Hex: "#123456"})
	r.waitRaw(messages.ColorState, messages.Pixel{R: 0x12, G: 0x34, B: 0x56})
	g := r.controlModel()
	n := 0
	for _, s := range g.States {
		if s.Name == messages.ColorState {
			n++
		}
	}
	if n != 1 || g.State != messages.ColorState {
		t.Errorf("after two set_color the model has %d states named color and is in %s", n, g.State)
	}

	// why names the inputs; whatif replays what people did
	// (a proposal without blue: the toggles back to blue go elsewhere);
	// the journal replays to the same light.
	var why messages.WhyReply
	if err := r.c.Call(context.Background(), "demo", messages.VerbWhy, messages.WhyRequest{}, &why); err != nil {
		t.Fatal(err)
	}
	if why.Input.Type != messages.InColor || !strings.Contains(why.Summary, "(color by nats") || why.Previous == nil || why.Previous.Input.Type != messages.InPower {
		b, _ := json.Marshal(why)
		t.Errorf("why: %s, want the color input, after the power input", b)
	}
	var wi messages.WhatIfReply
	proposal := json.RawMessage(`{"states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[]}`)
	if err := r.c.Call(context.Background(), "demo", messages.VerbWhatIf, messages.WhatIfRequest{Config: proposal, FromSeq: 1}, &wi); err != nil {
		t.Fatal(err)
	}
	if wi.Differ == 0 {
		t.Errorf("whatif without blue: %+v, want the toggles to blue to differ", wi)
	}
	verifyReplay(t, r.c.Conn(), "demo")
}

// Bad everyday input is a 400 naming the field, and journals nothing.
func TestEverydayControlRefusals(t *testing.T) {
	d := start(t, t.TempDir(), "demo")
	nc := connectTo(t, d)
	for _, tt := range []struct{ verb, body, code, says string }{
		{messages.VerbSetBrightness, `{"percent":0}`, "400", `"percent" 0 is off`},
		{messages.VerbSetBrightness, `{"percent":101}`, "400", `"percent" 101 is out of range`},
		{messages.VerbSetBrightness, `{"percent":"x"}`, "400", "percent"},
		{messages.VerbSetBrightness, `{"delta":0}`, "400", `"delta" 0`},
		{messages.VerbSetBrightness, `{"delta":100}`, "400", `"delta" 100 is out of range`},
		{messages.VerbSetBrightness, `{}`, "400", `"percent"`},
		{messages.VerbSetBrightness, `{"percent":5,"delta":5}`, "400", `not both`},
		{messages.VerbSetColor, `{}`, "400", "a color is required"},
		{messages.VerbSetColor, `{"name":"red","hex":"#ff0000"}`, "400", `given 2 ways ("hex", "name")`},
		{messages.VerbSetColor, `{"name":"ornage"}`, "400", `did you mean orange`},
		{messages.VerbSetColor, `{"kelvin":900}`, "400", `"kelvin" 900 is out of range`},
		{messages.VerbSetColor, `{"r":255,"g":0}`, "400", `"b" is missing`},
		{messages.VerbSetColor, `{"r":256,"g":0,"b":0}`, "400", `"r" 256 is out of range`},
		{messages.VerbSetColor, `{"hex":"#ggg"}`, "400", `"hex"`},
		{messages.VerbPower, `{}`, "400", `"on" is required`},
		{messages.VerbPower, `{"on":"yes"}`, "400", "on"},
		{messages.VerbToggle, `{"on":true}`, "400", "toggle takes {}"},
	} {
		seq := lastSeq(t, nc)
		body, code := request(t, nc, tt.verb, tt.body)
		var e messages.ErrorReply
		if err := json.Unmarshal(body, &e); err != nil || code != tt.code || !strings.Contains(e.Error, tt.says) {
			t.Errorf("%s %s: %s %s, want %s saying %s", tt.verb, tt.body, code, body, tt.code, tt.says)
		}
		if after := lastSeq(t, nc); after != seq {
			t.Errorf("%s %s journaled %d events", tt.verb, tt.body, after-seq)
		}
	}

	// A light with no state besides off has nothing to turn on to; a
	// light with a state of its own named color keeps it.
	mustOK(t, nc, messages.VerbApply, `{"states":[],"rules":[],"confirm_empty":true}`)
	for _, verb := range []string{messages.VerbPower, messages.VerbSetBrightness, messages.VerbToggle} {
		seq := lastSeq(t, nc)
		body := map[string]string{messages.VerbPower: `{"on":true}`, messages.VerbSetBrightness: `{"percent":40}`, messages.VerbToggle: `{}`}[verb]
		b, code := request(t, nc, verb, body)
		if code != "400" || !strings.Contains(string(b), "no state besides off") || !strings.Contains(string(b), "lumen color") {
			t.Errorf("%s on a light with only off: %s %s, want 400 saying what to do", verb, code, b)
		}
		if after := lastSeq(t, nc); after != seq {
			t.Errorf("%s on a light with only off journaled %d events", verb, after-seq)
		}
	}
	mustOK(t, nc, messages.VerbCreateState, `{"name":"color","r":"getData('r') || 0","g":0,"b":0}`)
	seq := lastSeq(t, nc)
	if b, code := request(t, nc, messages.VerbSetColor, `{"name":"blue"}`); code != "409" || !strings.Contains(string(b), "rename it") {
		t.Errorf("set_color with a state of its own named color: %s %s, want 409 saying to rename it", code, b)
	}
	if after := lastSeq(t, nc); after != seq {
		t.Errorf("the refused set_color journaled %d events", after-seq)
	}
}
