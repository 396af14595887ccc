package agent_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/agent"
	"github.com/lumen-home/lumen/messages"
)

// Direct commands name a state or a click among filler words; anything
// more goes to the model.
func TestMatchLocal(t *testing.T) {
	states := []string{"off", "red", "blue", "party_mode", "dim", "on"}
	local := []struct {
		text, verb, arg string
	}{
		{"red", messages.VerbSetState, "red"},
		{"Red!", messages.VerbSetState, "red"},
		{"make it blue please", messages.VerbSetState, "blue"},
		{"turn it off", messages.VerbSetState, "off"},
		{"turn off the light", messages.VerbSetState, "off"},
		{"can you set the light to dim now", messages.VerbSetState, "dim"},
		{"party mode", messages.VerbSetState, "party_mode"},
		{"party_mode", messages.VerbSetState, "party_mode"},
		{"turn it on", messages.VerbSetState, "on"},
		{"next", messages.VerbFire, "button_click"},
		{"click", messages.VerbFire, "button_click"},
		{"next please", messages.VerbFire, "button_click"},
	}
	for _, tc := range local {
		got, ok := agent.MatchLocal(tc.text, states)
		if !ok || got.Verb != tc.verb || got.Arg != tc.arg {
			t.Errorf("%q: %+v %v, want %s %s", tc.text, got, ok, tc.verb, tc.arg)
		}
	}
	toModel := []string{
		"", "green", "next 3 clicks red, then back to normal", "red for 10 minutes", "blue when it's cold outside",
		"turn it red and blue", "make it red again", "go back", "undo that", "red until 8", "what color is it",
		"add a rule: hold turns it off", "make it a little warmer", "blink red", "red then blue", "don't turn it red",
		"turn it on", // without a state named on
		"party", "mode", "please", "the light",
	}
	for _, text := range toModel {
		st := states
		if text == "turn it on" {
			st = []string{"off", "red"}
		}
		if got, ok := agent.MatchLocal(text, st); ok {
			t.Errorf("%q is taken as a direct command %+v; it is for the model", text, got)
		}
	}
}

// A direct command is carried out with no model call, as the call a
// model would make, and answered like one.
func TestDirectCommand(t *testing.T) {
	f := newFixture(t, agent.ModelConfig{}) // a model that must not be asked
	f.light.model.States = append(f.light.model.States, messages.State{Name: "red"})
	r := f.ask(t, "make it red please")
	if r.Status != messages.AgentDone || r.Answer != "The light is red now." || len(f.srv.Requests()) != 0 {
		t.Fatalf("reply %+v after %d model calls", r, len(f.srv.Requests()))
	}
	if sent := f.light.commands(messages.VerbSetState); len(sent) != 1 || strings.Contains(sent[0], "speak_directly") {
		t.Fatalf("set_state sent %q", sent)
	}
	r = f.ask(t, "next")
	if r.Status != messages.AgentDone || !strings.HasPrefix(r.Answer, "I fired button_click") || len(f.light.commands(messages.VerbFire)) != 1 {
		t.Fatalf("next: %+v", r)
	}
	// With no model at all.
	f.loop.Model = nil
	if r := f.ask(t, "off"); r.Status != messages.AgentDone || r.Answer != "The light is off." || len(f.light.commands(messages.VerbPower)) != 1 {
		t.Fatalf("off with no model: %+v", r)
	}
}
