package messages

import (
	"encoding/json"
	"time"
)

// Input types: the last token of lumen.<light>.evt.in.<type>.
const (
	InFired    = "fired"    // InFiredData: fire a transition
	InState    = "state"    // InStateData: go to a state at once
	InVar      = "var"      // InVarData: set or unset a variable
	InConfig   = "config"   // InConfigData: change states, rules, schedules
	InTimer    = "timer"    // InTimerData: a durable timer's deadline came
	InSchedule = "schedule" // InScheduleData: a schedule ticked
	InData     = "data"     // InDataData: a data source's run: store its values, then fire
	InUpgrade  = "upgrade"  // InUpgradeData: check the inputs after this one at a newer level
	InIntent   = "intent"   // InIntentData: learn or forget an intent (intents.go)
)

// Output types: the last token of lumen.<light>.evt.out.<type>.
const (
	OutState    = "state"    // OutStateData: a rule fired or the state was set
	OutVar      = "var"      // OutVarData: a variable changed
	OutTimer    = "timer"    // OutTimerData: a timer was set, cancelled or fired
	OutSchedule = "schedule" // OutScheduleData: a schedule was set, deleted or ticked
	OutConfig   = "config"   // OutConfigData: a configuration change was applied
	OutIgnored  = "ignored"  // OutIgnoredData: the input changed nothing
	OutError    = "error"    // OutErrorData: the input was refused, or a rule failed
	OutRestart  = "restart"  // OutRestartData: an actor was restarted by its supervisor
	OutUpgrade  = "upgrade"  // OutUpgradeData: the light checks inputs at a newer level
	OutGap      = "gap"      // OutGapData: events the house stream will never have
	OutIntent   = "intent"   // OutIntentData: an intent was learned, forgotten or dropped
)

// InFiredData fires a transition: {"transition":"button_click"}.
//   - transition  the transition name.
//   - source      optional: who fired it (cli, fleet, button, agent …).
type InFiredData struct {
	Transition string `json:"transition"`
	Source     string `json:"source,omitempty"`
}

// InUpgradeData raises the level of checks a light applies to the inputs
// after it: {"level":1}. A light journals one when it starts with a lumen
// that checks more than the light's journal was written with; the inputs
// before it are applied as they were, so an old journal replays to the
// same light. Level 1 brings the limits (MaxName …). A level never goes
// down.
type InUpgradeData struct {
	Level int `json:"level"`
}

// OutGapData says that a Pi purged events of its journal the hub had not
// copied yet (its disk was nearly full while the hub was away): the
// house stream will never have the light's events between stream
// sequences From and To. It is not an input's output (cause 0).
type OutGapData struct {
	From   uint64 `json:"from"`
	To     uint64 `json:"to"`
	Reason string `json:"reason"`
}

// OutUpgradeData is the answer to an upgrade: {"from":0,"to":1}.
type OutUpgradeData struct {
	From int `json:"from"`
	To   int `json:"to"`
}

// InStateData moves the light to a state without a rule: {"name":"red"}.
type InStateData struct {
	Name   string `json:"name"`
	FadeMs *int   `json:"fade_ms,omitempty"`
}

// InVarData sets a variable ({"name":"n","value":3}) or removes it
// ({"name":"n","unset":true}). value is any JSON value.
type InVarData struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	Unset bool            `json:"unset,omitempty"`
}

// InDataData is one run of a data source, applied as a whole:
// {"source":"btc","vars":{"btc_price":67012.5}}.
//   - source  the data source (it must exist: the run of a deleted source
//     is refused with 404 and changes nothing).
//   - vars    the values the run stores. For each, by name, the light
//     keeps the variable's current value as <name>_prev (when it has
//     one), then sets it.
//
// Then the light fires the source's transition ("fires" of its
// definition), and records the input's time as the source's last run
// (last_runs of get and list_sources), from which its schedule resumes
// after a restart.
type InDataData struct {
	Source string                     `json:"source"`
	Vars   map[string]json.RawMessage `json:"vars,omitempty"`
}

// What apply does with the variables, the "vars_op" of InConfigData.
const (
	VarsKeep    = "keep"    // vars was not given: the variables stay
	VarsReplace = "replace" // the variables become vars, each change an output
)

// Config operations, the "op" of InConfigData.
const (
	OpApply          = "apply"           // replace everything: states, rules, vars, initial, schedules, tools
	OpCreateState    = "create_state"    // add or replace states
	OpDeleteState    = "delete_state"    // delete state Name
	OpAppendRules    = "append_rules"    // append Rules
	OpDeleteRules    = "delete_rules"    // delete IDs, or the rules Match selects
	OpCreateSchedule = "create_schedule" // add or replace Schedules
	OpDeleteSchedule = "delete_schedule" // delete schedule Name
)

// InConfigData is a configuration change; which fields count depends on op.
//   - op         one of the Op* constants.
//   - states     apply, create_state.
//   - rules      apply, append_rules.
//   - vars       apply: the variables after the change, as vars_op says.
//   - vars_op    apply: keep (vars was not given: the variables stay as
//     they are) or replace (the variables become vars, and every one
//     set, changed or unset is an output). Inputs journaled before
//     vars_op existed have none: their vars replace the variables
//     silently, as they did then, so that they replay the same.
//   - initial    apply: the configured initial state (default "off"). From
//     check level 2 it is the state the light takes when its current
//     state is removed; before, apply entered it (default: the current
//     state if it still exists, else "off").
//   - state      apply, from check level 2: the state to go to once the
//     configuration is applied (default: stay).
//   - schedules  apply, create_schedule.
//   - room, aliases  apply, set_names (keep_room, keep_aliases: the part
//     set_names leaves as it is).
//   - name       delete_state, delete_schedule, delete_tool, delete_source,
//     delete_function, delete_layer.
//   - ids        delete_rules by id.
//   - match      delete_rules by from/on/to.
//   - tools      apply, define_tool.
//   - sources    apply, create_source: source definitions (datasource.Def).
//   - functions  apply, define_function.
//   - layers     apply: the temporary layers (Layer).
//   - layer      append_rules: add the rules as a temporary layer.
type InConfigData struct {
	Op      string                     `json:"op"`
	States  []State                    `json:"states,omitempty"`
	Rules   []Rule                     `json:"rules,omitempty"`
	Vars    map[string]json.RawMessage `json:"vars,omitempty"`
	VarsOp  string                     `json:"vars_op,omitempty"`
	Initial string                     `json:"initial,omitempty"`
	OnState string                     `json:"on_state,omitempty"`
	PowerOn string                     `json:"power_on,omitempty"`
	// TransitionMs is the light's default fade, 0 to MaxFadeMs; nil: none.
	TransitionMs *int `json:"transition_ms,omitempty"`
	// Room and Aliases are the names people use for the light, as
	// given: the light keeps them normalised (NormalLightNames).
	Room    string   `json:"room,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// KeepRoom and KeepAliases, on set_names, keep the part its request
	// did not give (NamesRequest); without them it sets both, an empty
	// one cleared.
	KeepRoom    bool              `json:"keep_room,omitempty"`
	KeepAliases bool              `json:"keep_aliases,omitempty"`
	State       string            `json:"state,omitempty"`
	Schedules   []Schedule        `json:"schedules,omitempty"`
	Name        string            `json:"name,omitempty"`
	IDs         []string          `json:"ids,omitempty"`
	Match       *RuleMatch        `json:"match,omitempty"`
	Tools       []Tool            `json:"tools,omitempty"`
	Sources     []json.RawMessage `json:"sources,omitempty"`
	Functions   []Function        `json:"functions,omitempty"`
	Layers      []Layer           `json:"layers,omitempty"`
	Layer       *LayerSpec        `json:"layer,omitempty"`
	// Plugins are the operator's plugins that Sources fetch with, as the
	// daemon knew them when it journaled the input (create_source,
	// apply): the light's model does not know the plugins directory, and
	// replay must accept what was accepted, whatever the plugins are now.
	Plugins []string `json:"plugins,omitempty"`
	// RollbackTo, on the apply of a rollback, is the input whose
	// configuration it restores: the history reads "rollback to N".
	RollbackTo uint64 `json:"rollback_to,omitempty"`
}

// InTimerData says timer Name, due at Deadline, is due. late is true when
// the daemon was down at the deadline and fires it afterwards.
type InTimerData struct {
	Name     string    `json:"name"`
	Deadline time.Time `json:"deadline"`
	Late     bool      `json:"late,omitempty"`
}

// InScheduleData says schedule Name ticked for the time At.
type InScheduleData struct {
	Name string    `json:"name"`
	At   time.Time `json:"at"`
	Late bool      `json:"late,omitempty"`
}

// OutStateData reports a rule firing (self-transitions included) or a
// set_state.
//   - from, to     the states before and after.
//   - rule         the id of the rule that fired; null for set_state/apply.
//   - transition   the transition that fired it; empty for set_state.
//   - changed      from != to.
type OutStateData struct {
	From       string  `json:"from"`
	To         string  `json:"to"`
	Rule       *string `json:"rule"`
	Transition string  `json:"transition,omitempty"`
	Changed    bool    `json:"changed"`
	// FadeMs is the fade into the state, from the input's time: the
	// input's, the rule's, else the light's transition_ms; nil when none
	// of them says (the hardware's fade_ms then), 0 a cut.
	FadeMs *int `json:"fade_ms,omitempty"`
	// Color is the color set_color gave the state color, which To is;
	// omitted for any other change.
	Color *ColorSet `json:"color,omitempty"`
}

// OutVarData reports a variable change; value is absent when unset.
type OutVarData struct {
	Name  string          `json:"name"`
	Value json.RawMessage `json:"value,omitempty"`
	Unset bool            `json:"unset,omitempty"`
}

// Timer operations, the "op" of OutTimerData.
const (
	TimerSet    = "set"
	TimerCancel = "cancel"
	TimerFire   = "fire"
)

// OutTimerData reports a timer set (by startTimer), cancelled (by
// cancelTimer, or replaced) or fired (late when it fired after its
// deadline because the daemon was down).
type OutTimerData struct {
	Op       string    `json:"op"`
	Name     string    `json:"name"`
	Deadline time.Time `json:"deadline"`
	Late     bool      `json:"late,omitempty"`
}

// OutScheduleData reports a schedule set, deleted or ticked; next is the
// following tick.
type OutScheduleData struct {
	Op       string     `json:"op"`
	Schedule Schedule   `json:"schedule"`
	Next     *time.Time `json:"next,omitempty"`
	Late     bool       `json:"late,omitempty"`
}

// OutConfigData reports an applied configuration change.
//   - op      the InConfigData op.
//   - states  the states created or replaced (names).
//   - rules   the ids of the rules added (assigned ids included) or deleted.
//   - schedules the schedules created or deleted (names).
//   - tools   the custom tools defined, replaced or deleted (names).
//   - sources the data sources created, replaced or deleted (names).
//   - functions the custom functions defined, replaced or deleted (names).
//   - layers  the layer added (append_rules) or ended (delete_layer), or
//     the layers after an apply.
type OutConfigData struct {
	Op        string   `json:"op"`
	States    []string `json:"states,omitempty"`
	Rules     []string `json:"rules,omitempty"`
	Schedules []string `json:"schedules,omitempty"`
	Tools     []string `json:"tools,omitempty"`
	Sources   []string `json:"sources,omitempty"`
	Functions []string `json:"functions,omitempty"`
	Layers    []string `json:"layers,omitempty"`
}

// OutIgnoredData reports an input that changed nothing, and why.
type OutIgnoredData struct {
	Transition string `json:"transition,omitempty"`
	Reason     string `json:"reason"`
}

// Error kinds, the "kind" of OutErrorData.
const (
	ErrorRejected  = "rejected"  // the input was refused; nothing was applied
	ErrorTimeout   = "timeout"   // a rule's expression ran out of time; the rule was skipped
	ErrorException = "exception" // a rule's expression threw; the rule was skipped
	// ErrorRender: a state's color expression fails on the LED. The
	// hardware actor journals it once per state, with cause 0 (it is
	// not an output of an input, and replay does not recompute it).
	ErrorRender = "render"
	// ErrorSource: a data source's run failed; the light keeps the last
	// values. Journaled by the source actor with cause 0, like render.
	ErrorSource = "source"
)

// OutErrorData reports a refused input or a failed rule.
//   - code   400 bad input, 404 unknown thing, 409 conflict, 500 internal.
//   - error  a sentence that says what is wrong and what to do.
//   - kind   rejected, timeout or exception.
//   - rule   the failing rule's id, for timeout and exception.
type OutErrorData struct {
	Code  int    `json:"code"`
	Error string `json:"error"`
	Kind  string `json:"kind"`
	Rule  string `json:"rule,omitempty"`
	// Layer names the layer whose until condition failed (it is taken
	// as false).
	Layer string `json:"layer,omitempty"`
}

// OutRestartData reports that the supervisor restarted an actor.
type OutRestartData struct {
	Actor    string `json:"actor"`
	Reason   string `json:"reason"`
	Restarts int    `json:"restarts"`
}

// ButtonGesture reports whether an event is a gesture of the light's
// button (a fired input from the button), or an agent's approval the
// button decided (which a press makes instead of reaching the rules).
func ButtonGesture(event []byte) (gesture, decided bool) {
	var env Envelope
	if DecodeEnvelope(event, &env) != nil {
		return false, false
	}
	switch env.Type {
	case InFired:
		var d InFiredData
		return json.Unmarshal(env.Data, &d) == nil && d.Source == "button", false
	case OutAgent:
		var d OutAgentData
		return false, json.Unmarshal(env.Data, &d) == nil && d.Kind == AgentKindDecision && d.Who == "button"
	}
	return false, false
}
