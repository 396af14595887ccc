package agent

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/internal/clock"
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
	// Meter counts requests, model calls and the sessions' restarts (the
	// daemon's metrics); nil counts nothing.
	Meter Meter
	// MarkEvery is how often the agent tries to move its mark (where the
	// next start reads its sessions' events from) on; default
	// DefaultMarkEvery.
	MarkEvery time.Duration

	markHook func(seq uint64) // tests: called after each round with the mark as it stands
}

// Messages of the agent actor. Reply is called once, from any goroutine.
type (
	// Ask starts (or, with empty text, only aborts) a request.
	Ask struct {
		Req   messages.AskRequest
		Reply func(any) // *messages.AskReply or *messages.ErrorReply

		direct *messages.AgentToolCall // the direct command Req.Text is, when known already
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
	if cfg.Meter == nil {
		cfg.Meter = noMeter{}
	}
	s := actors.JournaledStrategy(cfg.Light, "agent session", cfg.Journal, cfg.Clock, cfg.Logf).Counted(func(actors.Restart) { cfg.Meter.Restarted("session") })
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: cfg} }, actor.WithSupervisor(s)), nil
}

// Manager is a light's agent: it routes asks and approvals to sessions,
// one actor each, and knows them only by their PIDs.
type Manager struct {
	cfg      Config
	loop     *Loop
	sessions map[string]*actor.PID
	marks    *marker // nil while the journal is a copy (marks are off)
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.loop = &Loop{Model: m.cfg.Model, Tools: m.cfg.Tools, Prompt: LightPrompt(m.cfg.Light, m.cfg.Tools),
			MaxTurns: m.cfg.MaxTurns, CallTimeout: m.cfg.CallTimeout, Logf: m.cfg.Logf, Meter: m.cfg.Meter}
		m.sessions = map[string]*actor.PID{}
		r, err := m.restore()
		if err != nil {
			panic(fmt.Sprintf("agent %s: restore the sessions: %v", m.cfg.Light, err)) // the supervisor retries
		}
		for _, st := range r.states {
			m.spawn(ctx, st, r.saved[st.ID])
		}
		if r.marking {
			m.startMarks(ctx, r.mark)
		}
	case *actor.Stopping, *actor.Restarting:
		m.stopMarks()
	case *Ask:
		name := msg.Req.Session
		if name == "" {
			name = DefaultSession
		}
		if err := validSession(name); err != nil {
			msg.Reply(&messages.ErrorReply{Code: 400, Error: err.Error()})
			return
		}
		if strings.TrimSpace(msg.Req.Text) != "" {
			if full := m.noRoom(); full != nil {
				msg.Reply(full)
				return
			}
			if m.cfg.Model == nil {
				m.unconfigured(ctx, msg)
				return
			}
		}
		m.toSession(ctx, name, msg)
	case *directAsk:
		if full := m.noRoom(); full != nil {
			msg.ask.Reply(full)
			return
		}
		msg.ask.direct = &msg.call
		m.toSession(ctx, msg.session, msg.ask)
	case *Decide:
		m.decide(ctx, msg)
	case *Talk:
		m.talk(ctx, msg)
	case *ListSessions:
		m.list(ctx, msg)
	default:
		m.receiveMark(ctx, msg)
	}
}

// directAsk is an ask that is a direct command, taken with no model,
// and the call it makes.
type directAsk struct {
	ask     *Ask
	session string
	call    messages.AgentToolCall
}

// toSession hands an ask to its session, started if need be.
func (m *Manager) toSession(ctx actor.Context, name string, msg *Ask) {
	pid := m.sessions[name]
	if pid == nil {
		pid = m.spawn(ctx, NewState(name), 0)
	}
	ctx.Send(pid, msg)
}

// unconfigured takes an ask with no model: a direct command (or a learned
// intent) goes on to its session with the call it makes, anything else is
// refused, off the actor's goroutine (the light's states are read over
// NATS, once).
func (m *Manager) unconfigured(ctx actor.Context, msg *Ask) {
	name := cmp.Or(msg.Req.Session, DefaultSession)
	self, root, loop := ctx.Self(), ctx.ActorSystem().Root, &Loop{Tools: m.cfg.Tools}
	go func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		r := loop.Tools.readLocal(c, msg.Req.Text)
		switch {
		case r.call != nil:
			root.Send(self, &directAsk{ask: msg, session: name, call: *r.call})
		case r.world == nil:
			msg.Reply(&messages.ErrorReply{Code: 409, Error: Unconfigured})
		case r.unknown != "":
			msg.Reply(&messages.ErrorReply{Code: 409, Error: NoSuchLight(r.unknown, r.world) + " " + Unconfigured})
		default:
			msg.Reply(&messages.ErrorReply{Code: 409, Error: WithoutModel(msg.Req.Text, r.world)})
		}
	}()
}

// ask asks every session (all when name is "") for q, off the actor's
// goroutine, and gives their answers to then, by session.
func (m *Manager) ask(ctx actor.Context, name string, q any, then func(map[string]any)) {
	pids := map[string]*actor.PID{}
	for n, pid := range m.sessions {
		if name == "" || n == name {
			pids[n] = pid
		}
	}
	root := ctx.ActorSystem().Root
	go func() {
		out := map[string]any{}
		for n, pid := range pids {
			if res, err := root.RequestFuture(pid, q, 10*time.Second).Result(); err == nil {
				out[n] = res
			}
		}
		then(out)
	}()
}

// list answers sessions: every session's info, latest first, or one's
// with its transcript.
func (m *Manager) list(ctx actor.Context, msg *ListSessions) {
	one := msg.Req.Session
	if _, ok := m.sessions[one]; one != "" && !ok {
		msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("sessions: no session %q; `lumen sessions` lists them", one)})
		return
	}
	m.ask(ctx, one, &infoReq{transcript: one != ""}, func(res map[string]any) {
		out := []messages.SessionInfo{}
		for _, r := range res {
			if in, ok := r.(*messages.SessionInfo); ok {
				out = append(out, *in)
			}
		}
		sort.Slice(out, func(i, j int) bool { return out[i].Updated > out[j].Updated })
		msg.Reply(&messages.SessionsReply{OK: true, Agent: m.cfg.Model != nil, Talk: m.cfg.Transcriber != nil, Sessions: out})
	})
}

// talk transcribes off the actor's goroutine, then asks like text would
// (an empty transcript only aborts), then speaks the answer.
func (m *Manager) talk(ctx actor.Context, msg *Talk) {
	if m.cfg.Transcriber == nil {
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
	if full := m.noRoom(); full != nil {
		msg.Reply(full)
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
	if msg.Req.ID != "" {
		i := strings.LastIndexByte(msg.Req.ID, '-')
		var pid *actor.PID
		if i > 0 {
			pid = m.sessions[msg.Req.ID[:i]]
		}
		if pid == nil {
			msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("no pending approval %q; `lumen sessions` shows the pending ones", msg.Req.ID)})
			return
		}
		ctx.Send(pid, msg)
		return
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	m.ask(ctx, "", &pendingReq{}, func(res map[string]any) {
		var pending []string
		for _, r := range res {
			if id, _ := r.(string); id != "" {
				pending = append(pending, id)
			}
		}
		switch len(pending) {
		case 0:
			msg.Reply(&messages.ErrorReply{Code: 404, Error: "nothing waits for an approval"})
		case 1:
			req := *msg
			req.Req.ID = pending[0]
			root.Send(self, &req)
		default:
			sort.Strings(pending)
			msg.Reply(&messages.ErrorReply{Code: 409, Error: "several approvals are pending (" + strings.Join(pending, ", ") + "); name one"})
		}
	})
}

// noRoom is the 507 that refuses a new request while the disk is full
// (journal.Room): its steps would take the room kept for the outputs of
// accepted inputs, and each change it asked for would be refused anyway.
// nil when there is room.
func (m *Manager) noRoom() *messages.ErrorReply {
	return actors.NoRoom(m.cfg.Journal.Room())
}

// spawn starts the actor of a session whose state is st, saved in its
// snapshot up to step saved.
func (m *Manager) spawn(ctx actor.Context, st *State, saved int) *actor.PID {
	s := &session{cfg: m.cfg, loop: m.loop, view: st, snaps: &snapshots{cfg: m.cfg, id: st.ID, last: saved},
		waiters: map[string]chan Decision{}, early: map[string]Decision{}, decided: map[string]bool{}}
	pid := ctx.Spawn(actor.PropsFromProducer(func() actor.Actor { return s }))
	m.sessions[st.ID] = pid
	return pid
}

// restored is what restore found.
type restored struct {
	states  map[string]*State
	saved   map[string]int // the step each session's saved snapshot has
	marking bool           // marks are on (not through a copy)
	mark    uint64         // the mark as restore leaves it
	from    uint64         // the first journal sequence read
	events  int            // the agent events read
}

// restore folds the light's agent events into sessions: those after the
// mark over the saved snapshots. It then saves the sessions the events
// moved on, and, once all are saved, moves the mark to the journal's last
// sequence when it began (the replay reads at least that far). Through a
// copy of the journal (a house's), whose sequences are its origins',
// there is no mark and it reads every event.
func (m *Manager) restore() (restored, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	r := restored{states: map[string]*State{}, saved: map[string]int{}, marking: !m.cfg.Journal.Copied(), from: 1}
	snaps, err := m.cfg.Journal.Records(ctx, SnapshotKey(m.cfg.Light, ""))
	if err != nil {
		return r, err
	}
	for key, b := range snaps {
		st := &State{}
		if err := json.Unmarshal(b, st); err != nil || st.ID == "" {
			m.cfg.Logf("agent %s: skip session snapshot %s: %v", m.cfg.Light, key, err)
			continue
		}
		r.states[st.ID], r.saved[st.ID] = st, st.Step
	}
	var last uint64
	if r.marking {
		if last, err = m.cfg.Journal.LastSeq(ctx); err != nil {
			return r, err
		}
		r.mark = m.readMark(ctx, last)
		r.from = r.mark + 1 // below the journal's first (purged up to there): from the first
	}
	err = m.cfg.Journal.Replay(ctx, subject.Out(m.cfg.Light, messages.OutAgent), r.from, 0, func(msg journal.Msg) error {
		r.events++
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
		st := r.states[ev.Session]
		if st == nil {
			st = NewState(ev.Session)
			r.states[ev.Session] = st
		}
		if ev.Step <= st.Step {
			return nil // the snapshot has it
		}
		st.Apply(ev, env.Time)
		return nil
	})
	if err != nil || !r.marking {
		return r, err
	}
	if r.events > 0 {
		m.cfg.Logf("agent %s: restored the sessions from %d events after journal sequence %d", m.cfg.Light, r.events, r.mark)
	}
	saved := true
	for id, st := range r.states {
		if st.Step <= r.saved[id] {
			continue
		}
		b, err := st.snapshot()
		if err == nil {
			err = m.cfg.Journal.SaveRecord(ctx, SnapshotKey(m.cfg.Light, id), b)
		}
		if err != nil {
			m.cfg.Logf("agent %s: snapshot session %s: %v", m.cfg.Light, id, err)
			saved = false
			continue
		}
		r.saved[id] = st.Step
	}
	if saved && last > r.mark {
		if err := m.cfg.Journal.SaveRecord(ctx, MarkKey(m.cfg.Light), encodeMark(last)); err != nil {
			m.cfg.Logf("agent %s: save the sessions' mark: %v", m.cfg.Light, err)
		} else {
			r.mark = last
		}
	}
	return r, nil
}
