package messages_test

import (
	"encoding/json"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

func TestVerbTable(t *testing.T) {
	table := messages.VerbTable()
	if !slices.IsSortedFunc(table, func(a, b messages.Verb) int { return strings.Compare(a.Name, b.Name) }) {
		t.Error("VerbTable is not sorted by name: LookupVerb searches it")
	}
	parts := []messages.Part{messages.PartLight, messages.PartDevice, messages.PartTools, messages.PartAgent}
	for i, v := range table {
		if i > 0 && table[i-1].Name == v.Name {
			t.Errorf("verb %s has two rows", v.Name)
		}
		if !slices.Contains(parts, v.Part) {
			t.Errorf("verb %s: part %q answers nothing", v.Name, v.Part)
		}
		if got, ok := messages.LookupVerb(v.Name); !ok || got.Name != v.Name {
			t.Errorf("LookupVerb(%s) = %v, %v", v.Name, got.Name, ok)
		}
		if v.House && !v.Fleet {
			t.Errorf("verb %s: a Pi may ask the house for it, but the fleet does not take it", v.Name)
		}
		if strings.Contains(v.CLI, "_") || (v.CLI != "" && !strings.HasPrefix(v.CLI, "lumen ")) {
			t.Errorf("verb %s: CLI %q is not a lumen command", v.Name, v.CLI)
		}
		// The body's type is one a request can carry: its zero value, as
		// JSON, decodes strictly into it.
		if v.Request != nil {
			b, err := json.Marshal(reflect.New(v.Request).Interface())
			if err != nil {
				t.Fatalf("verb %s: %v", v.Name, err)
			}
			if err := messages.Decode(b, reflect.New(v.Request).Interface()); err != nil {
				t.Errorf("verb %s: its request type does not take its own JSON %s: %v", v.Name, b, err)
			}
		}
	}
	if _, ok := messages.LookupVerb("nope"); ok {
		t.Error("LookupVerb found a verb that is not in the table")
	}
}

// The lists the wire contract promises, each derived from the table.
func TestVerbLists(t *testing.T) {
	for _, c := range []struct {
		name string
		got  []string
		want []string
	}{
		{"fleet", messages.FleetVerbs(), []string{"fire", "get", "power", "set_brightness", "set_color", "set_state", "set_var", "toggle"}},
		{"house", messages.HouseVerbs(), []string{"fire", "power", "set_brightness", "set_color", "set_state", "toggle"}},
		{"device", messages.VerbsOf(messages.PartDevice), []string{"button", "gpio", "led"}},
		{"tools", messages.VerbsOf(messages.PartTools), []string{"run_tool"}},
		{"agent", messages.VerbsOf(messages.PartAgent), []string{"approve", "ask", "reject", "sessions", "talk"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s verbs = %v, want %v", c.name, c.got, c.want)
		}
	}
	if n := len(messages.Verbs()); n != 46 {
		t.Errorf("%d verbs, want 46", n)
	}
}
