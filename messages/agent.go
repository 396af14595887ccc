package messages

import "encoding/json"

// Verbs of the agent, answered by the light's agent actor.
const (
	VerbAsk      = "ask"      // AskRequest → AskReply
	VerbApprove  = "approve"  // ApprovalRequest → ApprovalReply
	VerbReject   = "reject"   // ApprovalRequest → ApprovalReply
	VerbSessions = "sessions" // SessionsRequest → SessionsReply
	VerbTalk     = "talk"     // audio bytes (WAV), headers Lumen-Session, Lumen-Who → TalkReply
)

// Headers of talk.
const (
	HeaderSession = "Lumen-Session"
	HeaderWho     = "Lumen-Who"
)

// TalkReply answers talk: the ask's reply, what was heard, and the answer
// spoken (audio, base64 in JSON; absent when nothing is to be said: an
// empty transcript only aborts).
//   - spoken_by  "api" (the endpoint's speech) or "espeak" (local).
type TalkReply struct {
	AskReply
	Transcript string `json:"transcript"`
	Audio      []byte `json:"audio,omitempty"`
	Format     string `json:"format,omitempty"`
	SpokenBy   string `json:"spoken_by,omitempty"`
	SpeechErr  string `json:"speech_error,omitempty"`
}

// OutAgent is the output type of the agent's steps:
// lumen.<light>.evt.out.agent. They are journaled by the agent actor with
// cause 0 (an agent step is not the output of one of the light's inputs;
// the light's own replay skips them), and they are the audit trail.
const OutAgent = "agent"

// AskRequest is the body of ask.
//   - text     what the person said; empty only aborts the session's
//     request in flight.
//   - session  the conversation to continue (default "default"): a new ask
//     to a session cancels its request in flight at once.
//   - async    reply at once with the session id instead of waiting.
//   - who      who asks, for the audit trail (default "nats").
type AskRequest struct {
	Text    string `json:"text"`
	Session string `json:"session,omitempty"`
	Async   bool   `json:"async,omitempty"`
	Who     string `json:"who,omitempty"`
}

// AskReply answers ask when the request is finished (or at once, with
// only the session, when async).
//   - status  done (the agent finished), question (it asks the person
//     something: the answer is the question), stopped (max steps), failed
//     (the model could not be reached or answered garbage), cancelled (a
//     newer input took over), rejected (a confirmation was refused),
//     accepted (async).
//   - webhooks  each webhook source the agent made in this request, with
//     its URL and its token: given once to the person, never to the model,
//     never journaled.
type AskReply struct {
	OK       bool           `json:"ok"`
	Session  string         `json:"session"`
	Status   string         `json:"status"`
	Answer   string         `json:"answer,omitempty"`
	Calls    []ToolStep     `json:"calls,omitempty"`
	Steps    int            `json:"steps,omitempty"`
	Webhooks []WebhookGiven `json:"webhooks,omitempty"`
}

// WebhookGiven is a webhook source the agent made: where to post, and the
// token to post with (Authorization: Bearer TOKEN). URL is empty when the
// daemon serves no HTTP.
type WebhookGiven struct {
	Source string `json:"source"`
	URL    string `json:"url"`
	Token  string `json:"token"`
}

// Statuses of an agent request.
const (
	AgentDone      = "done"
	AgentQuestion  = "question"
	AgentStopped   = "stopped"
	AgentFailed    = "failed"
	AgentCancelled = "cancelled"
	AgentRejected  = "rejected"
	AgentAccepted  = "accepted"
	AgentRunning   = "running"
	AgentPending   = "pending" // waiting for an approval
)

// ToolStep is one tool call of the agent, as the audit trail keeps it.
//   - tier        autonomous, confirm or forbidden.
//   - ok          the call succeeded; error says why not.
//   - approval    the approval id, for confirm-tier calls.
//   - approved_by who approved it (cli, nats, button …); rejected_by who
//     refused it.
//   - blocked     a duplicate call, not run.
type ToolStep struct {
	ID         string          `json:"id,omitempty"`
	Tool       string          `json:"tool"`
	Args       json.RawMessage `json:"args,omitempty"`
	Tier       string          `json:"tier"`
	OK         bool            `json:"ok"`
	Result     json.RawMessage `json:"result,omitempty"`
	Error      string          `json:"error,omitempty"`
	Approval   string          `json:"approval,omitempty"`
	ApprovedBy string          `json:"approved_by,omitempty"`
	RejectedBy string          `json:"rejected_by,omitempty"`
	Blocked    bool            `json:"blocked,omitempty"`
	// Direct: the model asked for the call's confirmation to be the
	// answer (speak_directly), without another model call.
	Direct bool `json:"direct,omitempty"`
}

// Permission tiers of agent tools.
const (
	TierAutonomous = "autonomous"
	TierConfirm    = "confirm"
	TierForbidden  = "forbidden"
)

// Kinds of agent events (OutAgentData.Kind).
const (
	AgentKindAsk      = "ask"      // a person's input: Text, Who
	AgentKindModel    = "model"    // a model reply: Message
	AgentKindCall     = "call"     // a tool call about to run: Call (no result yet)
	AgentKindTool     = "tool"     // a tool call's outcome: Call
	AgentKindApproval = "approval" // a confirm-tier call waits: Call, Approval, Text (what it replaces, for a create over an existing name)
	AgentKindDecision = "decision" // an approval was decided: Approval, Call
	AgentKindEnd      = "end"      // the request finished: Status, Text (the answer)
)

// OutAgentData is the data of an agent event. Step numbers a session's
// events from 1, so the event id <light>:agent:<session>:<step> is
// unique and a retried append is stored once.
type OutAgentData struct {
	Session  string          `json:"session"`
	Step     int             `json:"step"`
	Kind     string          `json:"kind"`
	Who      string          `json:"who,omitempty"`
	Text     string          `json:"text,omitempty"`
	Status   string          `json:"status,omitempty"`
	Message  *AgentMessage   `json:"message,omitempty"`
	Call     *ToolStep       `json:"call,omitempty"`
	Approval string          `json:"approval,omitempty"`
	Extra    json.RawMessage `json:"extra,omitempty"`
}

// AgentMessage is one message of a conversation with the model, in the
// chat completions' shape: role system|user|assistant|tool.
type AgentMessage struct {
	Role       string          `json:"role"`
	Content    string          `json:"content,omitempty"`
	ToolCalls  []AgentToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
}

// AgentToolCall is a function call the model asked for; Args is the raw
// argument text the model wrote (it may not be valid JSON).
type AgentToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	Args string `json:"args"`
}

// ApprovalRequest is the body of approve and reject: {"id"} (the
// approval id, as shown by ask and on evt.out.agent), and who decides.
type ApprovalRequest struct {
	ID  string `json:"id"`
	Who string `json:"who,omitempty"`
}

// ApprovalReply answers approve and reject.
type ApprovalReply struct {
	OK       bool   `json:"ok"`
	ID       string `json:"id"`
	Session  string `json:"session"`
	Tool     string `json:"tool"`
	Decision string `json:"decision"` // approved | rejected
}

// SessionsRequest is the body of sessions: {} lists them, {"session"}
// shows one with its transcript.
type SessionsRequest struct {
	Session string `json:"session,omitempty"`
}

// SessionsReply answers sessions.
type SessionsReply struct {
	OK bool `json:"ok"`
	// Agent is false when no model is configured: ask says how to
	// configure one (added after sessions: older daemons leave it out).
	Agent bool `json:"agent"`
	// Talk is whether talk takes speech: a speech-to-text endpoint is
	// configured, with or without a chat model (added after agent).
	Talk     bool          `json:"talk"`
	Sessions []SessionInfo `json:"sessions"`
}

// SessionInfo describes one session; Transcript only when asked for one.
type SessionInfo struct {
	Session    string         `json:"session"`
	Status     string         `json:"status"`
	Steps      int            `json:"steps"`
	Updated    string         `json:"updated,omitempty"`
	Pending    *ToolStep      `json:"pending,omitempty"`
	LastAsk    string         `json:"last_ask,omitempty"`
	LastAnswer string         `json:"last_answer,omitempty"`
	Transcript []AgentMessage `json:"transcript,omitempty"`
	Calls      []ToolStep     `json:"calls,omitempty"`
}
