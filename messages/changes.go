package messages

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// What an apply changes: the "changes" of its reply and of its dry run,
// a pure diff of the light's configuration before and after (each an
// export), so that a dry run and the apply it previews say the same.

// Changes says, for each part of a light's configuration, what an apply
// adds, changes and removes: states, schedules, tools, sources and
// functions by name, rules by id (a rule that keeps its id but not its
// content is changed), variables by name and value, layers by name (what
// is left of a layer's fires is its state, not its configuration). A
// part that stays the same is omitted; so is initial, unless the
// configured initial state changes, and state, unless the apply moves the
// light (DiffConfig leaves it to the caller, who knows the light's state).
type Changes struct {
	States    Diff  `json:"states,omitzero"`
	Rules     Diff  `json:"rules,omitzero"`
	Vars      Diff  `json:"vars,omitzero"`
	Schedules Diff  `json:"schedules,omitzero"`
	Tools     Diff  `json:"tools,omitzero"`
	Sources   Diff  `json:"sources,omitzero"`
	Functions Diff  `json:"functions,omitzero"`
	Layers    Diff  `json:"layers,omitzero"`
	Initial   *Move `json:"initial,omitempty"`
	OnState   *Move `json:"on_state,omitempty"`
	PowerOn   *Move `json:"power_on,omitempty"`
	// TransitionMs moves are in ms, "" for none.
	TransitionMs *Move `json:"transition_ms,omitempty"`
	// Room moves "" for none; Aliases are added and removed by name (an
	// alias is never changed, and a new order of the same names is no
	// change: they name the light the same).
	Room    *Move `json:"room,omitempty"`
	Aliases Diff  `json:"aliases,omitzero"`
	State   *Move `json:"state,omitempty"`
}

// Diff lists what changed in one part of a configuration: names (rule
// ids) in the order of the configuration after (removed: before).
type Diff struct {
	Added   []string `json:"added,omitempty"`
	Changed []string `json:"changed,omitempty"`
	Removed []string `json:"removed,omitempty"`
}

// Move is a state before and after: the configured initial state, or the
// light's state.
type Move struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// DiffConfig compares two configurations, as the light exports them.
// Variables absent (nil) are no variables; a schedule's next tick is not
// configuration and is ignored.
func DiffConfig(before, after ApplyRequest) Changes {
	c := Changes{
		States: diffBy(before.States, after.States, func(s State) string { return s.Name }, jsonEqual),
		Rules:  diffBy(before.Rules, after.Rules, func(r Rule) string { return r.ID }, func(a, b Rule) bool { return a == b }),
		Vars: diffBy(slices.Sorted(maps.Keys(before.Vars)), slices.Sorted(maps.Keys(after.Vars)), func(n string) string { return n },
			func(a, _ string) bool { return rawEqual(before.Vars[a], after.Vars[a]) }),
		Schedules: diffBy(before.Schedules, after.Schedules, func(s Schedule) string { return s.Name }, func(a, b Schedule) bool {
			// No tz is UTC: an export applied again changes nothing.
			a.Next, b.Next, a.TZ, b.TZ = nil, nil, a.Zone(), b.Zone()
			return jsonEqual(a, b)
		}),
		Tools:     diffBy(before.Tools, after.Tools, func(t Tool) string { return t.Name }, jsonEqual),
		Sources:   diffBy(before.Sources, after.Sources, sourceName, rawEqual),
		Functions: diffBy(before.Functions, after.Functions, func(f Function) string { return f.Name }, jsonEqual),
		Layers: diffBy(before.Layers, after.Layers, func(l Layer) string { return l.Name }, func(a, b Layer) bool {
			a.FiresLeft, b.FiresLeft = nil, nil
			return jsonEqual(a, b)
		}),
	}
	if before.Initial != after.Initial {
		c.Initial = &Move{From: before.Initial, To: after.Initial}
	}
	if before.OnState != after.OnState {
		c.OnState = &Move{From: before.OnState, To: after.OnState}
	}
	if before.PowerOn != after.PowerOn {
		c.PowerOn = &Move{From: before.PowerOn, To: after.PowerOn}
	}
	if a, b := msOrNone(before.TransitionMs), msOrNone(after.TransitionMs); a != b {
		c.TransitionMs = &Move{From: a, To: b}
	}
	if before.Room != after.Room {
		c.Room = &Move{From: before.Room, To: after.Room}
	}
	c.Aliases = diffBy(before.Aliases, after.Aliases, func(a string) string { return a }, func(_, _ string) bool { return true })
	return c
}

// diffBy compares two lists of items named by key.
func diffBy[T any](before, after []T, key func(T) string, same func(a, b T) bool) Diff {
	old := make(map[string]T, len(before))
	for _, x := range before {
		old[key(x)] = x
	}
	var d Diff
	kept := make(map[string]bool, len(after))
	for _, x := range after {
		k := key(x)
		kept[k] = true
		switch o, ok := old[k]; {
		case !ok:
			d.Added = append(d.Added, k)
		case !same(o, x):
			d.Changed = append(d.Changed, k)
		}
	}
	for _, x := range before {
		if k := key(x); !kept[k] {
			d.Removed = append(d.Removed, k)
		}
	}
	return d
}

func jsonEqual[T any](a, b T) bool {
	x, errX := json.Marshal(a)
	y, errY := json.Marshal(b)
	return errX == nil && errY == nil && bytes.Equal(x, y)
}

// rawEqual compares two JSON values as written, whitespace aside.
func rawEqual(a, b json.RawMessage) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// sourceName is the name of a source definition (datasource.Def, which
// this package cannot import).
func sourceName(raw json.RawMessage) string {
	var d struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(raw, &d)
	return d.Name
}

// IsZero reports whether the diff lists nothing.
func (d Diff) IsZero() bool { return len(d.Added)+len(d.Changed)+len(d.Removed) == 0 }

// Empty reports whether nothing changes.
func (c Changes) Empty() bool {
	return c.States.IsZero() && c.Rules.IsZero() && c.Vars.IsZero() && c.Schedules.IsZero() &&
		c.Tools.IsZero() && c.Sources.IsZero() && c.Functions.IsZero() && c.Layers.IsZero() && c.Initial == nil && c.OnState == nil && c.PowerOn == nil && c.TransitionMs == nil && c.Room == nil && c.Aliases.IsZero() && c.State == nil
}

// maxNamed is how many names of one kind String shows before it counts
// the rest: a file of a thousand states should not print a thousand.
const maxNamed = 8

// String renders the changes on one line for people: "states: +blue
// ~red -green; rules: +r7 -r2; vars: unchanged". States, rules and
// variables are always shown; schedules, tools, sources, functions,
// layers, the initial state, on_state, power_on, transition_ms, room,
// aliases ("aliases: +bedroom lamp, -lamp") and the state only when they
// change.
func (c Changes) String() string {
	parts := []string{"states: " + c.States.String(), "rules: " + c.Rules.String(), "vars: " + c.Vars.String()}
	for _, p := range []struct {
		name string
		d    Diff
	}{{"schedules", c.Schedules}, {"tools", c.Tools}, {"sources", c.Sources}, {"functions", c.Functions}, {"layers", c.Layers}} {
		if !p.d.IsZero() {
			parts = append(parts, p.name+": "+p.d.String())
		}
	}
	if c.Initial != nil {
		parts = append(parts, fmt.Sprintf("initial: %s → %s", c.Initial.From, c.Initial.To))
	}
	if c.OnState != nil {
		parts = append(parts, fmt.Sprintf("on_state: %s → %s", orNone(c.OnState.From), orNone(c.OnState.To)))
	}
	if c.PowerOn != nil {
		parts = append(parts, fmt.Sprintf("power_on: %s → %s", powerOn(c.PowerOn.From), powerOn(c.PowerOn.To)))
	}
	if c.TransitionMs != nil {
		parts = append(parts, fmt.Sprintf("transition_ms: %s → %s", orNone(c.TransitionMs.From), orNone(c.TransitionMs.To)))
	}
	if c.Room != nil {
		parts = append(parts, fmt.Sprintf("room: %s → %s", orNone(c.Room.From), orNone(c.Room.To)))
	}
	if !c.Aliases.IsZero() {
		parts = append(parts, "aliases: "+c.Aliases.names())
	}
	if c.State != nil {
		parts = append(parts, fmt.Sprintf("state: %s → %s", c.State.From, c.State.To))
	}
	return strings.Join(parts, "; ")
}

// Summary renders only what changes, one word pair each, as a history
// line: "+rule r7, ~state red, -source weather"; "" when nothing does.
func (c Changes) Summary() string {
	var words []string
	for _, p := range []struct {
		kind string
		d    Diff
	}{{"state", c.States}, {"rule", c.Rules}, {"var", c.Vars}, {"schedule", c.Schedules}, {"tool", c.Tools}, {"source", c.Sources}, {"function", c.Functions}, {"layer", c.Layers}} {
		for _, l := range []struct {
			sign  string
			names []string
		}{{"+", p.d.Added}, {"~", p.d.Changed}, {"-", p.d.Removed}} {
			for i, n := range l.names {
				if i == maxNamed {
					words = append(words, fmt.Sprintf("%s%d more %ss", l.sign, len(l.names)-maxNamed, p.kind))
					break
				}
				words = append(words, l.sign+p.kind+" "+n)
			}
		}
	}
	if c.Initial != nil {
		words = append(words, fmt.Sprintf("initial %s → %s", c.Initial.From, c.Initial.To))
	}
	if c.OnState != nil {
		words = append(words, fmt.Sprintf("on_state %s → %s", orNone(c.OnState.From), orNone(c.OnState.To)))
	}
	if c.PowerOn != nil {
		words = append(words, fmt.Sprintf("power_on %s → %s", powerOn(c.PowerOn.From), powerOn(c.PowerOn.To)))
	}
	if c.TransitionMs != nil {
		words = append(words, fmt.Sprintf("transition_ms %s → %s", orNone(c.TransitionMs.From), orNone(c.TransitionMs.To)))
	}
	if c.Room != nil {
		words = append(words, fmt.Sprintf("room %s → %s", orNone(c.Room.From), orNone(c.Room.To)))
	}
	for _, l := range []struct {
		sign  string
		names []string
	}{{"+", c.Aliases.Added}, {"-", c.Aliases.Removed}} {
		for i, n := range l.names {
			if i == maxNamed {
				words = append(words, fmt.Sprintf("%s%d more aliases", l.sign, len(l.names)-maxNamed))
				break
			}
			words = append(words, l.sign+"alias "+n)
		}
	}
	if c.State != nil {
		words = append(words, fmt.Sprintf("state %s → %s", c.State.From, c.State.To))
	}
	return strings.Join(words, ", ")
}

// String renders one part's changes: "+blue ~red -green", or
// "unchanged".
func (d Diff) String() string {
	if d.IsZero() {
		return "unchanged"
	}
	return d.join(" ")
}

// names renders a diff of names that may hold spaces and '-' (the
// aliases): "+bedroom lamp, -lamp".
func (d Diff) names() string { return d.join(", ") }

// join writes each name with its sign, up to maxNamed of each sign.
func (d Diff) join(sep string) string {
	var words []string
	for _, l := range []struct {
		sign  string
		names []string
	}{{"+", d.Added}, {"~", d.Changed}, {"-", d.Removed}} {
		for i, n := range l.names {
			if i == maxNamed {
				words = append(words, fmt.Sprintf("%s%d more", l.sign, len(l.names)-maxNamed))
				break
			}
			words = append(words, l.sign+n)
		}
	}
	return strings.Join(words, sep)
}

// orNone names an unset state for a person.
func orNone(state string) string {
	if state == "" {
		return "(none)"
	}
	return state
}

// powerOn names a power_on for a person: "" is restore.
func powerOn(p string) string {
	if p == "" {
		return PowerOnRestore
	}
	return p
}

// msOrNone writes a duration in ms, "" for none.
func msOrNone(ms *int) string {
	if ms == nil {
		return ""
	}
	return strconv.Itoa(*ms)
}
