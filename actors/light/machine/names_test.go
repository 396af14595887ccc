package machine_test

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// namedLight is a light with the names people use for it, as they type
// them.
const namedLight = `{"op":"apply","room":" Bedroom ","aliases":["Bedroom  Lamp","bedside","Kid’s lamp"],
	"states":[{"name":"warm","r":255,"g":180,"b":100}],"rules":[]}`

// A room and aliases that are not names are refused whole, with the key
// and the value, and leave the light as it was.
func TestLightNamesRejected(t *testing.T) {
	l := newLight(t)
	l.config(namedLight)
	before := mustJSON(t, l.m.Export())
	many := `"a","b","c","d","e","f","g","h","i","j","k","l","m","n","o","p","q"`
	for _, tt := range []struct{ names, says string }{
		{`"room":"bed/room"`, `room "bed/room" holds '/'`},
		{`"room":"   "`, `room "   " is only spaces`},
		{`"room":"` + strings.Repeat("x", 41) + `"`, `is 41 characters long; a room or an alias is at most 40`},
		{`"aliases":["lamp",""]`, `aliases[1] "" is empty`},
		{`"aliases":["lamp!"]`, `aliases[0] "lamp!" holds '!'`},
		{`"aliases":["Desk Lamp","desk  lamp"]`, `aliases[1] "desk  lamp" is aliases[0] "Desk Lamp" again (both are "desk lamp")`},
		{`"aliases":[` + many + `]`, "aliases lists 17 names; a light has at most 16"},
	} {
		r := l.apply(messages.InConfig, `{"op":"apply",`+tt.names+`,"states":[{"name":"a","r":1,"g":1,"b":1}],"rules":[]}`)
		if r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, tt.says) {
			t.Errorf("%s: %+v, want 400 saying %s", tt.names, r.Err, tt.says)
		}
	}
	if r := l.apply(messages.InConfig, `{"op":"create_state","room":"kitchen","states":[{"name":"b"}]}`); r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, "create_state does not take room") {
		t.Errorf("create_state with a room: %+v, want 400", r.Err)
	}
	if after := mustJSON(t, l.m.Export()); after != before {
		t.Errorf("a refused apply changed the light:\n%s\nwas\n%s", after, before)
	}
}

// The names are configuration: kept normalised, in get and export,
// exported and applied back without a change, kept by a snapshot and by
// changes that do not name them, and gone with an apply without them.
func TestLightNamesConfig(t *testing.T) {
	l := newLight(t)
	l.config(namedLight)
	room, aliases := "bedroom", []string{"bedroom lamp", "bedside", "kid's lamp"}
	same := func(what string, gotRoom string, gotAliases []string) {
		t.Helper()
		if gotRoom != room || !slices.Equal(gotAliases, aliases) {
			t.Errorf("%s: room %q, aliases %q; want %q, %q", what, gotRoom, gotAliases, room, aliases)
		}
	}
	g := l.m.Model()
	same("get", g.Room, g.Aliases)
	exp := l.m.Export()
	same("export", exp.Room, exp.Aliases)
	if c := g.Config(); c.Room != room || !slices.Equal(c.Aliases, aliases) {
		t.Errorf("get's configuration: %q %q", c.Room, c.Aliases)
	}

	// Export → YAML → apply changes nothing.
	y, err := messages.ToYAML(exp)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(y), "room: bedroom\naliases:\n  - bedroom lamp\n  - bedside\n  - kid's lamp\n") {
		t.Errorf("export:\n%s", y)
	}
	j, err := messages.ToJSON(y, ".yaml")
	if err != nil {
		t.Fatal(err)
	}
	var back messages.ApplyRequest
	if err := json.Unmarshal(j, &back); err != nil {
		t.Fatal(err)
	}
	l.config(applyConfig(t, back))
	if ch := messages.DiffConfig(exp, l.m.Export()); !ch.Empty() {
		t.Errorf("export applied back changes %s", ch)
	}

	m := l.restored()
	same("restored from a snapshot", m.Model().Room, m.Model().Aliases)
	a, _ := l.m.Snapshot()
	if b, _ := m.Snapshot(); !bytes.Equal(a, b) || !bytes.Contains(a, []byte(`"room":"bedroom","aliases":["bedroom lamp","bedside","kid's lamp"]`)) {
		t.Errorf("snapshot of the restored light:\n%s\nwant\n%s", b, a)
	}
	l.config(`{"op":"create_state","states":[{"name":"cold","r":100,"g":180,"b":255}]}`)
	l.config(`{"op":"delete_state","name":"cold"}`)
	same("after create_state and delete_state", l.m.Model().Room, l.m.Model().Aliases)

	before := l.m.Export()
	l.config(`{"op":"apply","room":"Study","states":[{"name":"warm","r":255,"g":180,"b":100}],"rules":[]}`)
	ch := messages.DiffConfig(before, l.m.Export())
	if got, want := ch.Summary(), "room bedroom → study, -alias bedroom lamp, -alias bedside, -alias kid's lamp"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	l.config(`{"op":"apply","states":[{"name":"warm","r":255,"g":180,"b":100}],"rules":[]}`)
	if g := l.m.Model(); g.Room != "" || g.Aliases != nil {
		t.Errorf("apply without names: room %q, aliases %q; want none", g.Room, g.Aliases)
	}
	if s := mustJSON(t, l.m.Model()); strings.Contains(s, `"room"`) || strings.Contains(s, `"aliases"`) {
		t.Errorf("get without names writes them: %s", s)
	}
}

// set_names sets the part it is given, checked and normalised as apply
// does, keeps the other and moves nothing else; it refuses what apply
// refuses, and a set_names that sets nothing. Replayed, the same inputs
// make the same light.
func TestSetNames(t *testing.T) {
	l := newLight(t)
	var inputs []string
	l.config(namedLight)
	inputs = append(inputs, namedLight)
	l.config(`{"op":"append_rules","rules":[{"from":"off","on":"click","to":"warm"}]}`)
	inputs = append(inputs, `{"op":"append_rules","rules":[{"from":"off","on":"click","to":"warm"}]}`)
	l.fire("click")
	inputs = append(inputs, "")
	for _, tc := range []struct {
		name, input string
		room        string
		aliases     []string
		summary     string // of the changes; "" for none
		err         string // a 400 that says it; the light stays as it was
	}{
		{"room alone", `{"op":"set_names","room":" Living  Room","keep_aliases":true}`, "living room", []string{"bedroom lamp", "bedside", "kid's lamp"}, "room bedroom → living room", ""},
		{"aliases alone", `{"op":"set_names","aliases":["Sofa Lamp","bedside"],"keep_room":true}`, "living room", []string{"sofa lamp", "bedside"}, "+alias sofa lamp, -alias bedroom lamp, -alias kid's lamp", ""},
		{"both", `{"op":"set_names","room":"bedroom","aliases":["bedroom lamp","bedside"]}`, "bedroom", []string{"bedroom lamp", "bedside"}, "room living room → bedroom, +alias bedroom lamp, -alias sofa lamp", ""},
		{"the same again", `{"op":"set_names","room":"Bedroom","aliases":["bedside","bedroom lamp"]}`, "bedroom", []string{"bedside", "bedroom lamp"}, "", ""},
		{"clear the room", `{"op":"set_names","keep_aliases":true}`, "", []string{"bedside", "bedroom lamp"}, "room bedroom → (none)", ""},
		{"clear the aliases", `{"op":"set_names","aliases":[],"keep_room":true}`, "", nil, "-alias bedside, -alias bedroom lamp", ""},
		{"set both again", `{"op":"set_names","room":"hall","aliases":["porch"]}`, "hall", []string{"porch"}, "room (none) → hall, +alias porch", ""},
		{"clear both", `{"op":"set_names"}`, "", nil, "room hall → (none), -alias porch", ""},
		{"refuse a bad room", `{"op":"set_names","room":"bed/room","keep_aliases":true}`, "", nil, "", `room "bed/room" holds '/'`},
		{"refuse twice an alias", `{"op":"set_names","aliases":["Desk Lamp","desk  lamp"],"keep_room":true}`, "", nil, "", `aliases[1] "desk  lamp" is aliases[0] "Desk Lamp" again (both are "desk lamp")`},
		{"refuse a bad alias with a good room", `{"op":"set_names","room":"hall","aliases":["lamp!"]}`, "", nil, "", `aliases[0] "lamp!" holds '!'`},
		{"refuse nothing to set", `{"op":"set_names","keep_room":true,"keep_aliases":true}`, "", nil, "", `set_names sets nothing`},
		{"refuse a kept room given", `{"op":"set_names","room":"hall","keep_room":true}`, "", nil, "", `keep_room with a room`},
		{"refuse what apply takes", `{"op":"set_names","room":"hall","initial":"warm"}`, "", nil, "", `set_names does not take initial`},
		{"apply refuses keep", `{"op":"apply","keep_room":true,"states":[],"rules":[]}`, "", nil, "", `apply does not take keep_room`},
	} {
		before, state := l.m.Export(), l.m.State()
		r := l.apply(messages.InConfig, tc.input)
		if tc.err != "" {
			if r.Err == nil || r.Err.Code != 400 || !strings.Contains(r.Err.Error, tc.err) {
				t.Errorf("%s: %+v, want a 400 saying %s", tc.name, r.Err, tc.err)
			}
			if after := l.m.Export(); mustJSON(t, after) != mustJSON(t, before) {
				t.Errorf("%s: a refused set_names changed the light", tc.name)
			}
			continue
		}
		inputs = append(inputs, tc.input)
		if r.Err != nil {
			t.Errorf("%s: %d %s", tc.name, r.Err.Code, r.Err.Error)
			continue
		}
		equalLines(t, outputs(t, r), []string{`config {"op":"set_names"}`})
		g := l.m.Model()
		if g.Room != tc.room || !slices.Equal(g.Aliases, tc.aliases) || g.State != state {
			t.Errorf("%s: room %q, aliases %q, state %s; want %q, %q, %s", tc.name, g.Room, g.Aliases, g.State, tc.room, tc.aliases, state)
		}
		ch := messages.DiffConfig(before, l.m.Export())
		if got := ch.Summary(); got != tc.summary {
			t.Errorf("%s: changes %q, want %q", tc.name, got, tc.summary)
		}
		ch.Room, ch.Aliases = nil, messages.Diff{}
		if !ch.Empty() {
			t.Errorf("%s: set_names changed more than the names: %s", tc.name, ch)
		}
	}

	// The inputs that were accepted, replayed on a new light, make the
	// same light; so does its snapshot.
	r := newLight(t)
	for _, in := range inputs {
		if in == "" {
			r.fire("click")
			continue
		}
		r.config(in)
	}
	r.config(`{"op":"set_names","room":"Kitchen","keep_aliases":true}`)
	l.config(`{"op":"set_names","room":"Kitchen","keep_aliases":true}`)
	a, _ := l.m.Snapshot()
	if b, _ := r.m.Snapshot(); !bytes.Equal(a, b) {
		t.Errorf("replayed:\n%s\nwant\n%s", b, a)
	}
	if m := l.restored(); m.Model().Room != "kitchen" || m.Model().Aliases != nil {
		t.Errorf("restored from a snapshot: room %q, aliases %q", m.Model().Room, m.Model().Aliases)
	}
}
