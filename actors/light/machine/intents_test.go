package machine_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

const intentsConfig = `{"op":"apply","states":[{"name":"reading","r":255,"g":200,"b":120},{"name":"cinema","r":20,"g":0,"b":40}],
	"rules":[{"id":"p1","from":"*","on":"party","to":"reading"}]}`

// Learned intents: learned, replaced, forgotten, refused when they would
// not work, and dropped (with a reason) by the configuration change that
// deletes their state or transition; never part of the configuration.
func TestIntents(t *testing.T) {
	learn := func(phrase, verb, arg string) string {
		return mustJSON(t, messages.InIntentData{Phrase: phrase, Verb: verb, Arg: arg})
	}
	forget := func(phrase string) string { return mustJSON(t, messages.InIntentData{Phrase: phrase, Delete: true}) }
	tests := []struct {
		name    string
		before  []string // inputs applied first: intents, or config when they start with {"op"
		input   string   // an intent input, or a config one
		code    int      // 0: accepted
		out     []string // outputs, for an accepted input
		intents string   // phrase=verb:arg, by phrase
	}{
		{name: "learn a state", input: learn("i'm going read book", "set_state", "reading"),
			out:     []string{`intent {"phrase":"i'm going read book","verb":"set_state","arg":"reading"}`},
			intents: "i'm going read book=set_state:reading"},
		{name: "learn a transition", input: learn("party time", "fire", "party"),
			out: []string{`intent {"phrase":"party time","verb":"fire","arg":"party"}`}, intents: "party time=fire:party"},
		{name: "learn again replaces", before: []string{learn("movie", "set_state", "reading")}, input: learn("movie", "set_state", "cinema"),
			out: []string{`intent {"phrase":"movie","verb":"set_state","arg":"cinema"}`}, intents: "movie=set_state:cinema"},
		{name: "forget", before: []string{learn("movie", "set_state", "cinema"), learn("book", "set_state", "reading")}, input: forget("movie"),
			out: []string{`intent {"phrase":"movie","verb":"set_state","arg":"cinema","delete":true}`}, intents: "book=set_state:reading"},
		{name: "forget an unknown phrase", input: forget("movie"), code: 404},
		{name: "an unknown state", input: learn("movie", "set_state", "theatre"), code: 404},
		{name: "a transition nothing uses", input: learn("movie", "fire", "showtime"), code: 404},
		{name: "a configuration change", input: learn("movie", "create_state", "cinema"), code: 400},
		{name: "learn a power", input: learn("kill it", "power", "off"),
			out: []string{`intent {"phrase":"kill it","verb":"power","arg":"off"}`}, intents: "kill it=power:off"},
		{name: "learn a brightness step", input: learn("way too bright", "set_brightness", "-20"),
			out: []string{`intent {"phrase":"way too bright","verb":"set_brightness","arg":"-20"}`}, intents: "way too bright=set_brightness:-20"},
		{name: "learn a color", input: learn("like the sea", "set_color", "teal"),
			out: []string{`intent {"phrase":"like the sea","verb":"set_color","arg":"teal"}`}, intents: "like the sea=set_color:teal"},
		{name: "a power neither on nor off", input: learn("kill it", "power", "maybe"), code: 400},
		{name: "a brightness out of range", input: learn("blinding", "set_brightness", "300"), code: 400},
		{name: "a color of no form", input: learn("like the sea", "set_color", strings.Repeat("x", 41)), code: 400},
		{name: "no phrase", input: learn("", "set_state", "cinema"), code: 400},
		{name: "no arg", input: learn("movie", "set_state", ""), code: 400},
		{name: "forget with an action", input: `{"phrase":"movie","verb":"set_state","arg":"cinema","delete":true}`, code: 400},
		{name: "a phrase too long", input: learn(strings.Repeat("a", messages.MaxPhrase+1), "set_state", "cinema"), code: 400},
		{name: "delete_state drops", before: []string{learn("movie", "set_state", "cinema"), learn("book", "set_state", "reading")},
			input: `{"op":"delete_state","name":"cinema"}`,
			out: []string{`config {"op":"delete_state","states":["cinema"]}`,
				`intent {"phrase":"movie","verb":"set_state","arg":"cinema","delete":true,"reason":"state cinema was deleted"}`},
			intents: "book=set_state:reading"},
		{name: "an apply without the state drops", before: []string{learn("movie", "set_state", "cinema"), learn("party time", "fire", "party")},
			input:   `{"op":"apply","states":[{"name":"reading","r":1,"g":2,"b":3}],"rules":[{"id":"p1","from":"*","on":"party","to":"reading"}]}`,
			intents: "party time=fire:party"},
		{name: "deleting the rules of a transition drops", before: []string{learn("party time", "fire", "party")},
			input: `{"op":"delete_rules","ids":["p1"]}`,
			out: []string{`config {"op":"delete_rules","rules":["p1"]}`,
				`intent {"phrase":"party time","verb":"fire","arg":"party","delete":true,"reason":"no rule, source or schedule uses transition party any more"}`}},
		{name: "other changes keep them", before: []string{learn("movie", "set_state", "cinema"), learn("party time", "fire", "party")},
			input:   `{"op":"create_state","states":[{"name":"cinema","r":0,"g":0,"b":0}]}`,
			out:     []string{`config {"op":"create_state","states":["cinema"]}`},
			intents: "movie=set_state:cinema,party time=fire:party"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.config(intentsConfig)
			typeOf := func(in string) string {
				if strings.HasPrefix(in, `{"op"`) {
					return messages.InConfig
				}
				return messages.InIntent
			}
			for _, b := range tt.before {
				l.ok(typeOf(b), b)
			}
			r := l.apply(typeOf(tt.input), tt.input)
			switch {
			case tt.code == 0 && r.Err != nil:
				t.Fatalf("rejected: %d %s", r.Err.Code, r.Err.Error)
			case tt.code != 0 && (r.Err == nil || r.Err.Code != tt.code):
				t.Fatalf("got %+v, want code %d", r.Err, tt.code)
			case tt.code == 0 && tt.out != nil:
				equalLines(t, outputs(t, r), tt.out)
			}
			if got := intentList(l.m); got != tt.intents {
				t.Errorf("intents %q, want %q", got, tt.intents)
			}
			// Part of the light's state (the model, its snapshot), not
			// of its configuration (export).
			if got := intentList(l.restored()); got != tt.intents {
				t.Errorf("restored from a snapshot: intents %q, want %q", got, tt.intents)
			}
			if exp := mustJSON(t, l.m.Export()); strings.Contains(exp, "intent") {
				t.Errorf("export has the intents: %s", exp)
			}
			if m := l.m.Model(); len(m.Intents) != strings.Count(tt.intents, "=") {
				t.Errorf("get has intents %+v, want %s", m.Intents, tt.intents)
			}
		})
	}
}

// An intent keeps the time of the input that taught it.
func TestIntentLearnedAt(t *testing.T) {
	l := newLight(t)
	l.config(intentsConfig)
	l.ok(messages.InIntent, `{"phrase":"book","verb":"set_state","arg":"reading"}`)
	if in := l.m.Intents(); len(in) != 1 || !in[0].Learned.Equal(l.now) {
		t.Fatalf("intents %+v, want one learned at %v", in, l.now)
	}
}

func intentList(m *machine.Machine) string {
	var out []string
	for _, in := range m.Intents() {
		out = append(out, in.Phrase+"="+in.Verb+":"+in.Arg)
	}
	return strings.Join(out, ",")
}
