package agent

import (
	"strings"

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
