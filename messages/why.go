package messages

import (
	"encoding/json"
	"time"
)

// WhyRequest is the body of why: {} explains the light's current state,
// {"seq":N} the event with sequence N (an input, or an output: then its
// input).
type WhyRequest struct {
	Seq uint64 `json:"seq,omitempty"`
}

// WhyReply answers why: what the light did at one input and why,
// recomputed by replaying the journal.
type WhyReply struct {
	OK    bool   `json:"ok,omitempty"`
	Light string `json:"light"`
	// State is the state the input left the light in; Seq the event
	// explained (the current state's state output when none was named).
	State string `json:"state"`
	Seq   uint64 `json:"seq"`
	// Summary says it in one sentence.
	Summary string   `json:"summary"`
	Input   WhyInput `json:"input"`
	// Rule is the rule that fired, with its condition's text and value
	// and the variables it read; null when none did (a set_state, a
	// configuration, a transition no rule took).
	Rule      *Rule         `json:"rule"`
	Condition *WhyCondition `json:"condition"`
	Reads     []WhyRead     `json:"reads"`
	// Skipped are the rules of the transition that did not fire, in
	// the order they were tried, then those that were not candidates.
	Skipped []WhySkip `json:"skipped"`
	// Notes are what else explains the outcome: a data source that
	// failed since it last set a variable read, a restart.
	Notes []string `json:"notes,omitempty"`
	// Previous explains the state before: the last input before this one
	// that entered a state (one level; its own previous is left out).
	Previous *WhyReply `json:"previous,omitempty"`
}

// WhyInput is the input explained.
type WhyInput struct {
	Seq  uint64          `json:"seq"`
	Time time.Time       `json:"time"`
	Type string          `json:"type"`
	Data json.RawMessage `json:"data"`
	By   string          `json:"by"` // Who*, unknown for older inputs
}

// WhyCondition is a rule's condition and the value it had: true for a
// rule without one.
type WhyCondition struct {
	Text  string `json:"text"`
	Value bool   `json:"value"`
}

// WhyRead is a variable a rule read, its value and the input that last
// set it (null: never set, or before the journal's start). A variable
// that did not exist reads as value null and undefined true.
type WhyRead struct {
	Name      string          `json:"name"`
	Value     json.RawMessage `json:"value"`
	Undefined bool            `json:"undefined,omitempty"`
	SetBy     *WhySetBy       `json:"set_by"`
}

// WhySetBy is the input that set a variable: its sequence (that of the
// set_var or data reply, not of the var output), type and who.
type WhySetBy struct {
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	Type string    `json:"type"`
	By   string    `json:"by"`
	// Source is the data source, for a data input.
	Source string `json:"source,omitempty"`
}

// WhySkip is a rule that did not fire, and why; Reads what its
// condition read, when it was tried.
type WhySkip struct {
	ID    string    `json:"id"`
	Why   string    `json:"why"`
	Reads []WhyRead `json:"reads,omitempty"`
}

// WhatIfRequest is the body of whatif: a proposed configuration (as
// apply takes it; its vars and initial are ignored) replayed against the
// recorded inputs from input from_seq on, or of the last since (a Go
// duration; default 24h).
type WhatIfRequest struct {
	Config  json.RawMessage `json:"config"`
	Since   string          `json:"since,omitempty"`
	FromSeq uint64          `json:"from_seq,omitempty"`
}

// WhatIfReply answers whatif: how many recorded inputs were replayed
// against the proposed configuration, how many left the light in another
// state than it was, and the first of those.
type WhatIfReply struct {
	OK          bool         `json:"ok,omitempty"`
	Light       string       `json:"light"`
	FromSeq     uint64       `json:"from_seq"` // the first input of the window
	Replayed    int          `json:"replayed"`
	Differ      int          `json:"differ"`
	Differences []Difference `json:"differences"`
}

// Difference is one input after which the proposed configuration leaves
// the light in another state than the recorded one.
type Difference struct {
	Seq      uint64    `json:"seq"`
	Time     time.Time `json:"time"`
	Input    string    `json:"input"` // type, data and who, in a line
	Recorded string    `json:"recorded"`
	Proposed string    `json:"proposed"`
}
