package machine_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

// Rules of a hand-written file: no ids.
const (
	clickRed   = `{"from":"off","on":"button_click","to":"red"}`
	clickGreen = `{"from":"red","on":"button_click","to":"green"}`
	holdOff    = `{"from":"*","on":"button_hold","to":"off"}`
)

// applyRules applies red and green with rules, and returns the rule ids
// the light has then, in order.
func applyRules(t *testing.T, l *light, rules ...string) []string {
	t.Helper()
	l.config(`{"op":"apply","states":[{"name":"red","r":255},{"name":"green","g":255}],"rules":[` + strings.Join(rules, ",") + `]}`)
	var ids []string
	for _, r := range l.m.Export().Rules {
		ids = append(ids, r.ID)
	}
	return ids
}

// From level 1, re-applying a file whose rules have no ids keeps the
// ids of the rules that did not change, so that delete_rules and
// enable_rules by id still name them; a rule that changed gets a new
// id. Before, every rule got a new one, and old journals replay so.
func TestApplyKeepsRuleIDs(t *testing.T) {
	tests := []struct {
		name          string
		level         int
		first, second []string
		want          [2][]string // the ids after the first apply, then after the second
	}{
		{"the same file twice", 1,
			[]string{clickRed, clickGreen, holdOff}, []string{clickRed, clickGreen, holdOff},
			[2][]string{{"r1", "r2", "r3"}, {"r1", "r2", "r3"}}},
		{"one rule changed gets a new id", 1,
			[]string{clickRed, clickGreen, holdOff}, []string{clickRed, `{"from":"red","on":"button_click","to":"off"}`, holdOff},
			[2][]string{{"r1", "r2", "r3"}, {"r1", "r4", "r3"}}},
		{"a priority or enabled is a change", 1,
			[]string{clickRed, clickGreen}, []string{`{"from":"off","on":"button_click","to":"red","priority":1}`, `{"from":"red","on":"button_click","to":"green","enabled":false}`},
			[2][]string{{"r1", "r2"}, {"r3", "r4"}}},
		{"reordered rules keep their ids", 1,
			[]string{clickRed, clickGreen, holdOff}, []string{holdOff, clickRed, clickGreen},
			[2][]string{{"r1", "r2", "r3"}, {"r3", "r1", "r2"}}},
		{"identical rules are matched once each, in order", 1,
			[]string{clickRed, clickRed}, []string{clickRed, clickRed, clickRed},
			[2][]string{{"r1", "r2"}, {"r1", "r2", "r3"}}},
		{"a removed rule's id is not given again", 1,
			[]string{clickRed, clickGreen}, []string{clickGreen, clickGreen},
			[2][]string{{"r1", "r2"}, {"r2", "r3"}}},
		{"an id given is kept, and not reused for a rule without one", 1,
			[]string{clickRed, clickGreen}, []string{clickRed, `{"id":"r1","from":"off","on":"button_click","to":"red"}`},
			[2][]string{{"r1", "r2"}, {"r3", "r1"}}},
		{"before level 1, every rule gets a new id", 0,
			[]string{clickRed, clickGreen, holdOff}, []string{clickRed, clickGreen, holdOff},
			[2][]string{{"r1", "r2", "r3"}, {"r4", "r5", "r6"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			if tt.level > 0 {
				l.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, tt.level))
			}
			first := applyRules(t, l, tt.first...)
			second := applyRules(t, l, tt.second...)
			if !slices.Equal(first, tt.want[0]) || !slices.Equal(second, tt.want[1]) {
				t.Errorf("ids %v then %v, want %v then %v", first, second, tt.want[0], tt.want[1])
			}
		})
	}
}

// A rule that keeps its id is still named by its place in the file when
// the apply is refused, so that lumen apply can point at its line.
func TestKeptRuleIDRefusalNamesItsPlace(t *testing.T) {
	l := upgraded(t) // r1: off → red on button_click
	r := l.apply(messages.InConfig, `{"op":"apply","states":[{"name":"blue","b":255}],"rules":[`+clickRed+`]}`)
	if r.Err == nil || !strings.Contains(r.Err.Error, `rule r1 (rules[0]): to names state "red"`) {
		t.Errorf("%v", outputs(t, r))
	}
}

// enable_rules and disable_rules switch rules by id: a disabled rule
// keeps its place and id but is not tried; an unknown id changes
// nothing.
func TestEnableRules(t *testing.T) {
	l := upgraded(t)
	applyRules(t, l, clickRed, clickGreen, holdOff) // r1 r2 r3
	tests := []struct {
		name    string
		payload string
		want    string // the output, or the refusal
		enabled []bool // r1, r2, r3 after
	}{
		{"disable one", `{"op":"disable_rules","ids":["r1"]}`,
			`config {"op":"disable_rules","rules":["r1"]}`, []bool{false, true, true}},
		{"disable several, listed in the light's order, once", `{"op":"disable_rules","ids":["r3","r2","r3"]}`,
			`config {"op":"disable_rules","rules":["r2","r3"]}`, []bool{false, false, false}},
		{"enable", `{"op":"enable_rules","ids":["r1","r3"]}`,
			`config {"op":"enable_rules","rules":["r1","r3"]}`, []bool{true, false, true}},
		{"enable one already enabled", `{"op":"enable_rules","ids":["r1"]}`,
			`config {"op":"enable_rules","rules":["r1"]}`, []bool{true, false, true}},
		{"an unknown id changes nothing", `{"op":"disable_rules","ids":["r1","r9","r8"]}`,
			`404 disable_rules: no rule has id r9, r8; nothing was changed, check the ids with get`, []bool{true, false, true}},
		{"no ids", `{"op":"enable_rules","ids":[]}`,
			`400 enable_rules: ids is empty; give the ids of the rules, e.g. ["r3"]`, []bool{true, false, true}},
		{"no other field", `{"op":"enable_rules","ids":["r1"],"name":"x"}`,
			`400 config: enable_rules does not take name; it takes ids`, []bool{true, false, true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := l.apply(messages.InConfig, tt.payload)
			got := strings.Join(outputs(t, r), "\n")
			if r.Err != nil {
				got = fmt.Sprintf("%d %s", r.Err.Code, r.Err.Error)
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			var enabled []bool
			for _, rule := range l.m.Export().Rules {
				enabled = append(enabled, rule.Enabled)
			}
			if !slices.Equal(enabled, tt.enabled) {
				t.Errorf("enabled %v, want %v", enabled, tt.enabled)
			}
		})
	}
	// r2 (red → green) is disabled: a click in red matches nothing, and
	// a snapshot keeps it so.
	l.fire("button_click")
	if r := l.fire("button_click"); r.State != "red" || r.Rule != nil {
		t.Errorf("a disabled rule fired: %v", outputs(t, r))
	}
	m := l.restored()
	if got := m.Export().Rules[1]; got.ID != "r2" || got.Enabled {
		t.Errorf("restored: %+v", got)
	}
	l.config(`{"op":"enable_rules","ids":["r2"]}`)
	if r := l.fire("button_click"); r.State != "green" || r.Rule == nil || *r.Rule != "r2" {
		t.Errorf("the rule enabled again did not fire: %v", outputs(t, r))
	}
}

// A clone is the same light, and applying to it leaves the original as
// it was: what a dry run relies on.
func TestClone(t *testing.T) {
	l := upgraded(t)
	l.ok(messages.InVar, `{"name":"n","value":3}`)
	before, err := l.m.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	c, err := l.m.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if b, _ := c.Snapshot(); !bytes.Equal(b, before) {
		t.Fatalf("the clone differs:\n%s\n%s", b, before)
	}
	if r := c.Apply(machine.Event{Seq: 99, Time: t0}, messages.InConfig, []byte(`{"op":"apply","states":[{"name":"blue","b":255}],"rules":[],"vars":{}}`)); r.Err != nil {
		t.Fatal(r.Err.Error)
	}
	if after, _ := l.m.Snapshot(); !bytes.Equal(after, before) {
		t.Errorf("applying to the clone changed the original:\n%s\n%s", after, before)
	}
	if c.Level() != l.m.Level() || len(c.Export().States) != 2 {
		t.Errorf("the clone: level %d, states %+v", c.Level(), c.Export().States)
	}
}
