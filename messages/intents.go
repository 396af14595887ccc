package messages

import "time"

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
