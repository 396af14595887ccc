package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// Config wires the agent of one light.
type Config struct {
	Light   string
	Journal *journal.Journal
	Tools   *Tools // runs calls against the light
	Model   Model  // nil: not configured, ask says how to configure it
	// Loop settings; Model, Tools and Prompt are filled in.
	MaxTurns    int
	CallTimeout time.Duration
	// Voice: nil Transcriber means talk is refused (no model); Speaker
	// may fail, then the reply has text only.
	Transcriber Transcriber
	Speaker     Speaker
	Logf        func(string, ...any)
	Clock       clock.Clock // stamps the steps (default the system's)
}

// Messages of the agent actor. Reply is called once, from any goroutine.
type (
	// Ask starts (or, with empty text, only aborts) a request.
	Ask struct {
		Req   messages.AskRequest
		Reply func(any) // *messages.AskReply or *messages.ErrorReply
	}
	// Decide approves or rejects a pending call.
	Decide struct {
		Req     messages.ApprovalRequest
		Approve bool
		Reply   func(any) // *messages.ApprovalReply or *messages.ErrorReply
	}
	// Talk transcribes audio, asks, and speaks the answer.
	Talk struct {
		Audio   []byte
		Session string
		Who     string
		Reply   func(any) // *messages.TalkReply or *messages.ErrorReply
	}
	// ListSessions answers sessions.
	ListSessions struct {
		Req   messages.SessionsRequest
		Reply func(any) // *messages.SessionsReply or *messages.ErrorReply
	}
)

// errStopped refuses steps of a session whose actor stops.
var errStopped = errors.New("agent: the session is stopping")

// DefaultSession is the session of an ask that names none.
const DefaultSession = "default"

// Props returns the props of a light's agent: a manager actor with one
// child per session, restarted one for one.
func Props(cfg Config) (*actor.Props, error) {
	if err := subject.ValidLight(cfg.Light); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if cfg.Journal == nil || cfg.Tools == nil {
		return nil, errors.New("agent: a journal and tools are required")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System(clock.Trust)
	}
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: cfg} },
		actor.WithSupervisor(actors.JournaledStrategy(cfg.Light, "agent session", cfg.Journal, cfg.Clock, cfg.Logf))), nil
}

// Manager is a light's agent: it routes asks and approvals to sessions.
type Manager struct {
	cfg      Config
	loop     *Loop
	sessions map[string]*session
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.loop = &Loop{Model: m.cfg.Model, Tools: m.cfg.Tools, Prompt: LightPrompt(m.cfg.Light, m.cfg.Tools),
			MaxTurns: m.cfg.MaxTurns, CallTimeout: m.cfg.CallTimeout}
		m.sessions = map[string]*session{}
		states, err := m.restore()
		if err != nil {
			panic(fmt.Sprintf("agent %s: restore the sessions: %v", m.cfg.Light, err)) // the supervisor retries
		}
		for _, st := range states {
			m.spawn(ctx, st)
		}
	case *Ask:
		name := msg.Req.Session
		if name == "" {
			name = DefaultSession
		}
		if err := validSession(name); err != nil {
			msg.Reply(&messages.ErrorReply{Code: 400, Error: err.Error()})
			return
		}
		if m.cfg.Model == nil && strings.TrimSpace(msg.Req.Text) != "" {
			msg.Reply(&messages.ErrorReply{Code: 409, Error: Unconfigured})
			return
		}
		s := m.sessions[name]
		if s == nil {
			s = m.spawn(ctx, NewState(name))
		}
		ctx.Send(s.pid, msg)
	case *Decide:
		m.decide(ctx, msg)
	case *Talk:
		m.talk(ctx, msg)
	case *ListSessions:
		var out []messages.SessionInfo
		for name, s := range m.sessions {
			if msg.Req.Session != "" && msg.Req.Session != name {
				continue
			}
			out = append(out, s.info(msg.Req.Session != ""))
		}
		if msg.Req.Session != "" && len(out) == 0 {
			msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("sessions: no session %q; `lumen sessions` lists them", msg.Req.Session)})
			return
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Updated > out[j].Updated })
		msg.Reply(&messages.SessionsReply{OK: true, Sessions: out})
	}
}

// talk transcribes off the actor's goroutine, then asks like text would
// (an empty transcript only aborts), then speaks the answer.
func (m *Manager) talk(ctx actor.Context, msg *Talk) {
	if m.cfg.Model == nil || m.cfg.Transcriber == nil {
		msg.Reply(&messages.ErrorReply{Code: 409, Error: Unconfigured})
		return
	}
	if msg.Session == "" {
		msg.Session = DefaultSession
	}
	if err := validSession(msg.Session); err != nil {
		msg.Reply(&messages.ErrorReply{Code: 400, Error: err.Error()})
		return
	}
	if len(msg.Audio) == 0 {
		msg.Reply(&messages.ErrorReply{Code: 400, Error: "talk: send the audio (a WAV file) as the message body"})
		return
	}
	if len(msg.Audio) > MaxAudio {
		msg.Reply(&messages.ErrorReply{Code: 413, Error: fmt.Sprintf("talk: %d bytes of audio is more than the %d MiB a request may carry; send a shorter recording", len(msg.Audio), MaxAudio>>20)})
		return
	}
	self, root, cfg := ctx.Self(), ctx.ActorSystem().Root, m.cfg
	go func() {
		tctx, cancel := context.WithTimeout(context.Background(), cfg.CallTimeout+time.Minute)
		defer cancel()
		text, err := cfg.Transcriber.Transcribe(tctx, msg.Audio, "speech.wav")
		if err != nil {
			answer := "I could not hear that: " + spoken(err, cfg.CallTimeout)
			msg.Reply(speakReply(tctx, cfg, messages.AskReply{OK: true, Session: msg.Session, Status: messages.AgentFailed, Answer: answer}, ""))
			return
		}
		root.Send(self, &Ask{Req: messages.AskRequest{Text: text, Session: msg.Session, Who: msg.Who}, Reply: func(v any) {
			r, ok := v.(*messages.AskReply)
			if !ok {
				msg.Reply(v)
				return
			}
			sctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			msg.Reply(speakReply(sctx, cfg, *r, text))
		}})
	}()
}

// speakReply adds the spoken answer to a reply; a cancelled request says
// nothing.
func speakReply(ctx context.Context, cfg Config, r messages.AskReply, transcript string) *messages.TalkReply {
	out := &messages.TalkReply{AskReply: r, Transcript: transcript}
	if r.Status == messages.AgentCancelled || r.Answer == "" || cfg.Speaker == nil {
		return out
	}
	sp, err := cfg.Speaker.Speak(ctx, r.Answer)
	if err != nil {
		out.SpeechErr = err.Error()
		return out
	}
	out.Audio, out.Format, out.SpokenBy = sp.Audio, sp.Format, sp.By
	return out
}

// decide routes an approval to its session. With no id, the light's only
// pending approval is meant.
func (m *Manager) decide(ctx actor.Context, msg *Decide) {
	id := msg.Req.ID
	if id == "" {
		var pending []string
		for _, s := range m.sessions {
			if p := s.pendingID(); p != "" {
				pending = append(pending, p)
			}
		}
		switch len(pending) {
		case 0:
			msg.Reply(&messages.ErrorReply{Code: 404, Error: "nothing waits for an approval"})
			return
		case 1:
			id = pending[0]
		default:
			sort.Strings(pending)
			msg.Reply(&messages.ErrorReply{Code: 409, Error: "several approvals are pending (" + strings.Join(pending, ", ") + "); name one"})
			return
		}
	}
	i := strings.LastIndexByte(id, '-')
	s := (*session)(nil)
	if i > 0 {
		s = m.sessions[id[:i]]
	}
	if s == nil {
		msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("no pending approval %q; `lumen sessions` shows the pending ones", id)})
		return
	}
	req := *msg
	req.Req.ID = id
	ctx.Send(s.pid, &req)
}

func (m *Manager) spawn(ctx actor.Context, st *State) *session {
	s := &session{cfg: m.cfg, loop: m.loop, state: st, waiters: map[string]chan Decision{}, early: map[string]Decision{}}
	s.pid = ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return s }))
	m.sessions[st.ID] = s
	return s
}

// restore folds the light's agent events into sessions.
func (m *Manager) restore() (map[string]*State, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	states := map[string]*State{}
	snaps, err := m.cfg.Journal.Records(ctx, SnapshotKey(m.cfg.Light, ""))
	if err != nil {
		return nil, err
	}
	for key, b := range snaps {
		st := &State{}
		if err := json.Unmarshal(b, st); err != nil || st.ID == "" {
			m.cfg.Logf("agent %s: skip session snapshot %s: %v", m.cfg.Light, key, err)
			continue
		}
		states[st.ID] = st
	}
	err = m.cfg.Journal.Replay(ctx, subject.Out(m.cfg.Light, messages.OutAgent), 0, 0, func(msg journal.Msg) error {
		var env messages.Envelope
		if err := messages.DecodeEnvelope(msg.Data, &env); err != nil {
			m.cfg.Logf("agent %s: skip agent event %d: %v", m.cfg.Light, msg.Seq, err)
			return nil
		}
		var ev messages.OutAgentData
		if err := json.Unmarshal(env.Data, &ev); err != nil || ev.Session == "" {
			m.cfg.Logf("agent %s: skip agent event %d: %v", m.cfg.Light, msg.Seq, err)
			return nil
		}
		st := states[ev.Session]
		if st == nil {
			st = NewState(ev.Session)
			states[ev.Session] = st
		}
		if ev.Step <= st.Step {
			return nil // the snapshot has it
		}
		st.Apply(ev, env.Time)
		return nil
	})
	return states, err
}

// session is one conversation: an actor whose requests run in their own
// goroutine, one at a time; a new input cancels the one in flight.
type session struct {
	cfg  Config
	loop *Loop
	pid  *actor.PID

	mu      sync.Mutex // guards state against readers; only the request goroutine writes it
	state   *State
	waiters map[string]chan Decision
	early   map[string]Decision // decisions that came before their waiter
	// The approval being journaled: its event may reach an approver
	// before the append returns and the state shows it.
	expect     string
	expectTool string

	unacked []*journal.Pending // appended steps not yet known durable; only the request goroutine touches it
	stopped atomic.Bool        // the actor stops: record nothing more

	cancel context.CancelFunc
	done   chan struct{}
	asker  func(any) // the reply of the request in flight
}

// Receive handles one message.
func (s *session) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		s.mu.Lock()
		open := s.state.Open()
		s.mu.Unlock()
		if open {
			s.cfg.Logf("agent %s: session %s continues after a restart", s.cfg.Light, s.state.ID)
			s.mu.Lock()
			b, err := json.Marshal(s.state)
			s.mu.Unlock()
			if err == nil { // it may live only in events so far
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				s.snapshot(ctx, b)
				cancel()
			}
			s.start(func(ctx context.Context) messages.AskReply { return s.loop.Continue(ctx, s.state, s) }, nil)
		}
	case *actor.Stopping:
		// The daemon stops (or the manager restarts): the request in
		// flight stops recording, so the journal keeps it open and the
		// next start continues it where it stood.
		s.stopped.Store(true)
		if s.cancel != nil {
			s.cancel()
			<-s.done
		}
	case *Ask:
		text := strings.TrimSpace(msg.Req.Text)
		if text == "" {
			if s.cancel != nil {
				s.cancel()
			}
			msg.Reply(&messages.AskReply{OK: true, Session: s.state.ID, Status: messages.AgentCancelled})
			return
		}
		who := msg.Req.Who
		if who == "" {
			who = "nats"
		}
		reply := msg.Reply
		if msg.Req.Async {
			msg.Reply(&messages.AskReply{OK: true, Session: s.state.ID, Status: messages.AgentAccepted})
			reply = nil
		}
		s.start(func(ctx context.Context) messages.AskReply { return s.loop.Ask(ctx, s.state, s, text, who) }, reply)
	case *Decide:
		s.mu.Lock()
		pending := s.state.Approval == msg.Req.ID && s.state.Pending != nil
		tool := s.expectTool
		if pending {
			tool = s.state.Pending.Tool
		} else if s.expect == msg.Req.ID {
			pending = true
		}
		w := s.waiters[msg.Req.ID]
		if pending {
			who := msg.Req.Who
			if who == "" {
				who = "nats"
			}
			d := Decision{Approved: msg.Approve, Who: who}
			if w != nil {
				w <- d
				delete(s.waiters, msg.Req.ID)
			} else {
				s.early[msg.Req.ID] = d
			}
		}
		s.mu.Unlock()
		if !pending {
			msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("no pending approval %q; `lumen sessions` shows the pending ones", msg.Req.ID)})
			return
		}
		decision := "rejected"
		if msg.Approve {
			decision = "approved"
		}
		msg.Reply(&messages.ApprovalReply{OK: true, ID: msg.Req.ID, Session: s.state.ID, Tool: tool, Decision: decision})
	}
}

// start runs a request after the one in flight, which it cancels.
func (s *session) start(run func(context.Context) messages.AskReply, reply func(any)) {
	prev, prevCancel := s.done, s.cancel
	if prevCancel != nil {
		prevCancel()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	s.cancel, s.done = cancel, done
	go func() {
		defer close(done)
		defer cancel()
		if prev != nil {
			<-prev
		}
		if ctx.Err() != nil { // superseded before it began
			if reply != nil {
				reply(&messages.AskReply{OK: true, Session: s.state.ID, Status: messages.AgentCancelled})
			}
			return
		}
		r := run(ctx)
		if r.Status != messages.AgentCancelled {
			s.cfg.Logf("agent %s: session %s %s after %d steps", s.cfg.Light, s.state.ID, r.Status, r.Steps)
		}
		if reply != nil {
			reply(&r)
		}
	}()
}

// Record journals an event of the session and applies it (Env). Steps
// that only record what happened (a model reply, a call's result) are
// appended without waiting; the journal keeps one publisher's appends in
// order, and every step that must be durable before the session goes on
// (a change about to run, an approval to wait for, the end of a request)
// waits for all of them. A crash can lose only steps that changed nothing
// yet: at worst one model call is made again after a restart.
func (s *session) Record(ctx context.Context, ev messages.OutAgentData) error {
	if s.stopped.Load() {
		return errStopped
	}
	ev.Session = s.state.ID
	ev.Step = s.state.Step + 1
	now := s.cfg.Clock.Now().UTC()
	if ev.Kind == messages.AgentKindApproval && ev.Call != nil {
		s.mu.Lock()
		s.expect, s.expectTool = ev.Approval, ev.Call.Tool
		s.mu.Unlock()
	}
	env, err := messages.AgentStep(s.cfg.Light, ev, now)
	if err != nil {
		return fmt.Errorf("agent: encode step: %w", err)
	}
	p, err := s.cfg.Journal.AppendAsync(subject.Out(s.cfg.Light, messages.OutAgent), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID))
	if err != nil {
		return fmt.Errorf("agent: journal step %d: %w", ev.Step, err)
	}
	s.unacked = append(s.unacked, p)
	switch ev.Kind {
	case messages.AgentKindCall, messages.AgentKindApproval, messages.AgentKindEnd:
		if err := s.flush(ctx); err != nil {
			return err
		}
	}
	if ev.Kind == messages.AgentKindApproval || ev.Kind == messages.AgentKindEnd {
		// The journal's retention may purge the session's events once a
		// light's snapshot covers them; this record keeps the session. It
		// is saved before anyone can see the step in the session.
		next, err := s.state.after(ev, now)
		if err == nil {
			s.snapshot(ctx, next)
		}
	}
	s.mu.Lock()
	s.state.Apply(ev, now)
	s.mu.Unlock()
	return nil
}

// snapshot saves a session's state in the snapshot bucket; a failure
// only costs the state's survival of a purge, so it is logged.
func (s *session) snapshot(ctx context.Context, b []byte) {
	if err := s.cfg.Journal.SaveRecord(ctx, SnapshotKey(s.cfg.Light, s.state.ID), b); err != nil {
		s.cfg.Logf("agent %s: snapshot session %s: %v", s.cfg.Light, s.state.ID, err)
	}
}

// SnapshotKey is where a session's snapshot is kept in the snapshot
// bucket.
func SnapshotKey(light, session string) string { return "agent." + light + "." + session }

// flush waits until every step appended so far is durable.
func (s *session) flush(ctx context.Context) error {
	for len(s.unacked) > 0 {
		if _, err := s.unacked[0].Wait(ctx); err != nil {
			s.unacked = nil
			return fmt.Errorf("agent: journal: %w", err)
		}
		s.unacked = s.unacked[1:]
	}
	return nil
}

// Decide waits for a decision on approval id (Env).
func (s *session) Decide(ctx context.Context, id string) (Decision, error) {
	s.mu.Lock()
	if d, ok := s.early[id]; ok {
		delete(s.early, id)
		if s.expect == id {
			s.expect, s.expectTool = "", ""
		}
		s.mu.Unlock()
		return d, nil
	}
	w := make(chan Decision, 1)
	s.waiters[id] = w
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.waiters, id)
		if s.expect == id {
			s.expect, s.expectTool = "", ""
		}
		s.mu.Unlock()
	}()
	select {
	case d := <-w:
		return d, nil
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

func (s *session) pendingID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state.Pending == nil {
		return ""
	}
	return s.state.Approval
}

func (s *session) info(transcript bool) messages.SessionInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state.Info(transcript)
}

// validSession checks a session name: [a-z0-9_-], 1 to 64.
func validSession(name string) error {
	if len(name) == 0 || len(name) > 64 {
		return fmt.Errorf("ask: session %q must be 1 to 64 characters of a-z, 0-9, _ and -", name)
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return fmt.Errorf("ask: session %q must be 1 to 64 characters of a-z, 0-9, _ and -", name)
		}
	}
	return nil
}
