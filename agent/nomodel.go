package agent

import (
	"fmt"
	"slices"
)

// What a light says, with no model configured, to a request its local
// understanding does not take: what works without a model and, when
// the request is one a command of the CLI does, that command.

// WithoutModel is the refusal of text said to w.Self with no model: how
// to configure one (Unconfigured), and the command that does it when
// there is one ("next 3 clicks red" is a temporary rule), else what
// works without a model.
func WithoutModel(text string, w *World) string {
	// One line (a refusal travels in a header too): the command last, to
	// be copied whole.
	if cmd := commandFor(text, w); cmd != "" {
		return Unconfigured + " Without a model I cannot do that myself, but this command does it: " + cmd
	}
	return "Without a model I understand everyday commands only: on, off, toggle, brighter, dimmer, 50%, a color (purple, warm white, #ff8800, 2700 kelvin), a state by its name, next; said of this light, another light, a room, a group or all the lights, with \"slowly\" or \"over 10 minutes\" for a fade. " + Unconfigured
}

// NoSuchLight is the answer to an everyday command about a name no light,
// room or group of w answers to: never guessed, it lists what there is.
func NoSuchLight(name string, w *World) string {
	return fmt.Sprintf("I know no light, room or group called %q: %s.", name, w.Known())
}

// commandFor is the lumen command that does text, for the requests the
// CLI does in one line: the next N clicks to a state (a layer that ends
// after N firings).
func commandFor(text string, w *World) string {
	words := splitWords(text)
	light := ""
	if w.Self != "" {
		light = " --light " + w.Self
	}
	state := ""
	states := w.statesOf(nil)
	for _, x := range words {
		if s, ok := states[x]; ok && state == "" {
			state = s
		}
	}
	if state == "" {
		return ""
	}
	// "the next 3 clicks red", "red for the next three presses"
	if i := slices.IndexFunc(words, func(x string) bool {
		return x == "clicks" || x == "presses" || x == "click" || x == "press" || x == "taps"
	}); i > 0 {
		if n, ok := number(words[i-1]); ok && n > 0 && n <= 1000 {
			return fmt.Sprintf("lumen rule add '*' button_click %s --fires %d%s", state, n, light)
		}
	}
	return ""
}
