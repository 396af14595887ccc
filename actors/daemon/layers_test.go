package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Temporary layers of rules on the wire, in process: added with
// append_rules, tried first, refused with a sentence, ended by their
// firings, by delete_layer or at a deadline, across a restart. (lumen
// rule add --fires/--for/--until, lumen layers and layer rm's words, and
// the agent adding one through a power cut: cmd/lumen's
// layers_e2e_test.go.)

// layersPlain is the light of issue 17's acceptance: a click toggles
// white; red is there for the layers.
const layersPlain = `{"initial":"off",
	"states":[{"name":"white","r":255,"g":255,"b":255},{"name":"red","r":255,"g":0,"b":0}],
	"rules":[{"from":"off","on":"button_click","to":"white"},{"from":"white","on":"button_click","to":"off"}]}`

// layersGet is the light's get reply.
func layersGet(t *testing.T, r *timedRig) messages.GetReply {
	t.Helper()
	var g messages.GetReply
	if err := json.Unmarshal(mustMarshal(t, r.ok(messages.VerbGet, `{}`)), &g); err != nil {
		t.Fatal(err)
	}
	return g
}

// Issue 17 §1's acceptance, without the agent: "next 3 clicks red, then
// back to normal" as a layer of three firings; seven clicks give red red
// red off white off white, through a restart in the middle of the layer;
// then get shows the light's own rules only, the history shows the layer
// come and go, the layer's end is journaled, and replay --verify
// recomputes every output across it.
func TestLayersNextClicksThenBackToNormal(t *testing.T) {
	r := newTimedRig(t, nil)
	r.ok(messages.VerbApply, layersPlain)
	own := mustMarshal(t, layersGet(t, r).Rules)
	added := r.ok(messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"next3","fires":3}}`)
	if !strings.Contains(string(mustMarshal(t, added)), `"layers":["next3"]`) {
		t.Fatalf("append_rules with a layer does not name it: %v", added)
	}
	if g := layersGet(t, r); len(g.Layers) != 1 || g.Layers[0].Name != "next3" || g.Layers[0].FiresLeft == nil || *g.Layers[0].FiresLeft != 3 ||
		!g.Layers[0].Restore || g.Layers[0].BeganState != "off" {
		t.Fatalf("the layer: %+v", g.Layers)
	}
	click := func(want string) {
		t.Helper()
		if got := r.ok(messages.VerbFire, `{"transition":"button_click"}`)["state"]; got != want {
			t.Fatalf("a click gives %v, want %s", got, want)
		}
	}
	click("red")
	click("red")
	r.restart(time.Second) // in the middle of the layer
	for _, want := range []string{"red", "off", "white", "off", "white"} {
		click(want)
	}

	g := layersGet(t, r)
	if got := mustMarshal(t, g.Rules); string(got) != string(own) || g.Layers != nil {
		t.Errorf("after the layer: rules %s (want %s), layers %+v", got, own, g.Layers)
	}
	if got := r.lastEvent("lumen.demo.evt.out.layer"); got != `{"name":"next3","ended_by":"fires","restored":true}` {
		t.Errorf("the layer's end: %s", got)
	}
	var h messages.HistoryReply
	if err := json.Unmarshal(mustMarshal(t, r.ok(messages.VerbHistory, `{}`)), &h); err != nil {
		t.Fatal(err)
	}
	var came, went bool
	for _, c := range h.Changes {
		came = came || strings.Contains(c.Summary, "+layer next3")
		went = went || strings.Contains(c.Summary, "-layer next3")
	}
	if !came || !went {
		t.Errorf("the history does not show the layer come and go: %+v", h.Changes)
	}
	r.verify()
}

// A layer's rules are tried first and can be switched off and on; its
// rules are not deleted one by one; a name taken, an until that is not
// JavaScript and a layer that is not there are refused with a sentence;
// delete_layer ends it, back to the state it began in; a layer for a
// while ends at a deadline that long after it began.
func TestLayersAddEndAndRefuse(t *testing.T) {
	r := newTimedRig(t, nil)
	r.ok(messages.VerbApply, layersPlain)
	b, code := request(t, r.nc, messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"two","fires":2}}`)
	var rep messages.Reply
	if code != "" || json.Unmarshal(b, &rep) != nil || len(rep.Outputs) == 0 {
		t.Fatalf("append_rules with a layer: %s %s", code, b)
	}
	var added messages.OutConfigData
	if err := json.Unmarshal(rep.Outputs[0].Data, &added); err != nil || fmt.Sprint(added.Layers) != "[two]" || len(added.Rules) != 1 {
		t.Fatalf("append_rules with a layer: %+v %v", added, err)
	}
	id := added.Rules[0]
	for _, tc := range []struct{ verb, body, code, says string }{
		{messages.VerbAppendRules, `{"rules":[{"from":"*","on":"x","to":"red"}],"layer":{"name":"two","fires":1}}`, "", `the light has a layer "two" already`},
		{messages.VerbAppendRules, `{"rules":[{"from":"*","on":"x","to":"red"}],"layer":{"until":"getData('a') ==="}}`, "", "'s until has a syntax error"},
		{messages.VerbAppendRules, `{"rules":[{"from":"*","on":"x","to":"red"}],"layer":{"fires":1,"ms":60000}}`, "", "fires"},
		{messages.VerbDeleteRules, `{"ids":["` + id + `"]}`, "", "rule " + id + " belongs to layer two"},
		{messages.VerbDeleteLayer, `{"name":"nope"}`, "404", `layer "nope" does not exist (it may have ended already); the light's layers are two`},
	} {
		b, code := request(t, r.nc, tc.verb, tc.body)
		var e messages.ErrorReply
		if code == "" || (tc.code != "" && code != tc.code) || json.Unmarshal(b, &e) != nil || !strings.Contains(e.Error, tc.says) {
			t.Errorf("%s %s: %s %s, want a refusal (%s) saying %q", tc.verb, tc.body, code, b, tc.code, tc.says)
		}
	}
	// Switched off, the layer's rule is not tried; on again, it is.
	r.ok(messages.VerbEnableRules, `{"ids":["`+id+`"],"enabled":false}`)
	if s := r.ok(messages.VerbFire, `{"transition":"button_click"}`)["state"]; s != "white" {
		t.Fatalf("a click with the layer's rule disabled: %v", s)
	}
	r.ok(messages.VerbSetState, `{"name":"off"}`)
	r.ok(messages.VerbEnableRules, `{"ids":["`+id+`"],"enabled":true}`)
	if s := r.ok(messages.VerbFire, `{"transition":"button_click"}`)["state"]; s != "red" {
		t.Fatalf("a click in the layer: %v", s)
	}
	r.ok(messages.VerbDeleteLayer, `{"name":"two"}`)
	if s := layersGet(t, r).State; s != "off" {
		t.Fatalf("after delete_layer the light is %s, want off (where the layer began)", s)
	}
	if got := r.lastEvent("lumen.demo.evt.out.layer"); !strings.Contains(got, `"name":"two","ended_by":"delete"`) {
		t.Errorf("the layer's end: %s", got)
	}

	// A layer for an hour: its deadline is an hour after it began, and
	// it ends then.
	began := r.clock.Now()
	r.ok(messages.VerbAppendRules, `{"rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"short","ms":3600000}}`)
	if g := layersGet(t, r); len(g.Layers) != 1 || g.Layers[0].Name != "short" || g.Layers[0].Deadline == nil || !g.Layers[0].Deadline.Equal(began.Add(time.Hour)) {
		t.Fatalf("a layer for an hour begun at %v: %+v", began, g.Layers)
	}
	r.clock.Advance(time.Hour)
	r.step("the layer's deadline to end it", func() bool { return layersGet(t, r).Layers == nil })
	if got := r.lastEvent("lumen.demo.evt.out.layer"); !strings.Contains(got, `"name":"short","ended_by":"ms"`) {
		t.Errorf("the layer's end: %s", got)
	}
	r.verify()
}
