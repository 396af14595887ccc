package messages

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Learned intents (issue 18): when the agent's model resolves a request
// into one direct action (one set_state or fire, nothing else changed),
// the agent teaches the light the request's phrase and that action, so
// the same request runs next time with no model call. The light keeps
// them as part of its state (journaled as intent inputs, folded, kept in
// snapshots), not of its configuration: export, apply, history and
// rollback do not carry them. An intent whose state or transition is
// deleted is dropped.
const (
	VerbIntents      = "intents"       // {} → IntentsReply
	VerbLearnIntent  = "learn_intent"  // LearnIntentRequest → mutation reply
	VerbDeleteIntent = "delete_intent" // DeleteIntentRequest → mutation reply
)

// Intent is a learned intent: Phrase (a request's normal form: lowercase
// words without the filler words, see agent/phrase) does Verb
// (VerbSetState or VerbFire) with Arg (the state, or the transition).
// Learned is the time of the input that taught it.
type Intent struct {
	Phrase  string    `json:"phrase"`
	Verb    string    `json:"verb"`
	Arg     string    `json:"arg"`
	Learned time.Time `json:"learned"`
}

// InIntentData learns an intent, {"phrase":"i'm going read book",
// "verb":"set_state","arg":"reading"} (replacing one of the same
// phrase), or forgets one, {"phrase":"…","delete":true}. The phrase is
// taken as given: learn_intent and delete_intent put it in its normal
// form first.
type InIntentData struct {
	Phrase string `json:"phrase"`
	Verb   string `json:"verb,omitempty"`
	Arg    string `json:"arg,omitempty"`
	Delete bool   `json:"delete,omitempty"`
}

// OutIntentData reports an intent learned, or forgotten (delete): by a
// delete_intent, or dropped by the light because the configuration change
// it follows deleted its state or transition (reason says which).
type OutIntentData struct {
	Phrase string `json:"phrase"`
	Verb   string `json:"verb"`
	Arg    string `json:"arg"`
	Delete bool   `json:"delete,omitempty"`
	Reason string `json:"reason,omitempty"`
}

// LearnIntentRequest is the body of learn_intent.
type LearnIntentRequest struct {
	Phrase string `json:"phrase"`
	Verb   string `json:"verb"`
	Arg    string `json:"arg"`
}

// DeleteIntentRequest is the body of delete_intent.
type DeleteIntentRequest struct {
	Phrase string `json:"phrase"`
}

// IntentsReply answers intents: the light's learned intents by phrase.
type IntentsReply struct {
	OK      bool     `json:"ok"`
	Light   string   `json:"light"`
	Intents []Intent `json:"intents"`
}

// An intent's action beside set_state and fire: an everyday-control verb
// whose arguments Arg says in a word — power "on" or "off", toggle
// "toggle", set_brightness "50" (percent) or "+10"/"-10" (a step),
// set_color a color name, "#rrggbb" or "2700K" (kelvin).

// IntentVerbs are the verbs an intent may do.
var intentVerbs = []string{VerbFire, VerbPower, VerbSetBrightness, VerbSetColor, VerbSetState, VerbToggle}

// IntentVerbs lists the verbs an intent may do, sorted.
func IntentVerbs() []string { return append([]string(nil), intentVerbs...) }

// IntentBody is the request an intent's verb is sent with, from its
// Arg; an error says what is wrong with Arg.
func IntentBody(verb, arg string) (any, error) {
	switch verb {
	case VerbSetState:
		return SetStateRequest{Name: arg}, nil
	case VerbFire:
		return FireRequest{Transition: arg}, nil
	case VerbPower:
		if arg != "on" && arg != "off" {
			return nil, fmt.Errorf("the arg of power is on or off, not %q", arg)
		}
		on := arg == "on"
		return PowerRequest{On: &on}, nil
	case VerbToggle:
		if arg != VerbToggle {
			return nil, fmt.Errorf("the arg of toggle is toggle, not %q", arg)
		}
		return struct{}{}, nil
	case VerbSetBrightness:
		n, err := strconv.Atoi(arg)
		switch {
		case err != nil:
			return nil, fmt.Errorf("the arg of set_brightness is a percent (50) or a step (+10, -10), not %q", arg)
		case strings.HasPrefix(arg, "+") || strings.HasPrefix(arg, "-"):
			if n == 0 || n < -99 || n > 99 {
				return nil, fmt.Errorf("a set_brightness step is -99..99 and not 0, not %q", arg)
			}
			return BrightnessRequest{Delta: &n}, nil
		case n < MinBrightness || n > MaxBrightness:
			return nil, fmt.Errorf("a set_brightness percent is %d..%d, not %q", MinBrightness, MaxBrightness, arg)
		}
		return BrightnessRequest{Percent: &n}, nil
	case VerbSetColor:
		// The color itself is the light's to check, as set_color's.
		if k, ok := strings.CutSuffix(arg, "K"); ok {
			if n, err := strconv.Atoi(k); err == nil {
				return ColorRequest{Kelvin: &n}, nil
			}
		}
		if strings.HasPrefix(arg, "#") {
			return ColorRequest{Hex: arg}, nil
		}
		if arg == "" || len(arg) > 40 {
			return nil, fmt.Errorf("the arg of set_color is a color name, #rrggbb or a kelvin such as 2700K, not %q", arg)
		}
		return ColorRequest{Name: arg}, nil
	}
	return nil, fmt.Errorf("verb %q is none of %s: an intent does one of those, never a configuration change", verb, strings.Join(intentVerbs, ", "))
}
