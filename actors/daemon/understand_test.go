package daemon_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/messages"
)

// Everyday commands said to one light with no model are carried out
// where they name: another light (by its name, an alias, its room), a
// group, every light; the answer says what changed. A name no light
// answers to is not guessed, and a request for the model says what works
// without one.
func TestEverydayRouting(t *testing.T) {
	d := startWith(t, func(c *daemon.Config) {
		c.Groups = map[string][]string{"upstairs": {"bedroom_lamp", "office"}}
	}, "hall", "kitchen", "bedroom_lamp", "office")
	nc := connectTo(t, d)
	r := requestTo(t, nc, "kitchen", messages.VerbApply,
		`{"states":[{"name":"off","r":0,"g":0,"b":0},{"name":"cooking","r":255,"g":200,"b":150}],"rules":[],"room":"kitchen","aliases":["pendant"]}`)
	if r.Code != "" {
		t.Fatalf("apply kitchen: %s %s", r.Code, r.Raw)
	}
	for _, l := range []string{"hall", "kitchen", "bedroom_lamp", "office"} {
		requestTo(t, nc, l, messages.VerbSetState, `{"name":"red"}`)
	}
	requestTo(t, nc, "kitchen", messages.VerbSetState, `{"name":"cooking"}`)

	said := func(text string) map[string]any {
		t.Helper()
		r := agentCall(t, nc, "hall", messages.VerbAsk, mustJSON(t, map[string]string{"text": text}), 30*time.Second)
		if r.Code != "" || r.Body["status"] != messages.AgentDone {
			t.Fatalf("%q: %s %s %s", text, r.Code, r.Desc, r.Raw)
		}
		return r.Body
	}
	state := func(light string) messages.GetReply {
		t.Helper()
		var g messages.GetReply
		if err := json.Unmarshal(requestTo(t, nc, light, messages.VerbGet, `{}`).Raw, &g); err != nil {
			t.Fatal(err)
		}
		return g
	}

	// Another light, by its name: the kitchen goes off, hall stays.
	if a := said("turn off the kitchen light please"); a["answer"] != "kitchen: off." {
		t.Errorf("answer %v", a["answer"])
	}
	if k, h := state("kitchen"), state("hall"); k.State != "off" || h.State != "red" {
		t.Fatalf("kitchen %s, hall %s", k.State, h.State)
	}
	// Journaled on the kitchen, by a direct command (local) as on hall.
	var why messages.WhyReply
	if err := json.Unmarshal(requestTo(t, nc, "kitchen", messages.VerbWhy, `{}`).Raw, &why); err != nil || why.Input.By != messages.WhoLocal || why.Input.Type != messages.InPower {
		t.Errorf("why of the kitchen: %+v %v", why.Input, err)
	}
	// By its alias, back on to the state it was in; a color it has no state of.
	said("pendant on")
	if k := state("kitchen"); k.State != "cooking" {
		t.Fatalf("pendant on: kitchen %s", k.State)
	}
	said("make the pendant purple")
	if k := state("kitchen"); k.State != messages.ColorState {
		t.Fatalf("pendant purple: kitchen %s", k.State)
	}
	// A group: its lights, and no other.
	if a := said("dim the upstairs lights to 30%"); !strings.Contains(a["answer"].(string), "bedroom_lamp: 30%") {
		t.Errorf("answer %v", a["answer"])
	}
	if b, o, h := state("bedroom_lamp"), state("office"), state("hall"); b.Brightness != 30 || o.Brightness != 30 || h.Brightness == 30 {
		t.Fatalf("upstairs 30%%: bedroom_lamp %d, office %d, hall %d", b.Brightness, o.Brightness, h.Brightness)
	}
	// The longest name wins: the bedroom lamp, by its name read with spaces.
	said("bedroom lamp off")
	if b, o := state("bedroom_lamp"), state("office"); b.State != "off" || o.State == "off" {
		t.Fatalf("bedroom lamp off: bedroom_lamp %s, office %s", b.State, o.State)
	}
	// Every light.
	said("all the lights off")
	for _, l := range []string{"hall", "kitchen", "bedroom_lamp", "office"} {
		if s := state(l).State; s != "off" {
			t.Errorf("all off: %s is %s", l, s)
		}
	}
	// The light spoken to.
	said("lights on")
	if h, k := state("hall"), state("kitchen"); h.State != "red" || k.State != "off" {
		t.Fatalf("lights on: hall %s, kitchen %s", h.State, k.State)
	}

	refused := func(text, want string) {
		t.Helper()
		r := agentCall(t, nc, "hall", messages.VerbAsk, mustJSON(t, map[string]string{"text": text}), 30*time.Second)
		if r.Code != "409" || !strings.Contains(r.Desc, want) {
			t.Errorf("%q: %s %q", text, r.Code, r.Desc)
		}
	}
	refused("turn off the garage light", `I know no light, room or group called "garage": the lights are bedroom_lamp, hall, kitchen, office; the rooms kitchen; the groups upstairs`)
	refused("next 3 clicks red", "lumen rule add '*' button_click red --fires 3 --light hall")
	refused("turn off the kitchen when it rains", "Without a model I understand everyday commands only")
	if k := state("kitchen"); k.State != "off" {
		t.Fatalf("a refused request changed the kitchen: %s", k.State)
	}
}

func mustJSON(t *testing.T, v any) string {
	t.Helper()
	return string(mustMarshal(t, v))
}
