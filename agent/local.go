package agent

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/agent/phrase"
	"github.com/lumen-home/lumen/messages"
)

// Direct commands: a request that only names one of the light's states
// ("red", "make it blue please", "turn it off") or a click ("next",
// "click") is carried out without a model. The matcher is conservative:
// anything it is unsure about goes to the model.

// LocalAction is what a direct command does: set_state Arg, or fire Arg.
type LocalAction struct {
	Verb string // messages.VerbSetState or messages.VerbFire
	Arg  string // the state, or the transition
}

// clickWords fire the light's click.
var clickWords = map[string]string{"next": "button_click", "click": "button_click", "press": "button_click"}

// MatchLocal reports whether text is a direct command for a light with
// these states, and which: one state named (in one word, or several
// joined by _ or -: "party mode" is party_mode), or a click, among
// filler words only.
func MatchLocal(text string, states []string) (LocalAction, bool) {
	words := phrase.Words(text)
	if len(words) == 0 || len(words) > 8 {
		return LocalAction{}, false
	}
	for _, w := range words {
		if phrase.NeedsModel(w) {
			return LocalAction{}, false
		}
	}
	byName := make(map[string]string, len(states))
	for _, s := range states {
		byName[strings.ToLower(s)] = s
	}
	// Only fillers around the window of words i..j.
	fillersBut := func(i, j int) bool {
		for k, w := range words {
			if (k < i || k >= j) && !phrase.Filler(w) {
				return false
			}
		}
		return true
	}
	for n := min(3, len(words)); n >= 1; n-- {
		for i := 0; i+n <= len(words); i++ {
			if !fillersBut(i, i+n) {
				continue
			}
			for _, sep := range []string{"_", "-", ""} {
				if s, ok := byName[strings.Join(words[i:i+n], sep)]; ok {
					return LocalAction{Verb: messages.VerbSetState, Arg: s}, true
				}
			}
		}
	}
	for i, w := range words {
		if tr, ok := clickWords[w]; ok && fillersBut(i, i+1) {
			return LocalAction{Verb: messages.VerbFire, Arg: tr}, true
		}
	}
	return LocalAction{}, false
}

// localRead is what a request is without a model: the call a direct
// command makes, or the name of a light there is not, with the world it
// was read in (nil when the light could not be read).
type localRead struct {
	call    *messages.AgentToolCall
	unknown string
	world   *World
}

// readLocal reads text as a direct command: an everyday command
// (World.Understand), else one of the light's states or a click named
// alone (MatchLocal), else a learned intent's phrase (MatchLearned).
func (t *Tools) readLocal(ctx context.Context, text string) localRead {
	d, err := t.directory(ctx)
	if err != nil {
		return localRead{}
	}
	w := t.world(ctx, d)
	out := localRead{world: w}
	r := w.Understand(text)
	switch r.Outcome {
	case Understood:
		args := r.Command.Args()
		if target := r.Command.Target.Arg(w.Self); target != "" {
			args[lightArg] = target
		}
		args[SpeakDirectly] = true
		b, _ := json.Marshal(args)
		out.call = &messages.AgentToolCall{ID: localCall + nuid.Next(), Name: r.Command.Tool, Args: string(b)}
		return out
	case UnknownName:
		out.unknown = r.Unknown
		return out
	}
	act, ok := MatchLocal(text, d.states)
	if !ok {
		act, ok = MatchLearned(text, d.intents)
	}
	if !ok {
		return out
	}
	if call, ok := actionCall(act); ok {
		out.call = &call
	}
	return out
}

// actionCall is the call of a direct command's action: the tool that sends
// its verb, with the arguments its Arg says (messages.IntentBody).
func actionCall(act LocalAction) (messages.AgentToolCall, bool) {
	body, err := messages.IntentBody(act.Verb, act.Arg)
	if err != nil {
		return messages.AgentToolCall{}, false
	}
	var args map[string]any
	b, _ := json.Marshal(body)
	if json.Unmarshal(b, &args) != nil || args == nil {
		args = map[string]any{}
	}
	args[SpeakDirectly] = true
	b, _ = json.Marshal(args)
	for _, row := range toolTable() {
		if row.verb == act.Verb {
			return messages.AgentToolCall{ID: localCall + nuid.Next(), Name: row.Name, Args: string(b)}, true
		}
	}
	return messages.AgentToolCall{}, false
}
