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
