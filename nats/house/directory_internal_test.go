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
