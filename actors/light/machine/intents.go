package machine

import (
	"fmt"
	"maps"
	"slices"
	"unicode/utf8"

	"github.com/lumen-home/lumen/messages"
)

// Learned intents are phrases the agent taught the light, each doing one
// set_state or fire, or one everyday-control verb (power, toggle,
// set_brightness, set_color; messages.IntentBody). They are the light's state, not its configuration:
// only the intent input changes them, apply and export do not carry them,
// and a configuration change that deletes an intent's state or transition
// drops it, with an intent output that says why. The phrase is taken as
// given (the service normalizes it before journaling), so that replay
// never depends on how a later lumen reads words.

func (c *core) intentInput(in *messages.InIntentData) Result {
	switch {
	case in.Phrase == "":
		return c.reject(400, "intent: phrase is empty; give the words of the request")
	case len(in.Phrase) > messages.MaxPhrase:
		return c.reject(400, "intent: the phrase is %d bytes long; a phrase is at most %d bytes", len(in.Phrase), messages.MaxPhrase)
	case !utf8.ValidString(in.Phrase):
		return c.reject(400, "intent: the phrase is not valid UTF-8")
	}
	if in.Delete {
		if in.Verb != "" || in.Arg != "" {
			return c.reject(400, "intent %q: give delete:true, or verb and arg to learn it, not both", in.Phrase)
		}
		old, ok := c.intents[in.Phrase]
		if !ok {
			return c.reject(404, "no learned intent %q; the intents verb (lumen intents) lists them", in.Phrase)
		}
		delete(c.intents, in.Phrase)
		return c.intentOutput(messages.OutIntentData{Phrase: old.Phrase, Verb: old.Verb, Arg: old.Arg, Delete: true})
	}
	if in.Arg == "" {
		return c.reject(400, "intent %q: arg is empty; give the state (set_state) or the transition (fire)", in.Phrase)
	}
	switch in.Verb {
	case messages.VerbSetState:
		if err := messages.CheckName("state", in.Arg); err != nil {
			return c.reject(400, "intent %q: %v", in.Phrase, err)
		}
		if c.stateIdx[in.Arg] == nil {
			return c.reject(404, "intent %q: state %q does not exist; an intent goes to a state the light has", in.Phrase, in.Arg)
		}
	case messages.VerbFire:
		if err := messages.CheckName("transition", in.Arg); err != nil {
			return c.reject(400, "intent %q: %v", in.Phrase, err)
		}
		if !c.usesTransition(in.Arg) {
			return c.reject(404, "intent %q: no rule, source or schedule uses transition %q; an intent fires a transition the light reacts to", in.Phrase, in.Arg)
		}
	default:
		// An everyday-control verb, its arguments in Arg.
		if _, err := messages.IntentBody(in.Verb, in.Arg); err != nil {
			return c.reject(400, "intent %q: %v", in.Phrase, err)
		}
	}
	if _, ok := c.intents[in.Phrase]; !ok && len(c.intents) >= messages.MaxIntents {
		return c.reject(409, "intent %q: the light keeps at most %d learned intents; delete some first (lumen intents rm)", in.Phrase, messages.MaxIntents)
	}
	c.intents[in.Phrase] = messages.Intent{Phrase: in.Phrase, Verb: in.Verb, Arg: in.Arg, Learned: c.now}
	return c.intentOutput(messages.OutIntentData{Phrase: in.Phrase, Verb: in.Verb, Arg: in.Arg})
}

func (c *core) intentOutput(d messages.OutIntentData) Result {
	return Result{Outputs: []Output{{Type: messages.OutIntent, Data: d}}, State: c.cur}
}

// usesTransition reports whether a rule (enabled or not), a data source
// or a schedule of the configuration uses transition t.
func (c *core) usesTransition(t string) bool {
	return slices.ContainsFunc(c.rules, func(r *rule) bool { return r.On == t }) ||
		slices.ContainsFunc(c.sources, func(s *sourceDef) bool { return s.def.Fires == t }) ||
		slices.ContainsFunc(c.scheds, func(s *schedule) bool { return s.Fires == t })
}

// dropIntents appends to out the drop of every intent the configuration
// no longer serves, in phrase order: its state is gone, or its transition
// was deleted (deleted, by delete_transition) or is used by nothing any
// more.
func (c *core) dropIntents(out []Output, deleted string) []Output {
	if len(c.intents) == 0 {
		return out
	}
	for _, p := range slices.Sorted(maps.Keys(c.intents)) {
		in := c.intents[p]
		reason := ""
		switch {
		case in.Verb == messages.VerbSetState && c.stateIdx[in.Arg] == nil:
			reason = fmt.Sprintf("state %s was deleted", in.Arg)
		case in.Verb == messages.VerbFire && in.Arg == deleted:
			reason = fmt.Sprintf("custom transition %s was deleted", in.Arg)
		case in.Verb == messages.VerbFire && !c.usesTransition(in.Arg):
			reason = fmt.Sprintf("no rule, source or schedule uses transition %s any more", in.Arg)
		default:
			continue
		}
		delete(c.intents, p)
		out = append(out, Output{Type: messages.OutIntent, Data: messages.OutIntentData{Phrase: p, Verb: in.Verb, Arg: in.Arg, Delete: true, Reason: reason}})
	}
	return out
}

// intentList returns the learned intents by phrase, nil when none.
func (c *core) intentList() []messages.Intent {
	if len(c.intents) == 0 {
		return nil
	}
	out := make([]messages.Intent, 0, len(c.intents))
	for _, p := range slices.Sorted(maps.Keys(c.intents)) {
		out = append(out, c.intents[p])
	}
	return out
}

// Intents returns the learned intents by phrase, never nil.
func (m *Machine) Intents() []messages.Intent {
	if out := m.c.intentList(); out != nil {
		return out
	}
	return []messages.Intent{}
}
