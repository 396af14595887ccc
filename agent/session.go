package agent

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// session is one conversation. Its actor owns the session's state as the
// recorded steps make it (view) and answers approvals and listings from
// it. A request runs in its own goroutine, one at a time, on its own copy
// of the state, which it hands to the next request when it ends; it tells
// the actor each step it records, and asks it for decisions, by message.
// A new input cancels the request in flight.
type session struct {
	cfg   Config
	loop  *Loop
	view  *State
	snaps *snapshots
	due   clock.Timer // sends saveView: the view's snapshot is to be saved

	waiters map[string]chan Decision
	early   map[string]Decision // decisions that came before their waiter
	// decided are the approvals decided: a second decision, which may
	// come before the first one's is journaled, is refused.
	decided map[string]bool
	// The approval being journaled: its event may reach an approver
	// before the step comes back to the actor.
	expect, expectTool string

	stopped context.Context // ends when the actor stops: record nothing more
	stop    context.CancelFunc
	cancel  context.CancelFunc // the request in flight
	done    chan *State        // the state the request in flight ends with
	running int                // request goroutines started and not ended
}

// Messages between a session's actor and its request goroutine, and the
// manager's questions.
type (
	// stepped: the request recorded a step; the actor applies it too.
	stepped struct {
		ev messages.OutAgentData
		at time.Time
	}
	// expecting: the request is about to journal approval id.
	expecting struct{ id, tool string }
	// awaitDecision: the request waits for approval id's decision on ch.
	awaitDecision struct {
		id string
		ch chan Decision
	}
	// forgetDecision: the request no longer waits for approval id.
	forgetDecision struct{ id string }
	// infoReq asks for the session's *messages.SessionInfo.
	infoReq struct{ transcript bool }
	// pendingReq asks for the id of the approval the session waits for
	// ("" when none), a string.
	pendingReq struct{}
	// saveView: time to save the view's snapshot.
	saveView struct{}
	// requestEnded: a request's goroutine ends (its last message, so
	// after all its steps).
	requestEnded struct{}
	// idleReq asks whether the journal holds nothing of the session its
	// saved snapshot lacks, and none is about to come (the manager's
	// mark); the answer goes to ch, which has room for it.
	idleReq struct{ ch chan<- bool }
)

// errStopped refuses steps of a session whose actor stops.
var errStopped = errors.New("agent: the session is stopping")

// Receive handles one message.
func (s *session) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		if s.stop == nil { // not on a restart: a request may still run
			s.stopped, s.stop = context.WithCancel(context.Background())
		}
		if s.view.Open() {
			s.cfg.Logf("agent %s: session %s continues after a restart", s.cfg.Light, s.view.ID)
			s.saveNow() // it may live only in events so far
			s.start(ctx, func(ctx context.Context, r *request) messages.AskReply { return s.loop.Continue(ctx, r.state, r) }, nil)
		}
	case *actor.Stopping:
		// The daemon stops (or the manager restarts): the request in
		// flight stops recording, so the journal keeps it open and the
		// next start continues it where it stood.
		s.stop()
		if s.cancel != nil {
			s.cancel()
			<-s.done
		}
		if s.due != nil {
			s.saveNow()
		}
		s.snaps.wg.Wait()
	case *stepped:
		s.view.Apply(msg.ev, msg.at)
		if msg.ev.Kind == messages.AgentKindEnd && s.due == nil {
			// The journal holds the steps until then; saving once for
			// a burst of requests keeps the snapshot off their way.
			s.saveLater(ctx)
		}
	case *requestEnded:
		s.running--
	case *idleReq:
		idle := s.idle()
		if !idle && s.running == 0 && s.due == nil {
			s.saveLater(ctx) // a failed save is tried again, or the mark would wait for the next request
		}
		msg.ch <- idle
	case *saveView:
		if s.due != nil {
			s.due = nil
			if b, err := s.view.snapshot(); err == nil {
				step := s.view.Step
				s.snaps.wg.Go(func() { s.snaps.save(step, b) })
			}
		}
	case *expecting:
		s.expect, s.expectTool = msg.id, msg.tool
	case *awaitDecision:
		if d, ok := s.early[msg.id]; ok {
			delete(s.early, msg.id)
			msg.ch <- d
			return
		}
		s.waiters[msg.id] = msg.ch
	case *forgetDecision:
		delete(s.waiters, msg.id)
		if s.expect == msg.id {
			s.expect, s.expectTool = "", ""
		}
	case *infoReq:
		in := s.view.Info(msg.transcript)
		ctx.Respond(&in)
	case *pendingReq:
		id := ""
		if s.view.Pending != nil {
			id = s.view.Approval
		}
		ctx.Respond(id)
	case *Ask:
		s.ask(ctx, msg)
	case *Decide:
		s.decide(msg)
	}
}

// ask starts a request, or with no text only cancels the one in flight.
func (s *session) ask(ctx actor.Context, msg *Ask) {
	text := strings.TrimSpace(msg.Req.Text)
	if text == "" {
		if s.cancel != nil {
			s.cancel()
		}
		msg.Reply(&messages.AskReply{OK: true, Session: s.view.ID, Status: messages.AgentCancelled})
		return
	}
	who := msg.Req.Who
	if who == "" {
		who = "nats"
	}
	reply := msg.Reply
	if msg.Req.Async {
		msg.Reply(&messages.AskReply{OK: true, Session: s.view.ID, Status: messages.AgentAccepted})
		reply = nil
	}
	direct := msg.direct
	s.start(ctx, func(ctx context.Context, r *request) messages.AskReply {
		return s.loop.ask(ctx, r.state, r, text, who, direct)
	}, reply)
}

// decide hands a decision to the request waiting for it, or keeps it for
// the request about to wait.
func (s *session) decide(msg *Decide) {
	pending := s.view.Approval == msg.Req.ID && s.view.Pending != nil
	tool := s.expectTool
	if pending {
		tool = s.view.Pending.Tool
	} else if s.expect == msg.Req.ID {
		pending = true
	}
	if !pending || s.decided[msg.Req.ID] {
		msg.Reply(&messages.ErrorReply{Code: 404, Error: fmt.Sprintf("no pending approval %q; `lumen sessions` shows the pending ones", msg.Req.ID)})
		return
	}
	who := msg.Req.Who
	if who == "" {
		who = "nats"
	}
	d := Decision{Approved: msg.Approve, Who: who}
	s.decided[msg.Req.ID] = true
	if w := s.waiters[msg.Req.ID]; w != nil {
		w <- d
		delete(s.waiters, msg.Req.ID)
	} else {
		s.early[msg.Req.ID] = d
	}
	decision := "rejected"
	if msg.Approve {
		decision = "approved"
	}
	msg.Reply(&messages.ApprovalReply{OK: true, ID: msg.Req.ID, Session: s.view.ID, Tool: tool, Decision: decision})
}

// start runs a request after the one in flight, which it cancels, on the
// state that one ends with.
func (s *session) start(actx actor.Context, run func(context.Context, *request) messages.AskReply, reply func(any)) {
	prev := s.done
	if s.cancel != nil {
		s.cancel()
	}
	var first *State
	if prev == nil {
		first = s.view.clone()
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan *State, 1)
	s.cancel, s.done = cancel, done
	r := &request{cfg: s.cfg, snaps: s.snaps, stopped: s.stopped, self: actx.Self(), root: actx.ActorSystem().Root}
	s.running++
	go func() {
		defer r.root.Send(r.self, &requestEnded{})
		defer cancel()
		r.state = first
		if prev != nil {
			r.state = <-prev
		}
		defer func() { done <- r.state }()
		if ctx.Err() != nil { // superseded before it began
			if reply != nil {
				reply(&messages.AskReply{OK: true, Session: r.state.ID, Status: messages.AgentCancelled})
			}
			return
		}
		res := run(ctx, r)
		if reply != nil {
			reply(&res)
		}
		if res.Status != messages.AgentCancelled {
			s.cfg.Logf("agent %s: session %s %s after %d steps", s.cfg.Light, r.state.ID, res.Status, res.Steps)
		}
	}()
}

// request is the Env of one request: it owns its copy of the session's
// state and talks to the session's actor only by message.
type request struct {
	cfg     Config
	snaps   *snapshots
	state   *State
	stopped context.Context
	self    *actor.PID
	root    *actor.RootContext
	unacked []*journal.Pending // appended steps not yet known durable
}

// Record journals an event of the session and applies it (Env). Steps
// that only record what happened (a model reply, a call's result) are
// appended without waiting; the journal keeps one publisher's appends in
// order, and every step that must be durable before the session goes on
// (a change about to run, an approval to wait for, the end of a request)
// waits for all of them. A crash can lose only steps that changed nothing
// yet: at worst one model call is made again after a restart.
func (r *request) Record(ctx context.Context, ev messages.OutAgentData) error {
	if r.stopped.Err() != nil {
		return errStopped
	}
	ev.Session = r.state.ID
	ev.Step = r.state.Step + 1
	now := r.cfg.Clock.Now().UTC()
	if ev.Kind == messages.AgentKindApproval && ev.Call != nil {
		r.root.Send(r.self, &expecting{id: ev.Approval, tool: ev.Call.Tool})
	}
	env, err := messages.AgentStep(r.cfg.Light, ev, now)
	if err != nil {
		return fmt.Errorf("agent: encode step: %w", err)
	}
	p, err := r.cfg.Journal.AppendAsync(subject.Out(r.cfg.Light, messages.OutAgent), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID))
	if err != nil {
		return fmt.Errorf("agent: journal step %d: %w", ev.Step, err)
	}
	r.unacked = append(r.unacked, p)
	switch ev.Kind {
	case messages.AgentKindCall, messages.AgentKindApproval, messages.AgentKindEnd:
		if err := r.flush(ctx); err != nil {
			return err
		}
	}
	r.state.Apply(ev, now)
	if ev.Kind == messages.AgentKindApproval {
		// Saved before anyone can see the step in the session (the
		// session's actor saves the others, snapshotDelay after a
		// request ends).
		if b, err := r.state.snapshot(); err == nil {
			r.snaps.save(r.state.Step, b)
		}
	}
	r.root.Send(r.self, &stepped{ev: ev, at: now})
	return nil
}

// flush waits until every step appended so far is durable.
func (r *request) flush(ctx context.Context) error {
	for len(r.unacked) > 0 {
		if _, err := r.unacked[0].Wait(ctx); err != nil {
			r.unacked = nil
			return fmt.Errorf("agent: journal: %w", err)
		}
		r.unacked = r.unacked[1:]
	}
	return nil
}

// Decide waits for a decision on approval id (Env).
func (r *request) Decide(ctx context.Context, id string) (Decision, error) {
	ch := make(chan Decision, 1)
	r.root.Send(r.self, &awaitDecision{id: id, ch: ch})
	defer r.root.Send(r.self, &forgetDecision{id: id})
	select {
	case d := <-ch:
		return d, nil
	case <-ctx.Done():
		return Decision{}, ctx.Err()
	}
}

// idle reports whether the session's saved snapshot holds every step it
// journaled and no request may journal more: none runs (a request waiting
// for an approval runs, so the mark waits for the decision), no snapshot
// is due, and the last one saved is the view's. A save in progress holds
// the lock: not idle yet, and the actor does not wait for it.
func (s *session) idle() bool {
	if s.running > 0 || s.due != nil || !s.snaps.mu.TryLock() {
		return false
	}
	defer s.snaps.mu.Unlock()
	return s.snaps.last == s.view.Step
}

// saveLater has the view's snapshot saved snapshotDelay from now.
func (s *session) saveLater(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	s.due = s.cfg.Clock.AfterFunc(snapshotDelay, func() { root.Send(self, &saveView{}) })
}

// saveNow saves the view's snapshot and waits.
func (s *session) saveNow() {
	if s.due != nil {
		s.due.Stop()
		s.due = nil
	}
	if b, err := s.view.snapshot(); err == nil {
		s.snaps.save(s.view.Step, b)
	}
}

// snapshotDelay is how long after a request ends its session's snapshot
// is saved: the journal holds its steps meanwhile, and one save covers a
// burst of requests.
const snapshotDelay = 100 * time.Millisecond

// snapshots saves a session's state in the snapshot bucket, which keeps
// the session when the journal's retention purges its events (once a
// light's snapshot covers them). It saves one at a time, and never one
// older than the last it saved. A failure only costs the state's
// survival of a purge, so it is logged.
type snapshots struct {
	cfg  Config
	id   string
	mu   sync.Mutex // held while one is saved
	last int        // the step of the last one saved
	wg   sync.WaitGroup
}

func (v *snapshots) save(step int, b []byte) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if step <= v.last {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := v.cfg.Journal.SaveRecord(ctx, SnapshotKey(v.cfg.Light, v.id), b); err != nil {
		v.cfg.Logf("agent %s: snapshot session %s: %v", v.cfg.Light, v.id, err)
		return
	}
	v.last = step
}

// SnapshotKey is where a session's snapshot is kept in the snapshot
// bucket.
func SnapshotKey(light, session string) string { return "agent." + light + "." + session }

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
