package house

import (
	"encoding/json"
	"slices"
	"testing"
)

// The directory reads room, aliases and the states' names of a get
// reply, and nothing else of it.
func TestGetOf(t *testing.T) {
	for _, tc := range []struct {
		name, reply    string
		room           string
		aliases, names []string
	}{
		{"room and aliases", `{"ok":true,"light":"kitchen","room":"kitchen","aliases":["kitchen light","the big one"],"states":[{"name":"off","r":0},{"name":"warm"}],"rules":[]}`,
			"kitchen", []string{"kitchen light", "the big one"}, []string{"off", "warm"}},
		{"before rooms", `{"ok":true,"light":"hall","states":[{"name":"off"}]}`, "", nil, []string{"off"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var g getOf
			if err := json.Unmarshal([]byte(tc.reply), &g); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range g.States {
				names = append(names, s.Name)
			}
			if g.Room != tc.room || !slices.Equal(g.Aliases, tc.aliases) || !slices.Equal(names, tc.names) {
				t.Errorf("got %+v", g)
			}
		})
	}
}

// A Pi's page, as the house view links to it.
func TestPageSeen(t *testing.T) {
	for _, tc := range []struct{ page, from, want string }{
		{"http://0.0.0.0:8642/", "192.168.1.20:53122", "http://192.168.1.20:8642/"},
		{"http://[::]:8642/", "[fd00::7]:53122", "http://[fd00::7]:8642/"},
		{"http://127.0.0.1:8642/", "192.168.1.20:53122", ""}, // its own machine only
		{"http://127.0.0.1:8642/", "127.0.0.1:53122", "http://127.0.0.1:8642/"},
		{"http://kitchen-pi.local:8642/", "192.168.1.20:53122", "http://kitchen-pi.local:8642/"},
		{"http://192.168.1.20:8642/", "10.0.0.1:1", "http://192.168.1.20:8642/"},
		{"", "192.168.1.20:53122", ""},
		{"http://0.0.0.0:8642/", "", ""}, // not connected: no address to put
	} {
		if got := pageSeen(tc.page, tc.from); got != tc.want {
			t.Errorf("pageSeen(%q, %q) = %q, want %q", tc.page, tc.from, got, tc.want)
		}
	}
}

// What a look finds is merged into what was known: nothing learned is
// lost to a light that answers only in part, or not at all.
func TestMerge(t *testing.T) {
	known := map[string]heard{
		"kitchen": {pi: "pia", room: "kitchen", aliases: []string{"cooker"}, states: []string{"off", "red"}, running: true, got: true},
		"hall":    {pi: "pia", room: "hall", states: []string{"off"}, running: true, got: true},
		"porch":   {pi: "pib", room: "outside", states: []string{"off"}, running: true, got: true},
		"attic":   {pi: "pia", room: "attic", running: true, got: true},
	}
	merge(known, map[string]heard{
		"kitchen": {pi: "pia", running: true, states: []string{}},                                         // discovery only
		"hall":    {pi: "pia", room: "hallway", states: []string{"off", "dim"}, running: true, got: true}, // a new get
		"attic":   {pi: "pic", running: true, states: []string{}},                                         // moved: nothing of pia's kept
	})
	if k := known["kitchen"]; k.room != "kitchen" || len(k.aliases) != 1 || len(k.states) != 2 || !k.running {
		t.Errorf("kitchen, discovered but not read: %+v", k)
	}
	if k := known["hall"]; k.room != "hallway" || len(k.states) != 2 {
		t.Errorf("hall, read again: %+v", k)
	}
	if k := known["porch"]; k.room != "outside" || k.running {
		t.Errorf("porch, away: %+v", k)
	}
	if k := known["attic"]; k.room != "" || k.pi != "pic" {
		t.Errorf("attic, moved to another Pi: %+v", k)
	}
}
