package agent

import (
	_ "embed"
	"encoding/json"
	"fmt"
)

// Pattern is one entry of the pattern library the model looks up with
// getPattern: what it is for, a template and a worked example. Check is
// how the tests prove the example behaves as described; the model never
// sees it.
type Pattern struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Template    json.RawMessage `json:"template"`
	Example     PatternExample  `json:"example"`
	Check       []PatternCheck  `json:"-"`
}

// PatternExample is a request and the light configuration that answers
// it: on Light, when given (the light before the request, which the
// answer leaves as it is), the states, schedules, tool and source it
// adds, and its rules, added as one temporary layer when Layer is given
// (appendRules' layer).
type PatternExample struct {
	UserRequest string          `json:"user_request"`
	Light       *PatternLight   `json:"light,omitempty"`
	Tool        json.RawMessage `json:"tool,omitempty"`
	Source      json.RawMessage `json:"source,omitempty"`
	States      json.RawMessage `json:"states"`
	Schedules   json.RawMessage `json:"schedules,omitempty"`
	Rules       json.RawMessage `json:"rules"`
	Layer       json.RawMessage `json:"layer,omitempty"`
}

// PatternLight is the light an example starts from.
type PatternLight struct {
	States json.RawMessage `json:"states,omitempty"`
	Rules  json.RawMessage `json:"rules,omitempty"`
}

// PatternCheck is one step of an example's behaviour: set Vars, fire the
// transition (or, with Data, run the example's data source once with
// those values, as the light's data input, which fires its transition),
// then the light is in State (and has exactly Timers, when given).
type PatternCheck struct {
	Vars   map[string]json.RawMessage `json:"vars,omitempty"`
	Data   map[string]json.RawMessage `json:"data,omitempty"`
	Fire   string                     `json:"fire,omitempty"`
	State  string                     `json:"state"`
	Timers *[]string                  `json:"timers,omitempty"`
}

//go:embed patterns.json
var patternsJSON []byte

// Patterns returns the library, decoded afresh (callers may change it).
func Patterns() []Pattern {
	var wire []struct {
		Pattern
		Check []PatternCheck `json:"check"`
	}
	if err := json.Unmarshal(patternsJSON, &wire); err != nil {
		panic(fmt.Sprintf("agent: patterns.json: %v", err)) // a build defect, caught by every test
	}
	out := make([]Pattern, len(wire))
	for i, w := range wire {
		out[i] = w.Pattern
		out[i].Check = w.Check
	}
	return out
}

// PatternNames lists the patterns' names in library order.
func PatternNames() []string {
	ps := Patterns()
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	return names
}

// PatternByName finds one pattern.
func PatternByName(name string) (Pattern, bool) {
	for _, p := range Patterns() {
		if p.Name == name {
			return p, true
		}
	}
	return Pattern{}, false
}
