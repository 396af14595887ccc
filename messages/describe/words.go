package describe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
)

// Inputs and the outputs that change the configuration, timers and
// schedules, in words: what a person asked, not the JSON it travelled as.

// wordsWidth bounds what an input's line quotes of a value or list.
const wordsWidth = 160

// Input renders what an input asks, without its type: "button_click
// from button", "add rule off → red on button_click".
func Input(env messages.Envelope) string {
	if s, ok := controlInput(env); ok {
		return s
	}
	switch env.Type {
	case messages.InFired:
		var d messages.InFiredData
		if json.Unmarshal(env.Data, &d) == nil {
			if d.Source != "" {
				return d.Transition + " from " + d.Source
			}
			return d.Transition
		}
	case messages.InState:
		var d messages.InStateData
		if json.Unmarshal(env.Data, &d) == nil {
			return "go to " + d.Name
		}
	case messages.InVar:
		var d messages.InVarData
		if json.Unmarshal(env.Data, &d) == nil {
			if d.Unset {
				return "unset " + d.Name
			}
			return fmt.Sprintf("set %s = %s", d.Name, Value(d.Value))
		}
	case messages.InConfig:
		var d messages.InConfigData
		if json.Unmarshal(env.Data, &d) == nil {
			return Config(d)
		}
	case messages.InTimer:
		var d messages.InTimerData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("%s is due (deadline %s)%s", d.Name, clock(d.Deadline), late(d.Late))
		}
	case messages.InSchedule:
		var d messages.InScheduleData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("%s ticks for %s%s", d.Name, clock(d.At), late(d.Late))
		}
	case messages.InData:
		var d messages.InDataData
		if json.Unmarshal(env.Data, &d) == nil {
			if len(d.Vars) == 0 {
				return "source " + d.Source + " ran, storing nothing"
			}
			var st []string
			for _, k := range slices.Sorted(maps.Keys(d.Vars)) {
				st = append(st, k+" = "+Value(d.Vars[k]))
			}
			return "source " + d.Source + " stores " + clip.Line(strings.Join(st, ", "), wordsWidth, "…")
		}
	case messages.InUpgrade:
		var d messages.InUpgradeData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("check the inputs after this one at level %d", d.Level)
		}
	case messages.InIntent:
		var d messages.InIntentData
		if json.Unmarshal(env.Data, &d) == nil {
			if d.Delete {
				return fmt.Sprintf("forget %q", d.Phrase)
			}
			return fmt.Sprintf("learn %q → %s %s", d.Phrase, d.Verb, d.Arg)
		}
	case messages.InLayer:
		var d messages.InLayerData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("layer %s's time is up (deadline %s)%s", d.Name, clock(d.Deadline), late(d.Late))
		}
	}
	return Value(env.Data)
}

// Config renders a configuration change: its operation and what it
// carries, by name.
func Config(d messages.InConfigData) string {
	switch d.Op {
	case messages.OpApply:
		if d.RollbackTo != 0 {
			return fmt.Sprintf("rollback to input %d: %s", d.RollbackTo, applied(d))
		}
		return "apply " + applied(d)
	case messages.OpCreateState:
		return "create " + names("state", stateNames(d.States))
	case messages.OpDeleteState, messages.OpDeleteSchedule, messages.OpDeleteTool, messages.OpDeleteSource,
		messages.OpDeleteFunction, messages.OpDeleteLayer, messages.OpDeleteTransition:
		what, _ := strings.CutPrefix(d.Op, "delete_")
		return "delete " + what + " " + d.Name
	case messages.OpAppendRules:
		var rs []string
		for _, r := range d.Rules {
			rs = append(rs, Rule(r))
		}
		s := "add rule " + strings.Join(rs, "; ")
		if len(rs) != 1 {
			s = "add rules " + clip.Line(strings.Join(rs, "; "), wordsWidth, "…")
		}
		if d.Layer != nil {
			s += " as " + layerSpec(*d.Layer)
		}
		return s
	case messages.OpDeleteRules, messages.OpEnableRules, messages.OpDisableRules:
		verb, _, _ := strings.Cut(d.Op, "_")
		if d.Match != nil {
			return fmt.Sprintf("%s the rules from %s on %s to %s", verb, orAny(d.Match.From), orAny(d.Match.On), orAny(d.Match.To))
		}
		return verb + " " + names("rule", d.IDs)
	case messages.OpCreateSchedule:
		var ss []string
		for _, s := range d.Schedules {
			ss = append(ss, Schedule(s))
		}
		return "create " + names("schedule", ss)
	case messages.OpDefineTool:
		return "define " + names("tool", toolNames(d.Tools))
	case messages.OpCreateSource:
		return "create " + names("source", sourceNames(d.Sources))
	case messages.OpDefineFunction:
		return "define " + names("function", functionNames(d.Functions))
	case messages.OpDefineTransition:
		return "define " + names("transition", sourceNames(d.Sources))
	case messages.OpSetNames:
		return "set names: " + lightNames(d)
	}
	return strings.ReplaceAll(d.Op, "_", " ") + " " + applied(d)
}

// lightNames says what a set_names sets: the room, the aliases or both,
// as the light keeps them when they are names.
func lightNames(d messages.InConfigData) string {
	room, aliases := d.Room, d.Aliases
	if r, a, err := messages.NormalLightNames(room, aliases); err == nil {
		room, aliases = r, a
	}
	var parts []string
	if !d.KeepRoom {
		if room == "" {
			room = "(none)"
		}
		parts = append(parts, "room "+room)
	}
	if !d.KeepAliases {
		if len(aliases) == 0 {
			parts = append(parts, "no aliases")
		} else {
			parts = append(parts, "aliases "+strings.Join(aliases, ", "))
		}
	}
	return strings.Join(parts, "; ")
}

// applied says what an apply carries, by name, and what it does with the
// variables.
func applied(d messages.InConfigData) string {
	var parts []string
	add := func(what string, list []string) {
		if len(list) > 0 {
			parts = append(parts, names(what, list))
		}
	}
	add("state", stateNames(d.States))
	switch len(d.Rules) {
	case 0:
	case 1:
		parts = append(parts, "1 rule")
	default:
		parts = append(parts, fmt.Sprintf("%d rules", len(d.Rules)))
	}
	var ss []string
	for _, s := range d.Schedules {
		ss = append(ss, s.Name)
	}
	add("schedule", ss)
	add("tool", toolNames(d.Tools))
	add("source", sourceNames(d.Sources))
	add("function", functionNames(d.Functions))
	var ls []string
	for _, l := range d.Layers {
		ls = append(ls, l.Name)
	}
	add("layer", ls)
	if d.Initial != "" {
		parts = append(parts, "initial "+d.Initial)
	}
	switch {
	case d.VarsOp == messages.VarsKeep:
		parts = append(parts, "variables kept")
	case len(d.Vars) > 0:
		parts = append(parts, names("variable", slices.Sorted(maps.Keys(d.Vars))))
	case d.VarsOp == messages.VarsReplace:
		parts = append(parts, "no variables")
	}
	if len(parts) == 0 {
		return "nothing"
	}
	return strings.Join(parts, "; ")
}

// Rule renders a rule in one line: "r3: off → red on button_click if
// getData('n') > 1, priority 5, disabled".
func Rule(r messages.Rule) string {
	s := fmt.Sprintf("%s → %s on %s", r.From, r.To, r.On)
	if r.ID != "" {
		s = r.ID + ": " + s
	}
	if r.Condition != "" {
		s += " if " + clip.Line(r.Condition, 60, "…")
	}
	if r.Action != "" {
		s += " then " + clip.Line(r.Action, 60, "…")
	}
	if r.Priority != 0 {
		s += fmt.Sprintf(", priority %d", r.Priority)
	}
	if !r.Enabled {
		s += ", disabled"
	}
	return s
}

// Schedule renders a schedule: "evening (0 19 * * * Europe/Paris, fires
// evening)", "wake (sunrise −30 min, fires wake)".
func Schedule(s messages.Schedule) string {
	if s.Sun != "" {
		return fmt.Sprintf("%s (%s, fires %s)", s.Name, sunWhen(s.Sun, s.Offset), s.Fires)
	}
	tz := ""
	if s.TZ != "" {
		tz = " " + s.TZ
	}
	return fmt.Sprintf("%s (%s%s, fires %s)", s.Name, s.Cron, tz, s.Fires)
}

// sunWhen is a time of the sun with its offset: "sunset", "sunrise −30
// min", "dusk +1 h 15 min"; an offset that is no duration as it is.
func sunWhen(sun, offset string) string {
	d, err := time.ParseDuration(offset)
	switch {
	case offset == "" || err == nil && d == 0:
		return sun
	case err != nil:
		return sun + " " + offset
	}
	sign := "+"
	if d < 0 {
		sign, d = "−", -d
	}
	var parts []string
	if h := d / time.Hour; h > 0 {
		parts = append(parts, fmt.Sprintf("%d h", h))
	}
	if m := d % time.Hour / time.Minute; m > 0 {
		parts = append(parts, fmt.Sprintf("%d min", m))
	}
	if s := d % time.Minute / time.Second; s > 0 || len(parts) == 0 {
		parts = append(parts, fmt.Sprintf("%d s", s))
	}
	return sun + " " + sign + strings.Join(parts, " ")
}

func layerSpec(l messages.LayerSpec) string {
	s := "layer"
	if l.Name != "" {
		s += " " + l.Name
	}
	var ends []string
	if l.Fires != nil {
		ends = append(ends, fmt.Sprintf("after %d firings", *l.Fires))
	}
	if l.Ms != nil {
		ends = append(ends, "after "+msDuration(*l.Ms))
	}
	if l.Until != "" {
		ends = append(ends, "when "+clip.Line(l.Until, 60, "…"))
	}
	if len(ends) > 0 {
		s += ", ending " + strings.Join(ends, " or ")
	}
	if l.Restore != nil && !*l.Restore {
		s += ", not restoring the state"
	}
	return s
}

// names renders a list of things of one kind: "state red", "states red,
// blue", "no states".
func names(kind string, list []string) string {
	switch len(list) {
	case 0:
		return "no " + kind + "s"
	case 1:
		return kind + " " + list[0]
	}
	return kind + "s " + clip.Line(strings.Join(list, ", "), wordsWidth, "…")
}

func stateNames(ss []messages.State) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Name)
	}
	return out
}

func toolNames(ts []messages.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func functionNames(fs []messages.Function) []string {
	var out []string
	for _, f := range fs {
		out = append(out, f.Name)
	}
	return out
}

// sourceNames are the names of source definitions, which the light
// keeps as raw JSON.
func sourceNames(raw []json.RawMessage) []string {
	var out []string
	for _, r := range raw {
		var s struct {
			Name string `json:"name"`
		}
		_ = json.Unmarshal(r, &s)
		out = append(out, cmp(s.Name, "(unnamed)"))
	}
	return out
}

// Value renders a JSON value for a person: a string as it is (quoted
// when it has spaces or is empty), an object or array as key: value
// pairs, clipped to a line.
func Value(raw json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return clip.Line(string(raw), wordsWidth, "…")
	}
	return clip.Line(valueWords(v), wordsWidth, "…")
}

func valueWords(v any) string {
	switch v := v.(type) {
	case nil:
		return "null"
	case string:
		if v == "" || strings.ContainsAny(v, " ,:()[]\"") {
			return strconv.Quote(v)
		}
		return v
	case []any:
		var parts []string
		for _, e := range v {
			parts = append(parts, valueWords(e))
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(v)) {
			parts = append(parts, k+": "+valueWords(v[k]))
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}

func cmp(s, otherwise string) string {
	if s == "" {
		return otherwise
	}
	return s
}

func orAny(s string) string { return cmp(s, "any") }

func late(l bool) string {
	if l {
		return ", late: the daemon was down"
	}
	return ""
}

// clock is a time as a person reads it, in the local zone.
func clock(t time.Time) string { return t.Local().Format("2006-01-02 15:04:05") }

func msDuration(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }
