package machine

import (
	"encoding/json"
	"fmt"
)

// Trace is how the machine decided one input, for lumen why: the rules of
// its transition that were tried and what each read, and those that were
// not. Only ApplyTraced records one, so the live path pays a nil check.
type Trace struct {
	// State is the state the input found, Transition the transition it
	// fired ("" for an input that fires none: set_state, var, config).
	State, Transition string
	// Tried are the candidate rules, in trial order, up to the one that
	// fired.
	Tried []Try
	// Passed are the rules of the transition that were not tried: the
	// candidates after the one that fired, then the disabled ones and
	// those from another state.
	Passed []Try
}

// Outcomes of a rule in a Trace.
const (
	OutcomeFired          = "fired"
	OutcomeFalse          = "condition false"
	OutcomeConditionError = "condition failed"
	OutcomeActionError    = "action failed"
	OutcomeDisabled       = "disabled"
	OutcomeOtherState     = "from does not match"
	OutcomeNotTried       = "not tried"
)

// Try is one rule in a Trace.
type Try struct {
	Rule      string
	Outcome   string // an Outcome* constant
	Why       string // the outcome in a sentence
	Condition string // the condition's text, "" when it has none
	// Value is the condition's value: true for none, nil when it was
	// not evaluated or failed.
	Value *bool
	Reads []Read // the variables its condition and action read, first read of each
}

// Read is one variable read by getData (or a condition's fast path).
type Read struct {
	Name   string
	Value  json.RawMessage // nil: undefined
	Action bool            // read by the action, not the condition
}

// ApplyTraced is Apply, recording how the input was decided.
func (m *Machine) ApplyTraced(ev Event, inputType string, payload []byte) (Result, *Trace) {
	t := &Trace{State: m.c.cur}
	m.c.trace = t
	defer func() { m.c.trace = nil }()
	return m.Apply(ev, inputType, payload), t
}

// tryRule opens the trace of candidate r.
func (c *core) tryRule(r *rule) {
	c.trace.Tried = append(c.trace.Tried, Try{Rule: r.ID, Condition: r.Condition})
}

// tried closes the last candidate's trace with its outcome.
func (c *core) tried(outcome, why string, value *bool) {
	t := &c.trace.Tried[len(c.trace.Tried)-1]
	t.Outcome, t.Why, t.Value = outcome, why, value
}

// read records a variable read in the open candidate's trace.
func (c *core) read(name string, v *value) {
	if c.trace == nil || len(c.trace.Tried) == 0 {
		return
	}
	t := &c.trace.Tried[len(c.trace.Tried)-1]
	for _, r := range t.Reads {
		if r.Name == name {
			return
		}
	}
	rd := Read{Name: name, Action: c.inAction}
	if v != nil {
		rd.Value = v.raw
	}
	t.Reads = append(t.Reads, rd)
}

// traceNotTried records the candidates after the one that fired.
func (c *core) traceNotTried(fired *rule, rest []*rule) {
	var not []Try
	for _, r := range rest {
		why := fmt.Sprintf("not tried: %s fired first", fired.ID)
		if r.Priority < fired.Priority {
			why = fmt.Sprintf("not tried: %s has a higher priority (%d > %d) and fired first", fired.ID, fired.Priority, r.Priority)
		}
		not = append(not, Try{Rule: r.ID, Outcome: OutcomeNotTried, Condition: r.Condition, Why: why})
	}
	c.trace.Passed = append(not, c.trace.Passed...)
}

// tracePassed records the rules of transition that were not candidates
// in state.
func (c *core) tracePassed(transition, state string) {
	c.trace.Transition = transition
	for _, r := range c.rules {
		if r.On != transition {
			continue
		}
		switch {
		case !r.Enabled:
			c.trace.Passed = append(c.trace.Passed, Try{Rule: r.ID, Outcome: OutcomeDisabled, Condition: r.Condition,
				Why: "it is disabled"})
		case !r.matches(state):
			c.trace.Passed = append(c.trace.Passed, Try{Rule: r.ID, Outcome: OutcomeOtherState, Condition: r.Condition,
				Why: fmt.Sprintf("it is from %s; the light was in %s", r.From, state)})
		}
	}
}
