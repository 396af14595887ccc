package messages

import (
	"encoding/json"
	"fmt"
	"time"
)

// Command verbs of lumen.<light>.cmd.<verb>.
const (
	VerbFire           = "fire"            // FireRequest
	VerbSetState       = "set_state"       // SetStateRequest
	VerbGet            = "get"             // {} → GetReply
	VerbApply          = "apply"           // ApplyRequest
	VerbHistory        = "history"         // {} → HistoryReply
	VerbRollback       = "rollback"        // RollbackRequest → the apply's reply
	VerbWhy            = "why"             // WhyRequest → WhyReply
	VerbWhatIf         = "whatif"          // WhatIfRequest → WhatIfReply
	VerbCreateState    = "create_state"    // a State, or {"states":[…]}
	VerbDeleteState    = "delete_state"    // NameRequest
	VerbAppendRules    = "append_rules"    // RulesRequest
	VerbDeleteRules    = "delete_rules"    // DeleteRulesRequest
	VerbSetVar         = "set_var"         // InVarData
	VerbCreateSchedule = "create_schedule" // a Schedule
	VerbDeleteSchedule = "delete_schedule" // NameRequest
	VerbEnableRules    = "enable_rules"    // EnableRulesRequest (or IDsRequest)

	// Verbs of the hardware actor, answered by the light's device.
	VerbButton = "button" // ButtonRequest: inject a raw edge (simulated button only)
	VerbLED    = "led"    // {} → LEDReply
)

// UnknownVerb is the 404's sentence for a verb the subjects under
// prefix do not take; known lists those they do.
func UnknownVerb(verb, prefix, known string) string {
	return fmt.Sprintf("unknown command %s; %s takes %s", Clip(verb), prefix, known)
}

// Config operations of enable_rules and disable_rules (InConfigData.Op):
// each takes the rules' ids, so that the input says what it does without
// a field of its own.
const (
	OpEnableRules  = "enable_rules"  // enable the rules IDs
	OpDisableRules = "disable_rules" // disable the rules IDs
)

// Raw button edges of ButtonRequest.
const (
	EdgeDown = "down"
	EdgeUp   = "up"
)

// ButtonRequest is the body of button: {"edge":"down"} or {"edge":"up"}.
// The edge goes through debounce and gesture detection like a real one.
type ButtonRequest struct {
	Edge string `json:"edge"`
	// From "web": an edge of the page's virtual button, which has a
	// gesture detector of its own, on any hardware (real or simulated);
	// its gestures are journaled with source web.
	From string `json:"from,omitempty"`
}

// FromWeb marks an edge of the page's virtual button.
const FromWeb = "web"

// ButtonReply answers button once the edge is taken; the gestures it
// makes are decided later (a click waits for the double-click window) and
// journaled as fired inputs with source "button".
type ButtonReply struct {
	OK   bool   `json:"ok"`
	Edge string `json:"edge"`
	// HoldMs and DoubleMs are the button's gesture timings: how long a
	// press lasts to be a hold, and the double-click window (added after
	// edge: a virtual button holds for as long as a hold takes).
	HoldMs   int64 `json:"hold_ms"`
	DoubleMs int64 `json:"double_ms"`
}

// The simulated button's refusals (409) of an edge it is at already.
// lumen press answers ButtonIsDown with how to release the button.
const (
	ButtonIsDown = `the simulated button is down already (a press was never released); release it first: {"edge":"up"}`
	ButtonIsUp   = `the simulated button is up already: there is nothing to release`
)

// LEDEvent is published on lumen.<light>.led (core NATS, not journaled)
// each time the LED starts showing a state: what it shows, from which
// state, and the input that caused it.
type LEDEvent struct {
	State  string    `json:"state"`
	Cause  uint64    `json:"cause"`
	Time   time.Time `json:"time"`
	Pixels []Pixel   `json:"pixels"`
	Raw    []Pixel   `json:"raw"`
	// Brightness is the light's dimmer, 1–100 percent: Raw is the
	// state's color times it.
	Brightness int `json:"brightness"`
}

// Pixel is one LED pixel, 0–255 per channel.
type Pixel struct {
	R uint8 `json:"r"`
	G uint8 `json:"g"`
	B uint8 `json:"b"`
}

// Hex is the pixel as a person writes a color: #rrggbb.
func (p Pixel) Hex() string { return fmt.Sprintf("#%02x%02x%02x", p.R, p.G, p.B) }

// LEDReply answers led: the pixels the LED shows now (after gamma and the
// brightness cap), the colors they come from (before), and whether a
// click waits to see if it is a double click.
type LEDReply struct {
	OK     bool    `json:"ok"`
	State  string  `json:"state"`
	Pixels []Pixel `json:"pixels"`
	Raw    []Pixel `json:"raw"`
	// Brightness is the light's dimmer, 1–100 percent: Raw is the
	// state's color times it.
	Brightness int `json:"brightness"`
	// ClickWaits says whether a click now waits for the double-click
	// window: only when a rule on button_double_click matches the state.
	ClickWaits bool `json:"click_waits"`
}

// HistoryReply answers history: every change of the light's
// configuration, oldest first.
type HistoryReply struct {
	OK      bool           `json:"ok"`
	Light   string         `json:"light"`
	Changes []ConfigChange `json:"changes"`
}

// ConfigChange is one input that changed the configuration: its
// sequence and time, what changed, and that in one line (+ rule r7,
// ~ state red, - source weather).
type ConfigChange struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	By      string    `json:"by"` // who made it (Who*), unknown for older inputs
	Summary string    `json:"summary"`
	Changes Changes   `json:"changes"`
}

// RollbackRequest is the body of rollback: {"seq":N} makes the
// configuration what it was right after input N, as one new input.
type RollbackRequest struct {
	Seq uint64 `json:"seq"`
}

// GetRequest is the body of get: {} for the light as it is now, or the
// light as it was, replayed from the journal: right after the input with
// sequence seq (an output's seq names its input), or at a time.
type GetRequest struct {
	Seq uint64     `json:"seq,omitempty"`
	At  *time.Time `json:"at,omitempty"`
}

// FireRequest is the body of fire: {"transition":"button_click"}.
type FireRequest struct {
	Transition string `json:"transition"`
}

// SetStateRequest is the body of set_state: {"name":"red"}.
type SetStateRequest struct {
	Name   string `json:"name"`
	FadeMs *int   `json:"fade_ms,omitempty"`
}

// NameRequest is the body of delete_state and delete_schedule.
type NameRequest struct {
	Name string `json:"name"`
}

// ApplyRequest replaces the light's whole configuration, validated as a
// whole: {"states":[…],"rules":[…],"vars":{…},"initial":"off"}. Initial
// is the state the light takes when it has none to keep (its current
// state is removed); applying never moves the light otherwise, unless
// State names a state to go to.
type ApplyRequest struct {
	States  []State                    `json:"states"`
	Rules   []Rule                     `json:"rules"`
	Vars    map[string]json.RawMessage `json:"vars,omitempty"`
	Initial string                     `json:"initial,omitempty"`
	// OnState is the state power on goes to when the light has no state
	// from before it went off ("" or a deleted state: its first state).
	OnState string `json:"on_state,omitempty"`
	// PowerOn is what the light shows when the daemon starts after an
	// unclean stop (a power cut): "restore" (or ""), the state it was in;
	// "off"; or "state NAME".
	PowerOn string `json:"power_on,omitempty"`
	// TransitionMs is the light's default fade into a state, in ms (0 to
	// MaxFadeMs): what a change that names no fade_ms takes.
	TransitionMs *int `json:"transition_ms,omitempty"`
	// Room and Aliases are the names people use for the light (its
	// room, its other names), read by the local understanding of
	// everyday commands: 1 to MaxLightName letters, digits, spaces, '-',
	// '_' and apostrophes each, at most MaxAliases aliases, kept
	// lower-case with single spaces (NormalLightNames).
	Room    string   `json:"room,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// State, when given, is the state the light goes to once the
	// configuration is applied (lumen apply --state); no part of the
	// configuration, so export never writes it.
	State     string            `json:"state,omitempty"`
	Schedules []Schedule        `json:"schedules,omitempty"`
	Tools     []Tool            `json:"tools,omitempty"`
	Sources   []json.RawMessage `json:"sources,omitempty"`
	Functions []Function        `json:"functions,omitempty"`
	// Layers are the temporary layers, as get shows them (the newest
	// first); apply without layers ends every layer (without restoring
	// a state).
	Layers []Layer `json:"layers,omitempty"`
	// ConfirmEmpty says that a configuration with no states and no
	// rules really means to empty the light; without it apply refuses
	// one (an empty file is more often a mistake).
	ConfirmEmpty bool `json:"confirm_empty,omitempty"`
	// DryRun asks the light to validate the configuration exactly as
	// apply would and to say what it would change (DryRunReply), without
	// journaling anything.
	DryRun bool `json:"dry_run,omitempty"`
	// IfSeq, when given, applies the configuration only if the light's
	// last input is still that one (get's seq): a read, changed, then
	// applied configuration never undoes a change made meanwhile (409).
	// No part of the input journaled.
	IfSeq uint64 `json:"if_seq,omitempty"`
}

// DryRunReply answers an apply with "dry_run":true: the configuration
// would be taken, and this is what it would change. A configuration the
// light would refuse gets the error reply apply would get.
type DryRunReply struct {
	OK      bool    `json:"ok"`
	DryRun  bool    `json:"dry_run"`
	Changes Changes `json:"changes"`
}

// StatesRequest is the list form of create_state.
type StatesRequest struct {
	States []State `json:"states"`
}

// RulesRequest is the body of append_rules: {"rules":[…]}, and
// {"rules":[…],"layer":{…}} to add them as one temporary layer.
type RulesRequest struct {
	Rules []Rule     `json:"rules"`
	Layer *LayerSpec `json:"layer,omitempty"`
}

// DeleteRulesRequest is the body of delete_rules: {"ids":["r1"]} or any of
// {"from","on","to"}.
type DeleteRulesRequest struct {
	IDs  []string `json:"ids,omitempty"`
	From string   `json:"from,omitempty"`
	On   string   `json:"on,omitempty"`
	To   string   `json:"to,omitempty"`
}

// EnableRulesRequest is the body of enable_rules: {"ids":["r3"]}, or
// {"ids":["r3"],"enabled":false} as disable_rules. A rule disabled stays
// in the configuration (and keeps its id) but is never tried.
type EnableRulesRequest struct {
	IDs     []string `json:"ids"`
	Enabled *bool    `json:"enabled"`
}

// Reply answers a mutation once the light has applied it.
//   - ok       true.
//   - seq      the input's stream sequence.
//   - state    the light's state after the input.
//   - changed  whether the state name changed.
//   - rule     the rule that fired, or null.
//   - outputs  every output event the input caused.
//   - changes  apply and set_names only: what the configuration gained,
//     changed and lost (DiffConfig).
type Reply struct {
	OK      bool       `json:"ok"`
	Seq     uint64     `json:"seq"`
	State   string     `json:"state"`
	Changed bool       `json:"changed"`
	Rule    *string    `json:"rule"`
	Outputs []Envelope `json:"outputs"`
	Changes *Changes   `json:"changes,omitempty"`
}

// GetReply answers get with the light's whole current model.
type GetReply struct {
	OK      bool   `json:"ok"`
	Light   string `json:"light"`
	State   string `json:"state"`
	Initial string `json:"initial"`
	// OnState is the state power on goes to when the light has no state
	// from before it went off; omitted when not set.
	OnState string `json:"on_state,omitempty"`
	// PowerOn is what the light shows after an unclean stop ("off",
	// "state NAME"); omitted for restore, the default.
	PowerOn string `json:"power_on,omitempty"`
	// TransitionMs is the light's default fade; omitted when not set.
	TransitionMs *int `json:"transition_ms,omitempty"`
	// Room and Aliases are the names people use for the light, as it
	// keeps them (lower-case, single spaces); omitted when not set.
	Room    string   `json:"room,omitempty"`
	Aliases []string `json:"aliases,omitempty"`
	// Fade is the last fade into the state (or the brightness), which
	// may be over: the LED computes where it is from the clock. Omitted
	// when there is none.
	Fade *Fade `json:"fade,omitempty"`
	// LastOn is the state the light was in before it last went off,
	// where power on returns; omitted when it has never been on.
	LastOn string `json:"last_on,omitempty"`
	// Brightness is the light's dimmer, 1–100 percent.
	Brightness int                        `json:"brightness"`
	States     []State                    `json:"states"`
	Rules      []Rule                     `json:"rules"`
	Vars       map[string]json.RawMessage `json:"vars"`
	Timers     []Timer                    `json:"timers"`
	Schedules  []Schedule                 `json:"schedules"`
	Tools      []Tool                     `json:"tools"`
	Sources    []json.RawMessage          `json:"sources"`
	Functions  []Function                 `json:"functions"`
	// Layers: the live temporary layers, in the order their rules are
	// tried, the newest first, before Rules (the light's own rules);
	// omitted when there are none.
	Layers []Layer `json:"layers,omitempty"`
	// LastRuns: when each data source last stored a run (the time of its
	// latest data input); omitted when none has.
	LastRuns map[string]time.Time `json:"last_runs,omitempty"`
	// Intents: the learned intents, by phrase; omitted when there are
	// none. They are no part of the configuration (Config).
	Intents []Intent `json:"intents,omitempty"`
	Seq     uint64   `json:"seq"`
}

// ErrorReply is the body of every error reply; the same code and sentence
// are in the Nats-Service-Error-Code and Nats-Service-Error headers.
type ErrorReply struct {
	OK    bool   `json:"ok"`
	Code  int    `json:"code"`
	Error string `json:"error"`
}
