package messages_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

func TestDiffConfig(t *testing.T) {
	red := messages.State{Name: "red", R: messages.Num(255)}
	green := messages.State{Name: "green", G: messages.Num(255)}
	blue := messages.State{Name: "blue", B: messages.Num(255)}
	rule := func(id, to string) messages.Rule {
		return messages.Rule{ID: id, From: "off", On: "button_click", To: to, Enabled: true}
	}
	base := messages.ApplyRequest{
		States:    []messages.State{red, green},
		Rules:     []messages.Rule{rule("r1", "red"), rule("r2", "green")},
		Vars:      map[string]json.RawMessage{"n": json.RawMessage(`1`), "who": json.RawMessage(`"ann"`)},
		Initial:   "off",
		Schedules: []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", Fires: "evening"}},
		Tools:     []messages.Tool{{Name: "t", Code: "return 1"}},
		Sources:   []json.RawMessage{json.RawMessage(`{"name":"door","type":"webhook"}`)},
	}
	tests := []struct {
		name   string
		change func(c *messages.ApplyRequest)
		want   string // the JSON of the changes
		says   string // String
	}{
		{"nothing", func(*messages.ApplyRequest) {}, `{}`, "states: unchanged; rules: unchanged; vars: unchanged"},
		{"states added, changed and removed", func(c *messages.ApplyRequest) {
			c.States = []messages.State{blue, {Name: "red", R: messages.Num(200)}}
		}, `{"states":{"added":["blue"],"changed":["red"],"removed":["green"]}}`, "states: +blue ~red -green; rules: unchanged; vars: unchanged"},
		{"rules by id and content", func(c *messages.ApplyRequest) {
			r2 := rule("r2", "green")
			r2.Enabled = false
			c.Rules = []messages.Rule{r2, rule("r7", "red")}
		}, `{"rules":{"added":["r7"],"changed":["r2"],"removed":["r1"]}}`, "states: unchanged; rules: +r7 ~r2 -r1; vars: unchanged"},
		{"a reordered rule is the same rule", func(c *messages.ApplyRequest) {
			c.Rules = []messages.Rule{rule("r2", "green"), rule("r1", "red")}
		}, `{}`, "states: unchanged; rules: unchanged; vars: unchanged"},
		{"vars by name and value, whitespace aside", func(c *messages.ApplyRequest) {
			c.Vars = map[string]json.RawMessage{"n": json.RawMessage(`2`), "who": json.RawMessage(` "ann" `), "at": json.RawMessage(`{}`)}
		}, `{"vars":{"added":["at"],"changed":["n"]}}`, "states: unchanged; rules: unchanged; vars: +at ~n"},
		{"no vars at all", func(c *messages.ApplyRequest) { c.Vars = nil },
			`{"vars":{"removed":["n","who"]}}`, "states: unchanged; rules: unchanged; vars: -n -who"},
		{"schedules, tools, sources and initial", func(c *messages.ApplyRequest) {
			c.Schedules = []messages.Schedule{{Name: "evening", Cron: "0 20 * * *", Fires: "evening"}}
			c.Tools = nil
			c.Sources = []json.RawMessage{json.RawMessage(`{"name":"door","type":"webhook"}`), json.RawMessage(`{"name":"bell","type":"nats","subject":"home.bell"}`)}
			c.Initial = "red"
		}, `{"schedules":{"changed":["evening"]},"tools":{"removed":["t"]},"sources":{"added":["bell"]},"initial":{"from":"off","to":"red"}}`,
			"states: unchanged; rules: unchanged; vars: unchanged; schedules: ~evening; tools: -t; sources: +bell; initial: off → red"},
		{"a schedule's next tick is not configuration", func(c *messages.ApplyRequest) {
			next := t0
			c.Schedules = []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", Fires: "evening", Next: &next}}
		}, `{}`, "states: unchanged; rules: unchanged; vars: unchanged"},
		{"no tz is UTC (an exported schedule applied again)", func(c *messages.ApplyRequest) {
			c.Schedules = []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", TZ: "UTC", Fires: "evening"}}
		}, `{}`, "states: unchanged; rules: unchanged; vars: unchanged"},
		{"a room is set, changed and removed as a move", func(c *messages.ApplyRequest) { c.Room = "bedroom" },
			`{"room":{"from":"","to":"bedroom"}}`, "states: unchanged; rules: unchanged; vars: unchanged; room: (none) → bedroom"},
		{"aliases are added and removed by name", func(c *messages.ApplyRequest) { c.Aliases = []string{"bedroom lamp", "bedside"} },
			`{"aliases":{"added":["bedroom lamp","bedside"]}}`, "states: unchanged; rules: unchanged; vars: unchanged; aliases: +bedroom lamp, +bedside"},
		{"the room and aliases together", func(c *messages.ApplyRequest) {
			c.Room, c.Aliases = "bedroom", []string{"bedside"}
		}, `{"room":{"from":"","to":"bedroom"},"aliases":{"added":["bedside"]}}`,
			"states: unchanged; rules: unchanged; vars: unchanged; room: (none) → bedroom; aliases: +bedside"},
		{"a zone is configuration", func(c *messages.ApplyRequest) {
			c.Schedules = []messages.Schedule{{Name: "evening", Cron: "0 19 * * *", TZ: "Europe/Paris", Fires: "evening"}}
		}, `{"schedules":{"changed":["evening"]}}`, "states: unchanged; rules: unchanged; vars: unchanged; schedules: ~evening"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after := base
			tt.change(&after)
			c := messages.DiffConfig(base, after)
			b, err := json.Marshal(c)
			if err != nil {
				t.Fatal(err)
			}
			if string(b) != tt.want {
				t.Errorf("changes %s\n   want %s", b, tt.want)
			}
			if c.String() != tt.says {
				t.Errorf("says %q\nwant %q", c.String(), tt.says)
			}
			if c.Empty() != (tt.want == `{}`) {
				t.Errorf("Empty() is %v for %s", c.Empty(), b)
			}
		})
	}
}

// A long list is cut short: a file of a thousand states prints one line.
func TestChangesStringIsShort(t *testing.T) {
	var after messages.ApplyRequest
	for i := range 1000 {
		after.States = append(after.States, messages.State{Name: fmt.Sprintf("s%d", i)})
	}
	s := messages.DiffConfig(messages.ApplyRequest{}, after).String()
	if !strings.HasPrefix(s, "states: +s0 +s1 +s2 +s3 +s4 +s5 +s6 +s7 +992 more; rules: unchanged") {
		t.Errorf("%s", s)
	}
}

func ExampleDiffConfig() {
	before := messages.ApplyRequest{
		States: []messages.State{{Name: "red", R: messages.Num(255)}, {Name: "green", G: messages.Num(255)}},
		Rules:  []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "red", Enabled: true}},
	}
	after := messages.ApplyRequest{
		States: []messages.State{{Name: "red", R: messages.Num(200)}, {Name: "blue", B: messages.Num(255)}},
		Rules:  []messages.Rule{{ID: "r1", From: "off", On: "button_click", To: "red", Enabled: true}},
	}
	fmt.Println(messages.DiffConfig(before, after))
	// Output: states: +blue ~red -green; rules: unchanged; vars: unchanged
}

func TestChangesSummary(t *testing.T) {
	many := make([]string, 10)
	for i := range many {
		many[i] = fmt.Sprint("s", i)
	}
	for _, tc := range []struct {
		c    messages.Changes
		want string
	}{
		{messages.Changes{}, ""},
		{messages.Changes{Rules: messages.Diff{Added: []string{"r7"}}, States: messages.Diff{Changed: []string{"red"}}, Sources: messages.Diff{Removed: []string{"weather"}}},
			"~state red, +rule r7, -source weather"},
		{messages.Changes{Initial: &messages.Move{From: "off", To: "red"}}, "initial off → red"},
		{messages.Changes{State: &messages.Move{From: "red", To: "blue"}}, "state red → blue"},
		{messages.Changes{Room: &messages.Move{To: "bedroom"}}, "room (none) → bedroom"},
		{messages.Changes{Room: &messages.Move{From: "bedroom", To: "study"}, Aliases: messages.Diff{Added: []string{"study lamp", "desk"}, Removed: []string{"bedside"}}},
			"room bedroom → study, +alias study lamp, +alias desk, -alias bedside"},
		{messages.Changes{Aliases: messages.Diff{Added: many}}, "+alias s0, +alias s1, +alias s2, +alias s3, +alias s4, +alias s5, +alias s6, +alias s7, +2 more aliases"},
		{messages.Changes{States: messages.Diff{Added: many}}, "+state s0, +state s1, +state s2, +state s3, +state s4, +state s5, +state s6, +state s7, +2 more states"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("Summary() = %q, want %q", got, tc.want)
		}
	}
}

// The room moves; aliases name the light as a set: the same names in
// another order are no change, and each alias added or removed is
// listed once.
func TestDiffConfigNames(t *testing.T) {
	c := func(room string, aliases ...string) messages.ApplyRequest {
		return messages.ApplyRequest{Room: room, Aliases: aliases}
	}
	for _, tc := range []struct {
		before, after messages.ApplyRequest
		want          string // the JSON of the changes
		summary       string
	}{
		{c("bedroom"), c("study"), `{"room":{"from":"bedroom","to":"study"}}`, "room bedroom → study"},
		{c("bedroom"), c(""), `{"room":{"from":"bedroom","to":""}}`, "room bedroom → (none)"},
		{c("", "a", "b"), c("", "b", "a"), `{}`, ""},
		{c("", "a", "b"), c("", "b", "c"), `{"aliases":{"added":["c"],"removed":["a"]}}`, "+alias c, -alias a"},
		{c("", "desk lamp"), c(""), `{"aliases":{"removed":["desk lamp"]}}`, "-alias desk lamp"},
		{c("", "bedside"), c("bedroom", "bedroom lamp", "bedside"), `{"room":{"from":"","to":"bedroom"},"aliases":{"added":["bedroom lamp"]}}`,
			"room (none) → bedroom, +alias bedroom lamp"},
	} {
		ch := messages.DiffConfig(tc.before, tc.after)
		b, err := json.Marshal(ch)
		if err != nil {
			t.Fatal(err)
		}
		if string(b) != tc.want || ch.Summary() != tc.summary || ch.Empty() != (tc.want == `{}`) {
			t.Errorf("%+v → %+v: %s, %q (empty %v); want %s, %q", tc.before, tc.after, b, ch.Summary(), ch.Empty(), tc.want, tc.summary)
		}
	}
}
