package agent

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// State is one session as its journaled events make it: the same fold
// serves the live session (each event is journaled, then applied) and a
// restart (the events are replayed), so a session continues exactly where
// the journal says it was.
type State struct {
	ID         string                  `json:"id"`
	Step       int                     `json:"step"` // the last event's step
	Transcript []messages.AgentMessage `json:"transcript"`
	Status     string                  `json:"status"`
	Updated    time.Time               `json:"updated"`
	LastAsk    string                  `json:"last_ask,omitempty"`
	LastAnswer string                  `json:"last_answer,omitempty"`

	// The request in flight (or the last one).
	ReqStart int                 `json:"req_start"`          // index of its user message in Transcript
	Turns    int                 `json:"turns"`              // model replies in it
	Calls    []messages.ToolStep `json:"calls,omitempty"`    // its finished tool calls
	Started  map[string]bool     `json:"started,omitempty"`  // calls journaled as started, not finished
	Pending  *messages.ToolStep  `json:"pending,omitempty"`  // the call waiting for an approval
	Approval string              `json:"approval,omitempty"` // its approval id
	Who      string              `json:"who,omitempty"`      // who asked
	Decided  map[string]Decision `json:"decided,omitempty"`  // approvals decided, by id (until the call's result)
	Seen     map[string]string   `json:"seen,omitempty"`     // dedup keys of this request's calls → their result
	Volatile map[string]bool     `json:"volatile,omitempty"` // dedup keys of reads and failures, forgotten after a change

	// enc holds the JSON of Transcript[:len(enc)]: a message never
	// changes once added (Apply appends, trim drops the oldest), so a
	// snapshot encodes only the messages added since the last one.
	enc []json.RawMessage
}

// snapshot encodes the session for its snapshot, as json.Marshal would
// (in another order), encoding only the messages added since the last
// time.
func (s *State) snapshot() ([]byte, error) {
	if len(s.enc) > len(s.Transcript) {
		s.enc = nil
	}
	for _, m := range s.Transcript[len(s.enc):] {
		b, err := json.Marshal(m)
		if err != nil {
			s.enc = nil
			return nil, err
		}
		s.enc = append(s.enc, b)
	}
	type fields State
	rest, err := json.Marshal(struct {
		*fields
		Transcript *struct{} `json:"transcript,omitempty"` // hides the one of fields
	}{fields: (*fields)(s)})
	if err != nil {
		return nil, err
	}
	// The kept encodings go in as they are (as json.RawMessage values, or
	// from a MarshalJSON, they would be scanned again, which costs more
	// than encoding them).
	n := len(rest) + 16
	for _, b := range s.enc {
		n += len(b) + 1
	}
	out := make([]byte, 0, n)
	if s.Transcript == nil {
		out = append(out, `{"transcript":null`...)
	} else {
		out = append(out, `{"transcript":[`...)
		for i, b := range s.enc {
			if i > 0 {
				out = append(out, ',')
			}
			out = append(out, b...)
		}
		out = append(out, ']')
	}
	if len(rest) > 2 {
		out = append(out, ',')
	}
	return append(out, rest[1:]...), nil
}

// MaxTranscript bounds what a session keeps of its earlier requests (the
// model sees at most Loop.MaxHistory of them anyway).
const MaxTranscript = 200

// Decision is an approval's outcome.
type Decision struct {
	Approved bool   `json:"approved"`
	Who      string `json:"who"`
}

// NewState returns an empty session.
func NewState(id string) *State {
	return &State{ID: id, Status: messages.AgentDone}
}

// Apply folds one event into the session.
func (s *State) Apply(ev messages.OutAgentData, at time.Time) {
	s.Step = ev.Step
	s.Updated = at
	switch ev.Kind {
	case messages.AgentKindAsk:
		s.trim()
		s.Transcript = append(s.Transcript, messages.AgentMessage{Role: "user", Content: ev.Text})
		s.ReqStart = len(s.Transcript) - 1
		s.Turns, s.Calls, s.Started, s.Pending, s.Approval = 0, nil, nil, nil, ""
		s.Decided, s.Seen, s.Volatile = nil, nil, nil
		s.Status, s.LastAsk, s.Who = messages.AgentRunning, ev.Text, ev.Who
	case messages.AgentKindModel:
		if ev.Message != nil {
			s.Transcript = append(s.Transcript, *ev.Message)
		}
		s.Turns++
	case messages.AgentKindCall:
		if ev.Call != nil {
			if s.Started == nil {
				s.Started = map[string]bool{}
			}
			s.Started[ev.Call.ID] = true
		}
	case messages.AgentKindApproval:
		if ev.Call != nil {
			c := *ev.Call
			s.Pending, s.Approval, s.Status = &c, ev.Approval, messages.AgentPending
		}
	case messages.AgentKindDecision:
		if s.Decided == nil {
			s.Decided = map[string]Decision{}
		}
		s.Decided[ev.Approval] = Decision{Approved: ev.Status == "approved", Who: ev.Who}
		s.Pending, s.Approval, s.Status = nil, "", messages.AgentRunning
	case messages.AgentKindTool:
		if ev.Call != nil {
			c := *ev.Call
			s.Transcript = append(s.Transcript, messages.AgentMessage{Role: "tool", ToolCallID: c.ID, Content: ToolContent(c)})
			s.Calls = append(s.Calls, c)
			delete(s.Started, c.ID)
			s.remember(c)
		}
	case messages.AgentKindEnd:
		s.Status, s.LastAnswer = ev.Status, ev.Text
		s.Pending, s.Approval, s.Started = nil, "", nil
	}
}

// copy returns a deep copy of s, through its JSON (the form of its
// snapshots).
func (s *State) copy() (*State, error) {
	b, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	var c State
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

// clone is copy for a state that encodes: plain data, always.
func (s *State) clone() *State {
	c, err := s.copy()
	if err != nil {
		panic(fmt.Sprintf("agent: copy session %s: %v", s.ID, err))
	}
	return c
}

// trim drops the oldest requests once the transcript is past
// MaxTranscript, cutting at a request's start.
func (s *State) trim() {
	if len(s.Transcript) <= MaxTranscript {
		return
	}
	for i := len(s.Transcript) - MaxTranscript; i < len(s.Transcript); i++ {
		if s.Transcript[i].Role == "user" {
			s.Transcript = append([]messages.AgentMessage(nil), s.Transcript[i:]...)
			s.enc = s.enc[min(i, len(s.enc)):]
			return
		}
	}
	s.Transcript, s.enc = nil, nil
}

// remember records a finished call for duplicate blocking. Reads and
// failed calls are only duplicates until something changes the light:
// reading again after a change, or retrying a call once its cause is
// fixed, is a new question.
func (s *State) remember(c messages.ToolStep) {
	if c.Blocked {
		return
	}
	if s.Seen == nil {
		s.Seen = map[string]string{}
	}
	key := DedupKey(c.Tool, c.Args)
	if readOnly(c.Tool) || !c.OK {
		if s.Volatile == nil {
			s.Volatile = map[string]bool{}
		}
		s.Volatile[key] = true
	} else {
		for k := range s.Volatile {
			delete(s.Seen, k)
		}
		s.Volatile = nil
	}
	s.Seen[key] = ToolContent(c)
}

// Open reports whether the session's last request has not ended.
func (s *State) Open() bool {
	return s.Status == messages.AgentRunning || s.Status == messages.AgentPending
}

// Info describes the session for `sessions`.
func (s *State) Info(transcript bool) messages.SessionInfo {
	in := messages.SessionInfo{Session: s.ID, Status: s.Status, Steps: s.Step, LastAsk: s.LastAsk, LastAnswer: s.LastAnswer}
	if !s.Updated.IsZero() {
		in.Updated = s.Updated.UTC().Format(time.RFC3339)
	}
	if s.Pending != nil {
		p := *s.Pending
		p.Approval = s.Approval
		in.Pending = &p
	}
	if transcript {
		in.Transcript = append([]messages.AgentMessage(nil), s.Transcript...)
		in.Calls = append([]messages.ToolStep(nil), s.Calls...)
	}
	return in
}

// ToolContent is what the model reads as a call's result.
func ToolContent(c messages.ToolStep) string {
	if c.OK {
		if len(c.Result) == 0 {
			return `{"ok":true}`
		}
		return string(c.Result)
	}
	b, _ := json.Marshal(map[string]any{"ok": false, "error": c.Error})
	return string(b)
}

// DedupKey identifies a call by tool and arguments, whatever their key
// order or spacing.
func DedupKey(tool string, args json.RawMessage) string {
	var v any
	if json.Unmarshal(args, &v) == nil {
		if b, err := json.Marshal(v); err == nil {
			return tool + " " + string(b)
		}
	}
	return tool + " " + string(args)
}
