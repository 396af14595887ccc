package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/lumen-home/lumen/agent/phrase"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Answers learned once: when the model resolves a request into one
// direct action, the agent teaches the light the request's words and that
// action (learn_intent), and the next request of the same words (in
// their normal form, phrase.Normal) is carried out locally, like a direct
// command, with no model call.

// MatchLearned reports whether text says a learned intent's phrase, and
// what the intent does.
func MatchLearned(text string, intents []messages.Intent) (LocalAction, bool) {
	if len(intents) == 0 {
		return LocalAction{}, false
	}
	p := phrase.Normal(text)
	for _, in := range intents {
		if _, err := messages.IntentBody(in.Verb, in.Arg); in.Phrase == p && err == nil {
			return LocalAction{Verb: in.Verb, Arg: in.Arg}, true
		}
	}
	return LocalAction{}, false
}

// LearnedIntent is what the request s just ended teaches the light, if
// anything: its words and its one change, when it ended done and its
// model made exactly one change, a setState, a fire or an everyday
// control of this light (power, toggle, setBrightness, setColor, with no
// fade and no other light: intentOf) that succeeded on
// its own authority (autonomous: no approval), reads aside; and its words
// mean the same whenever they are said (phrase.Learnable: no "back",
// "again", "that", "for", "until", "then", number …). A direct command
// or a learned intent teaches nothing: it is known already.
func LearnedIntent(s *State) (messages.LearnIntentRequest, bool) {
	if s.Status != messages.AgentDone {
		return messages.LearnIntentRequest{}, false
	}
	var act *messages.ToolStep
	for i, c := range s.Calls {
		if readOnly(c.Tool) || c.Tool == ToolDone {
			continue
		}
		if act != nil {
			return messages.LearnIntentRequest{}, false // a second change, or an attempt at one
		}
		act = &s.Calls[i]
	}
	if act == nil || !act.OK || act.Blocked || act.Tier != messages.TierAutonomous || act.Approval != "" || strings.HasPrefix(act.ID, localCall) {
		return messages.LearnIntentRequest{}, false
	}
	out, ok := intentOf(act.Tool, act.Args)
	if !ok {
		return messages.LearnIntentRequest{}, false
	}
	p, err := phrase.Learnable(s.LastAsk)
	if err != nil {
		return messages.LearnIntentRequest{}, false
	}
	out.Phrase = p
	return out, true
}

// learn teaches the light what the request s just ended teaches
// (LearnedIntent), as the session's last step. A refusal (the state was
// deleted meanwhile) only means the next request goes to the model again.
func (l *Loop) learn(ctx context.Context, s *State) {
	in, ok := LearnedIntent(s)
	if !ok || l.Tools == nil {
		return
	}
	body, err := json.Marshal(in)
	if err == nil {
		who := messages.Who(messages.WhoAgent, s.ID, strconv.Itoa(s.Step))
		_, err = l.Tools.Light.Command(wire.AsWho(ctx, who), messages.VerbLearnIntent, body)
	}
	if err != nil && l.Logf != nil {
		l.Logf("agent: session %s: learn %q: %v", s.ID, in.Phrase, err)
	}
}

// intentOf is the intent a call of tool with args teaches: its verb and
// its arguments in a word (messages.IntentBody reads them back). A call
// with a fade or for other lights teaches nothing: its words say more
// than the one word keeps.
func intentOf(tool string, args json.RawMessage) (messages.LearnIntentRequest, bool) {
	var a struct {
		Name       string           `json:"name"`
		Transition string           `json:"transition"`
		On         *bool            `json:"on"`
		Percent    *int             `json:"percent"`
		Delta      *int             `json:"delta"`
		Hex        string           `json:"hex"`
		Kelvin     *int             `json:"kelvin"`
		R          *int             `json:"r"`
		FadeMs     *json.RawMessage `json:"fade_ms"`
		Light      *string          `json:"light"`
	}
	if json.Unmarshal(args, &a) != nil || a.FadeMs != nil || a.Light != nil {
		return messages.LearnIntentRequest{}, false
	}
	var out messages.LearnIntentRequest
	switch tool {
	case ToolSetState:
		out.Verb, out.Arg = messages.VerbSetState, a.Name
	case ToolFire:
		out.Verb, out.Arg = messages.VerbFire, a.Transition
	case ToolPower:
		if a.On == nil {
			return out, false
		}
		out.Verb, out.Arg = messages.VerbPower, map[bool]string{true: "on", false: "off"}[*a.On]
	case ToolToggle:
		out.Verb, out.Arg = messages.VerbToggle, messages.VerbToggle
	case ToolSetBrightness:
		switch {
		case a.Percent != nil && a.Delta == nil:
			out.Arg = strconv.Itoa(*a.Percent)
		case a.Delta != nil && a.Percent == nil:
			out.Arg = fmt.Sprintf("%+d", *a.Delta)
		default:
			return out, false
		}
		out.Verb = messages.VerbSetBrightness
	case ToolSetColor:
		switch {
		case a.R != nil:
			return out, false // r, g, b: kept as hex only when said so
		case a.Kelvin != nil:
			out.Arg = fmt.Sprintf("%dK", *a.Kelvin)
		case a.Hex != "":
			out.Arg = a.Hex
		default:
			out.Arg = a.Name
		}
		out.Verb = messages.VerbSetColor
	default:
		return out, false
	}
	if _, err := messages.IntentBody(out.Verb, out.Arg); err != nil || out.Arg == "" {
		return out, false
	}
	return out, true
}
