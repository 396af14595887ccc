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
