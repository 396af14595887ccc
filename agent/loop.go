package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Model is the language model: one chat completion with function tools.
type Model interface {
	Complete(ctx context.Context, req Request) (messages.AgentMessage, error)
}

// Request is one chat completion: the system prompt, the conversation
// and the tools.
type Request struct {
	System   string
	Messages []messages.AgentMessage
	Tools    []Spec
}

// APIError is a model endpoint's HTTP error.
type APIError struct {
	Status  int
	Message string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("agent: model API: HTTP %d: %s", e.Status, e.Message)
}

// Env is what a request needs from its session: durable steps and
// approvals.
type Env interface {
	// Record journals an event of the session (Record numbers it
	// s.Step+1) and, once it is durable, applies it to s.
	Record(ctx context.Context, ev messages.OutAgentData) error
	// Decide waits for the decision on approval id.
	Decide(ctx context.Context, id string) (Decision, error)
}

// Loop runs requests: model turn, tool calls, again, until the model is
// done, asks the person something, or runs out of turns.
type Loop struct {
	Model       Model
	Tools       *Tools
	Prompt      func(ctx context.Context) string
	MaxTurns    int                  // model replies per request; default 10
	CallTimeout time.Duration        // per model call; default 60 s
	MaxHistory  int                  // messages of earlier requests kept; default 40
	Logf        func(string, ...any) // nil: what only a log would say is not said
	Meter       Meter                // counts requests and model calls; nil: nothing
}

// Meter counts what a light's agent does, for the daemon's metrics. It is
// called from any goroutine.
type Meter interface {
	// AgentRequest: a request ended with status (messages.AgentDone …).
	AgentRequest(status string)
	// ModelCall: the model was asked for a turn and answered (or
	// failed) after took.
	ModelCall(took time.Duration, failed bool)
	// Restarted: a session's actor (role "session") was restarted.
	Restarted(role string)
}

type noMeter struct{}

func (noMeter) AgentRequest(string)           {}
func (noMeter) ModelCall(time.Duration, bool) {}
func (noMeter) Restarted(string)              {}

func (l *Loop) meter() Meter {
	if l.Meter == nil {
		return noMeter{}
	}
	return l.Meter
}

// Defaults of Loop.
const (
	DefaultMaxTurns    = 10
	DefaultCallTimeout = 60 * time.Second
	DefaultMaxHistory  = 40
)

func (l *Loop) maxTurns() int {
	if l.MaxTurns > 0 {
		return l.MaxTurns
	}
	return DefaultMaxTurns
}

// Ask journals a person's input and runs the request it starts. When the
// model resolves it into one direct action, the light learns it
// (LearnedIntent).
func (l *Loop) Ask(ctx context.Context, s *State, env Env, text, who string) messages.AskReply {
	return l.ask(ctx, s, env, text, who, nil)
}

// ask is Ask, given the call of the direct command text is when the
// caller knows it already (nil: look it up).
func (l *Loop) ask(ctx context.Context, s *State, env Env, text, who string, direct *messages.AgentToolCall) messages.AskReply {
	// An answer to the model's question means what the question made it
	// mean: it is never learned.
	answers := s.Status == messages.AgentQuestion
	if direct != nil {
		ctx = l.runFirst(ctx, s, *direct)
	}
	if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindAsk, Text: text, Who: who}); err != nil {
		l.meter().AgentRequest(messages.AgentFailed)
		return reply(s, messages.AgentFailed, "I could not record your request, so I did nothing: "+err.Error())
	}
	if direct == nil {
		if call, ok := l.local(ctx, text); ok {
			direct = &call
		}
	}
	if direct != nil {
		// A direct command: the call a model would make, recorded as the
		// turn's reply (by local), then carried out like any call.
		msg := messages.AgentMessage{Role: "assistant", ToolCalls: []messages.AgentToolCall{*direct}}
		if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindModel, Message: &msg, Who: messages.WhoLocal}); err != nil {
			return reply(s, messages.AgentFailed, "I could not record a step, so I stopped: "+err.Error())
		}
	}
	res := l.Continue(ctx, s, env)
	if !answers && direct == nil {
		l.learn(ctx, s)
	}
	return res
}

// localCall is the id prefix of a direct command's call.
const localCall = "local_"

// ranKey holds, in a request's context, the result of the direct call
// runFirst carried out before the request's steps were journaled.
type ranKey struct{}

type ran struct {
	id  string
	res json.RawMessage
	err error
}

// runFirst carries out a direct command's call at once, when the
// operator allows it with no approval, before the request's steps are
// journaled: the light journals the change itself (by local), and the
// session's steps, journaled after, only tell the conversation. Nothing
// of the request is then in the session's journal before the change, so
// a restart in between cannot run it again. The steps' writes no longer
// go before the light's own, and the everyday command is as quick as
// the verb it sends.
func (l *Loop) runFirst(ctx context.Context, s *State, tc messages.AgentToolCall) context.Context {
	if l.Tools == nil {
		return ctx
	}
	args := json.RawMessage(tc.Args)
	if tier, _ := l.Tools.Permission(ctx, tc.Name, args, s.Calls); tier != messages.TierAutonomous {
		return ctx
	}
	res, err := l.Tools.Run(wire.AsWho(ctx, messages.WhoLocal), tc.Name, args)
	return context.WithValue(ctx, ranKey{}, ran{id: tc.ID, res: res, err: err})
}

// local is the call a direct command makes, when text is one
// (Tools.readLocal).
func (l *Loop) local(ctx context.Context, text string) (messages.AgentToolCall, bool) {
	if l.Tools == nil {
		return messages.AgentToolCall{}, false
	}
	r := l.Tools.readLocal(ctx, text)
	if r.call == nil {
		return messages.AgentToolCall{}, false
	}
	return *r.call, true
}

// Continue runs the session's open request from where its journal stands:
// calls the last model reply asked for and did not get, then further
// turns. A cancelled ctx ends the request as cancelled, silently.
func (l *Loop) Continue(ctx context.Context, s *State, env Env) messages.AskReply {
	ctx, given := withHandouts(ctx)
	r := l.run(ctx, s, env)
	r.Webhooks = given.take()
	return r
}

// run is Continue's loop.
func (l *Loop) run(ctx context.Context, s *State, env Env) messages.AskReply {
	for {
		if ctx.Err() != nil {
			return l.end(env, s, messages.AgentCancelled, "")
		}
		if len(s.Transcript) == 0 {
			return l.end(env, s, messages.AgentFailed, "I lost track of this request (its history is gone); please ask again.")
		}
		last := s.Transcript[len(s.Transcript)-1]
		if last.Role == "assistant" && len(last.ToolCalls) == 0 {
			answer := strings.TrimSpace(last.Content)
			if answer == "" {
				answer = "Done."
			}
			return l.end(env, s, messages.AgentDone, answer)
		}
		if call := lastAssistant(s); call != nil {
			for _, tc := range call.ToolCalls {
				if hasResult(s, tc.ID) {
					continue
				}
				if err := l.call(ctx, s, env, tc); err != nil {
					if ctx.Err() != nil {
						return l.end(env, s, messages.AgentCancelled, "")
					}
					return l.end(env, s, messages.AgentFailed, "I could not record a step, so I stopped: "+err.Error())
				}
			}
			if status, answer, ok := finished(s, call); ok {
				return l.end(env, s, status, answer)
			}
		}
		if s.Turns >= l.maxTurns() {
			return l.end(env, s, messages.AgentStopped, fmt.Sprintf("I stopped after %d steps without finishing.%s Ask again to go on.", s.Turns, l.sofar(s)))
		}
		msg, err := l.complete(ctx, s)
		if err != nil {
			if ctx.Err() != nil {
				return l.end(env, s, messages.AgentCancelled, "")
			}
			return l.end(env, s, messages.AgentFailed, spoken(err, l.callTimeout())+l.sofar(s))
		}
		if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindModel, Message: &msg}); err != nil {
			return l.end(env, s, messages.AgentFailed, "I could not record a step, so I stopped: "+err.Error())
		}
	}
}

func (l *Loop) callTimeout() time.Duration {
	if l.CallTimeout > 0 {
		return l.CallTimeout
	}
	return DefaultCallTimeout
}

// complete asks the model for the next turn.
func (l *Loop) complete(ctx context.Context, s *State) (messages.AgentMessage, error) {
	if l.Model == nil {
		return messages.AgentMessage{}, &wire.Error{Code: 409, Msg: Unconfigured}
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, l.callTimeout())
	defer cancel()
	system := ""
	if l.Prompt != nil {
		system = l.Prompt(ctx)
	}
	start := time.Now()
	msg, err := l.Model.Complete(ctx, Request{System: system, Messages: Conversation(s, l.maxHistory()), Tools: l.Tools.specList()})
	if parent.Err() == nil {
		// A call cut short by new input is no failure of the model.
		l.meter().ModelCall(time.Since(start), err != nil)
	}
	if err != nil {
		return msg, err
	}
	msg.Role = "assistant"
	// Some servers omit call ids or reuse them ("call_0" every turn); the
	// transcript pairs each result with its call by id, so ids are made
	// unique within the session.
	used := map[string]bool{}
	for _, m := range s.Transcript {
		for _, tc := range m.ToolCalls {
			used[tc.ID] = true
		}
	}
	for i := range msg.ToolCalls {
		if id := msg.ToolCalls[i].ID; id == "" || used[id] {
			msg.ToolCalls[i].ID = fmt.Sprintf("call_%d_%d", s.Step+1, i)
		}
		used[msg.ToolCalls[i].ID] = true
	}
	return msg, nil
}

func (l *Loop) maxHistory() int {
	if l.MaxHistory > 0 {
		return l.MaxHistory
	}
	return DefaultMaxHistory
}

// call runs one tool call through the permission tiers and journals it.
// It returns an error only when the journal failed or ctx ended: a
// failing tool is a result for the model.
func (l *Loop) call(ctx context.Context, s *State, env Env, tc messages.AgentToolCall) error {
	args := json.RawMessage(tc.Args)
	step := messages.ToolStep{ID: tc.ID, Tool: tc.Name, Args: journalArgs(tc.Args)}
	var replaces string // what the call replaces, for the person who approves it
	step.Tier, replaces = l.Tools.Permission(ctx, tc.Name, args, s.Calls)
	var flags map[string]json.RawMessage
	if json.Unmarshal(args, &flags) == nil && string(flags[SpeakDirectly]) == "true" && tools()[tc.Name].direct {
		step.Direct = true
	}
	finish := func() error {
		return env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindTool, Call: &step})
	}
	if s.Started[tc.ID] {
		step.Error = "this call was interrupted by a restart before its result was recorded; check the light (getStates, getRules) before calling it again"
		return finish()
	}
	if prev, dup := s.Seen[DedupKey(tc.Name, step.Args)]; dup {
		step.Blocked = true
		step.Error = fmt.Sprintf("blocked: you already called %s with exactly these arguments in this request, and got %s. Do not repeat it: use that result, change the arguments, or call done", tc.Name, clip.To(prev, 500, " …"))
		return finish()
	}
	switch step.Tier {
	case messages.TierForbidden:
		step.Error = fmt.Sprintf("the operator does not allow %s; tell the person it needs to be done by hand", tc.Name)
		if replaces != "" {
			step.Error = fmt.Sprintf("the operator does not allow this %s: it %s, a deletion the operator does not allow; use a new name, or tell the person it needs to be done by hand", tc.Name, replaces)
		}
		return finish()
	case messages.TierConfirm:
		id := s.Approval
		if s.Pending == nil || s.Pending.ID != tc.ID {
			id = fmt.Sprintf("%s-%d", s.ID, s.Step+1)
			if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindApproval, Call: &step, Approval: id, Text: replaces}); err != nil {
				return err
			}
		}
		dec, ok := s.Decided[id]
		if !ok {
			var err error
			if dec, err = env.Decide(ctx, id); err != nil {
				return err
			}
			status := "rejected"
			if dec.Approved {
				status = "approved"
			}
			if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindDecision, Approval: id, Status: status, Who: dec.Who, Call: &step}); err != nil {
				return err
			}
		}
		step.Approval = id
		if !dec.Approved {
			step.RejectedBy = dec.Who
			step.Error = "the person rejected this call; do not retry it, adapt or call done"
			if replaces != "" {
				step.Error = "the person rejected this call, which " + replaces + "; do not retry it: use a new name, adapt or call done"
			}
			return finish()
		}
		step.ApprovedBy = dec.Who
	}
	done, pre := ctx.Value(ranKey{}).(ran)
	pre = pre && done.id == tc.ID
	if !pre && !readOnly(tc.Name) && !idempotent(tc.Name) && tc.Name != ToolDone && tc.Name != ToolAskUser {
		// A change is journaled as started first, so a restart between
		// doing it and recording it is not taken for "never ran". One
		// that gives the same light when made twice needs no such care.
		if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindCall, Call: &step}); err != nil {
			return err
		}
	}
	// The light journals what the call changes as this session's step,
	// or as local for a direct command.
	who := messages.Who(messages.WhoAgent, s.ID, strconv.Itoa(s.Step+1))
	if strings.HasPrefix(tc.ID, localCall) {
		who = messages.WhoLocal
	}
	res, err := done.res, done.err
	if !pre {
		res, err = l.Tools.Run(wire.AsWho(ctx, who), tc.Name, args)
	}
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		step.Error = strings.TrimPrefix(err.Error(), errArgs.Error()+": ")
		var ce *wire.Error
		if errors.As(err, &ce) {
			step.Error = ce.Msg
		}
	} else {
		step.OK, step.Result = true, res
	}
	return finish()
}

// end journals the end of the request and builds the reply. Its journal
// write outlives a cancelled request: the end of a request is recorded
// even when a newer input cut it short.
func (l *Loop) end(env Env, s *State, status, answer string) messages.AskReply {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := env.Record(ctx, messages.OutAgentData{Kind: messages.AgentKindEnd, Status: status, Text: answer}); err != nil {
		s.Status, s.LastAnswer = status, answer
	}
	l.meter().AgentRequest(status)
	return reply(s, status, answer)
}

func reply(s *State, status, answer string) messages.AskReply {
	return messages.AskReply{OK: true, Session: s.ID, Status: status, Answer: answer,
		Calls: append([]messages.ToolStep(nil), s.Calls...), Steps: s.Turns}
}

// sofar says what stays of an unfinished request.
func (l *Loop) sofar(s *State) string {
	var did []string
	for _, c := range s.Calls {
		if c.OK && !readOnly(c.Tool) {
			did = append(did, c.Tool)
		}
	}
	if len(did) == 0 {
		return " Nothing was changed."
	}
	return " What I did so far stays (" + strings.Join(did, ", ") + ")."
}

// spoken turns a model failure into a short sentence for a person.
func spoken(err error, timeout time.Duration) string {
	var api *APIError
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("The language model did not answer within %v, so I stopped.", timeout)
	case errors.As(err, &api) && (api.Status == 401 || api.Status == 403):
		return fmt.Sprintf("The language model refused the API key (HTTP %d); check OPENAI_API_KEY.", api.Status)
	case errors.As(err, &api) && api.Status == 404:
		return "The language model endpoint does not know this model (HTTP 404); check LUMEN_MODEL and OPENAI_BASE_URL."
	case errors.As(err, &api) && api.Status == 429:
		return "The language model service is rate limiting us (HTTP 429); try again in a minute."
	case errors.As(err, &api):
		return fmt.Sprintf("The language model service failed (HTTP %d); try again in a moment.", api.Status)
	}
	return "I could not reach the language model (" + clip.To(err.Error(), 200, " …") + ")."
}

// lastAssistant is the request's last model reply if it called tools.
func lastAssistant(s *State) *messages.AgentMessage {
	for i := len(s.Transcript) - 1; i > s.ReqStart; i-- {
		m := &s.Transcript[i]
		if m.Role == "assistant" {
			if len(m.ToolCalls) == 0 {
				return nil
			}
			return m
		}
	}
	return nil
}

func hasResult(s *State, id string) bool {
	for i := len(s.Transcript) - 1; i > s.ReqStart; i-- {
		m := s.Transcript[i]
		if m.Role == "tool" && m.ToolCallID == id {
			return true
		}
		if m.Role == "assistant" && m.ToolCalls != nil {
			for _, tc := range m.ToolCalls {
				if tc.ID == id {
					return false
				}
			}
		}
	}
	return false
}

// finished reports whether a turn's calls ended the request: a done or
// askUser that succeeded, or calls that all succeeded with at least one
// to be said directly.
func finished(s *State, turn *messages.AgentMessage) (status, answer string, ok bool) {
	var said []string
	direct := len(turn.ToolCalls) > 0
	for _, tc := range turn.ToolCalls {
		c, found := callOf(s, tc.ID)
		if !found || !c.OK {
			direct = false
			break
		}
		if c.Direct {
			said = append(said, Confirmation(c))
		}
	}
	if direct && len(said) > 0 {
		return messages.AgentDone, strings.Join(said, " "), true
	}
	for _, tc := range turn.ToolCalls {
		if tc.Name != ToolDone && tc.Name != ToolAskUser {
			continue
		}
		for i := len(s.Calls) - 1; i >= 0; i-- {
			c := s.Calls[i]
			if c.ID != tc.ID || !c.OK {
				continue
			}
			var r struct{ Message, Question string }
			_ = json.Unmarshal(c.Result, &r)
			if tc.Name == ToolDone {
				return messages.AgentDone, r.Message, true
			}
			return messages.AgentQuestion, r.Question, true
		}
	}
	return "", "", false
}

func callOf(s *State, id string) (messages.ToolStep, bool) {
	for i := len(s.Calls) - 1; i >= 0; i-- {
		if s.Calls[i].ID == id {
			return s.Calls[i], true
		}
	}
	return messages.ToolStep{}, false
}

// Confirmation is the short sentence that says a call is done, for a
// person: what a speak_directly call answers.
func Confirmation(c messages.ToolStep) string {
	if s, ok := confirmRouted(c); ok {
		return s
	}
	if t, ok := toolOf(c.Tool); ok && t.confirm != nil {
		return t.confirm(c)
	}
	return "Done."
}

// confirmArgs are the arguments confirmations name.
type confirmArgs struct {
	Name       string              `json:"name"`
	Rules      []json.RawMessage   `json:"rules"`
	Layer      *messages.LayerSpec `json:"layer"`
	Transition string              `json:"transition"`
}

func argsOf(c messages.ToolStep) confirmArgs {
	var a confirmArgs
	_ = json.Unmarshal(c.Args, &a)
	return a
}

func confirmSetState(c messages.ToolStep) string {
	return fmt.Sprintf("The light is %s now.", argsOf(c).Name)
}

func confirmFire(c messages.ToolStep) string {
	var r struct{ State string }
	_ = json.Unmarshal(c.Result, &r)
	return fmt.Sprintf("I fired %s: the light is %s now.", argsOf(c).Transition, r.State)
}

func confirmCreateState(c messages.ToolStep) string {
	return fmt.Sprintf("I made the state %s.", argsOf(c).Name)
}

func confirmAppendRules(c messages.ToolStep) string {
	a := argsOf(c)
	switch {
	case a.Layer != nil && len(a.Rules) == 1:
		return "I added the rule for a while; then the light goes back to what it did before."
	case a.Layer != nil:
		return fmt.Sprintf("I added %d rules for a while; then the light goes back to what it did before.", len(a.Rules))
	case len(a.Rules) == 1:
		return "I added the rule."
	}
	return fmt.Sprintf("I added %d rules.", len(a.Rules))
}

func confirmCreateSchedule(c messages.ToolStep) string {
	return fmt.Sprintf("The schedule %s is set.", argsOf(c).Name)
}

func confirmTestTool(c messages.ToolStep) string {
	var r struct {
		Result json.RawMessage `json:"result"`
	}
	_ = json.Unmarshal(c.Result, &r)
	return fmt.Sprintf("%s says %s.", argsOf(c).Name, clip.To(string(r.Result), 120, " …"))
}

func confirmGetState(c messages.ToolStep) string {
	return fmt.Sprintf("The state %s is %s.", argsOf(c).Name, clip.To(string(c.Result), 160, " …"))
}

func confirmGetVariables(c messages.ToolStep) string {
	var r struct {
		Vars map[string]json.RawMessage `json:"vars"`
	}
	_ = json.Unmarshal(c.Result, &r)
	if len(r.Vars) == 0 {
		return "There are no variables."
	}
	names := make([]string, 0, len(r.Vars))
	for k, v := range r.Vars {
		names = append(names, k+" is "+clip.To(string(v), 40, " …"))
	}
	sort.Strings(names)
	return clip.To(strings.Join(names, ", "), 300, " …") + "."
}

// Conversation is what the model reads: the session's transcript from a
// request boundary so that at most max messages of earlier requests are
// kept, with a result supplied for every call that never got one (a
// request cut short), as chat APIs require.
func Conversation(s *State, max int) []messages.AgentMessage {
	start := s.ReqStart
	for i := 0; i < s.ReqStart; i++ {
		if s.Transcript[i].Role == "user" && s.ReqStart-i <= max {
			start = i
			break
		}
	}
	out := make([]messages.AgentMessage, 0, len(s.Transcript)-start+2)
	open := map[string]bool{}
	var order []string
	flush := func() {
		for _, id := range order {
			if open[id] {
				out = append(out, messages.AgentMessage{Role: "tool", ToolCallID: id, Content: `{"ok":false,"error":"not run: the request was cut short"}`})
			}
		}
		open, order = map[string]bool{}, nil
	}
	for _, m := range s.Transcript[start:] {
		switch m.Role {
		case "tool":
			if !open[m.ToolCallID] {
				continue // a result whose call was trimmed
			}
			delete(open, m.ToolCallID)
		default:
			flush()
		}
		out = append(out, m)
		for _, tc := range m.ToolCalls {
			open[tc.ID] = true
			order = append(order, tc.ID)
		}
	}
	flush() // only earlier requests can have calls without results: a turn's calls all run before the next turn
	return out
}

// journalArgs keeps a call's arguments as JSON even when the model wrote
// something else (then as a JSON string of what it wrote).
func journalArgs(raw string) json.RawMessage {
	if strings.TrimSpace(raw) == "" {
		return json.RawMessage(`{}`)
	}
	if json.Valid([]byte(raw)) {
		return json.RawMessage(raw)
	}
	b, _ := json.Marshal(raw)
	return b
}
