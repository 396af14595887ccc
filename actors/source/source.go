// Package source runs a light's data sources: a manager per light follows
// the source definitions journaled in the light's model and turns each
// source's result into ordinary inputs of the light (one set_var per
// variable update, then a fire of the source's transition), sent as NATS
// requests to lumen.<light>.cmd.*. Replay therefore never calls the
// network nor recomputes anything: it reads the values from the journal.
//
//   - poll: on its schedule, runs its tool through the light's tool
//     manager; the result is the tool's.
//   - internal: on its schedule, computes state_duration,
//     transitions_today or last_5_transitions from the light's state
//     outputs (history.go); transitions_today counts from midnight in the
//     daemon's time zone (Config.Location, default $TZ or the system's),
//     the zone of the expressions' Date.
//   - nats: on every message on its subject; the result is the payload
//     (plugins/source.PushResult). Messages are handled one at a time, in
//     order; at most maxQueue wait.
//   - mqtt: a nats source on the subject the embedded server's MQTT
//     listener publishes its topic as (home/doorbell → home.doorbell).
//   - webhook: on every POST to the daemon's HTTP port (Hooks, hooks.go),
//     queued like a nats message; the request is answered once it is
//     queued, or refused when it can never be stored.
//   - gpio: on every debounced change of its pin that makes the edge it
//     wants, published by the hardware actor, which owns the pins
//     (gpio.go); queued like a nats message.
//   - transition (a custom transition): on its schedule, runs its
//     predicate tool and fires when the result turns from falsy to truthy
//     (plugins/source.Edge); it stores nothing, and only the fire is
//     journaled. The last result is kept in memory: the first one after a
//     start is the baseline and never fires.
//
// A failure (the tool fails, a result lacks a stored path, a message is
// too large, the light refuses an input) journals no input, so the light
// keeps its last values; it is journaled as an error event of kind
// "source" and a polled source backs off (plugins/source.Backoff). The
// manager never touches the light's actor, so a source cannot crash it.
//
// The time of a source's last run is kept in memory only: after a restart
// the sources found at start count the start as their last run.
package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	psrc "github.com/lumen-home/lumen/plugins/source"
)

// Config configures the sources of one light.
type Config struct {
	Light string
	// Tools is the light's tool manager (actors/tool), which runs fetches.
	Tools *actor.PID
	// Conn reads the definitions and sends the fetched values to the
	// light as commands.
	Conn *nats.Conn
	// Tick is how often schedules are checked (default 1 s).
	Tick time.Duration
	// Timeout bounds one tool run and each command (default 30 s).
	Timeout time.Duration
	// Journal, when set, records each failed run as an error event of
	// kind "source" (cause 0: not an output of an input, and replay does
	// not recompute it), so `lumen tail` and the agent see it.
	Journal *journal.Journal
	// Location is the time zone of transitions_today's midnight (default
	// time.Local: $TZ, else the system's).
	Location *time.Location
	// Hooks is the base URL of the daemon's webhooks (http://HOST:PORT),
	// empty when it has no HTTP port: a webhook source then journals an
	// error event that says how to turn it on.
	Hooks string
	// Now is the clock (default time.Now).
	Now  func() time.Time
	Logf func(format string, args ...any)
}

type (
	defsMsg struct {
		list   []json.RawMessage
		loaded bool // false: the light did not answer
	}
	reloadT struct{}
	tickT   struct{}
	doneMsg struct {
		name  string
		raw   string // the definition that ran
		err   error
		truth *bool // a custom transition's predicate result
	}
	// pushMsg is a message on a nats source's subject.
	pushMsg struct {
		name, raw string
		payload   []byte
	}
)

// queued is a pushed message waiting to be stored: its payload, or for a
// webhook the result already read from its body.
type queued struct {
	payload []byte
	result  json.RawMessage
}

// maxQueue bounds the messages of a nats source that wait while one is
// being stored: a flood beyond it is dropped, with an error event.
const maxQueue = 64

// state is the schedule of one source.
type state struct {
	def      psrc.Def
	raw      string
	lastRun  time.Time
	failures int
	retryAt  time.Time
	running  bool
	sub      *nats.Subscription // nats sources
	queue    []queued           // push sources: messages waiting
	dropped  int                // payloads dropped since the last error event
	truth    *bool              // transition: the last result, nil before the first
}

// Manager runs the data sources of one light.
type Manager struct {
	cfg     Config
	sub     *nats.Subscription
	cancel  context.CancelFunc
	loading bool
	stale   bool
	srcs    map[string]*state
	resumed bool // the sources found at start are scheduled
	hist    history
	gpio    gpioState
}

// Props returns the manager's props.
func Props(cfg Config) (*actor.Props, error) {
	if err := subject.ValidLight(cfg.Light); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.Conn == nil || cfg.Tools == nil {
		return nil, errors.New("source: a connection and the tool manager are required")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: cfg} }), nil
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.srcs = map[string]*state{}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		sub, err := m.cfg.Conn.Subscribe(subject.Out(m.cfg.Light, messages.OutConfig), func(*nats.Msg) { root.Send(self, &reloadT{}) })
		if err != nil {
			panic(fmt.Sprintf("source %s: follow the light's configuration: %v", m.cfg.Light, err))
		}
		m.sub = sub
		m.followGPIO(ctx)
		bg, cancel := context.WithCancel(context.Background())
		m.cancel = cancel
		go func() {
			t := time.NewTicker(m.cfg.Tick)
			defer t.Stop()
			for {
				select {
				case <-bg.Done():
					return
				case <-t.C:
					root.Send(self, &tickT{})
				}
			}
		}()
		m.load(ctx)
	case *actor.Stopping, *actor.Restarting:
		if m.sub != nil {
			_ = m.sub.Unsubscribe()
		}
		m.gpio.stop()
		if m.cancel != nil {
			m.cancel()
		}
		for _, st := range m.srcs {
			st.unsubscribe()
		}
		m.hist.stop()
	case *reloadT:
		m.load(ctx)
	case *defsMsg:
		m.loading = false
		m.apply(ctx, msg.list)
		m.drainGPIO(ctx)
		if !m.resumed && msg.loaded {
			// The sources found at start ran before the restart, at an
			// unknown moment: count the start as their last run, so a
			// restart mid-interval never runs (and fires) a slot twice.
			// A slot may be skipped instead.
			m.resumed = true
			for _, st := range m.srcs {
				st.lastRun = m.cfg.Now()
			}
		}
		if m.stale {
			m.stale = false
			m.load(ctx)
		}
	case *tickT:
		m.tick(ctx)
	case *doneMsg:
		m.done(ctx, msg)
	case *pushMsg:
		m.push(ctx, msg)
	case *gpioMsg:
		m.gpioEdge(ctx, msg.payload)
	case *Hook:
		ctx.Respond(m.hook(ctx, msg))
	case *histMsg:
		m.hist.add(msg, m.cfg.Now())
	}
}

// load reads the light's sources off the actor's goroutine.
func (m *Manager) load(ctx actor.Context) {
	if m.loading {
		m.stale = true
		return
	}
	m.loading = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	nc, name, logf := m.cfg.Conn, m.cfg.Light, m.cfg.Logf
	go func() {
		var r messages.SourcesReply
		if err := light.Ask(context.Background(), nc, name, messages.VerbListSources, &r, 50, "sources of "+name, logf); err != nil {
			root.Send(self, &defsMsg{}) // give up this round; the next config change reloads
			return
		}
		root.Send(self, &defsMsg{list: r.Sources, loaded: true})
	}()
}

// apply follows the definitions: a new or changed source starts afresh,
// a deleted one is forgotten (a run under way finishes, and is ignored).
func (m *Manager) apply(ctx actor.Context, list []json.RawMessage) {
	if list == nil && len(m.srcs) > 0 {
		return // the load failed: keep what runs
	}
	want := map[string]*state{}
	internal := false
	for _, raw := range list {
		var d psrc.Def
		if err := d.UnmarshalJSON(raw); err != nil {
			m.cfg.Logf("source %s: skip a definition: %v", m.cfg.Light, err)
			continue
		}
		switch d.Kind() {
		case psrc.TypePoll, psrc.TypeNATS, psrc.TypeMQTT, psrc.TypeWebhook, psrc.TypeTransition, psrc.TypeGPIO:
		case psrc.TypeInternal:
			internal = true
		default:
			continue // the other push sources do not run yet
		}
		if old, ok := m.srcs[d.Name]; ok && old.raw == string(raw) {
			want[d.Name] = old
			continue
		}
		st := &state{def: d, raw: string(raw)}
		switch d.Kind() {
		case psrc.TypeNATS, psrc.TypeMQTT:
			m.subscribe(ctx, st)
		case psrc.TypeWebhook:
			if m.cfg.Hooks == "" {
				m.cfg.Logf("source %s/%s: webhooks are off; start lumen up with --http 127.0.0.1:8080", m.cfg.Light, d.Name)
				m.journalError(d.Name, fmt.Sprintf("source %s is a webhook, but the daemon has no HTTP port; start it with lumen up --http 127.0.0.1:8080 (or http: in lumen.yaml)", d.Name))
			}
		}
		want[d.Name] = st
	}
	for name, st := range m.srcs {
		if want[name] != st {
			st.unsubscribe()
		}
	}
	m.srcs = want
	switch {
	case internal && m.hist.cancel == nil:
		m.hist.epoch++
		bg, cancel := context.WithCancel(context.Background())
		m.hist.cancel = cancel
		self, root := ctx.Self(), ctx.ActorSystem().Root
		go follow(bg, m.cfg.Conn, m.cfg.Light, m.hist.epoch, func(h *histMsg) { root.Send(self, h) }, m.cfg.Logf)
	case !internal && m.hist.cancel != nil:
		m.hist.stop()
	}
}

// subscribe listens on a nats source's subject. A subscription that
// fails is logged and journaled: the definition stays, and the next
// configuration change tries again.
func (m *Manager) subscribe(ctx actor.Context, st *state) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	name, raw := st.def.Name, st.raw
	sub, err := m.cfg.Conn.Subscribe(st.def.ListenSubject(), func(msg *nats.Msg) {
		root.Send(self, &pushMsg{name: name, raw: raw, payload: msg.Data})
	})
	if err != nil {
		m.cfg.Logf("source %s/%s: subscribe to %s: %v", m.cfg.Light, name, st.def.ListenSubject(), err)
		m.journalError(name, fmt.Sprintf("source %s cannot listen on %s (%v); redefine it with another subject", name, st.def.ListenSubject(), err))
		return
	}
	st.sub = sub
}

func (st *state) unsubscribe() {
	if st.sub != nil {
		_ = st.sub.Unsubscribe()
		st.sub = nil
	}
}

// push queues a message of a nats source and stores it when the source
// is idle.
func (m *Manager) push(ctx actor.Context, msg *pushMsg) {
	s, ok := m.srcs[msg.name]
	if !ok || s.raw != msg.raw {
		return // deleted or redefined meanwhile
	}
	if len(s.queue) >= maxQueue {
		s.dropped++
		if s.dropped == 1 {
			m.journalError(s.def.Name, fmt.Sprintf("source %s receives messages faster than the light stores them; more than %d wait, so messages are dropped. Publish less often", s.def.Name, maxQueue))
		}
		return
	}
	s.queue = append(s.queue, queued{payload: msg.payload})
	m.pump(ctx, s)
}

// pump starts storing the next waiting message of an idle nats source; a
// message that is no result is refused at once with an error event.
func (m *Manager) pump(ctx actor.Context, s *state) {
	for !s.running && len(s.queue) > 0 {
		next := s.queue[0]
		s.queue = s.queue[1:]
		if len(s.queue) == 0 {
			s.dropped = 0
		}
		result, err := next.result, error(nil)
		if result == nil {
			result, err = psrc.PushResult(s.def, next.payload)
		}
		if err != nil {
			m.cfg.Logf("source %s/%s: %v", m.cfg.Light, s.def.Name, err)
			m.journalError(s.def.Name, sentence(err))
			continue
		}
		s.running = true
		m.start(ctx, s.def, s.raw, result)
	}
}

// sentence is an error's text without its package prefix.
func sentence(err error) string {
	if se := (*psrc.Error)(nil); errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}

func (m *Manager) tick(ctx actor.Context) {
	now := m.cfg.Now()
	for _, s := range m.srcs {
		if s.running || !s.def.Polled() {
			continue
		}
		internal := s.def.Kind() == psrc.TypeInternal
		if internal && !m.hist.ready {
			continue // the history is not read yet: the values would be wrong
		}
		if s.failures > 0 {
			if now.Before(s.retryAt) {
				continue
			}
		} else if !psrc.Due(s.def, s.lastRun, now) || now.Before(psrc.Next(s.def, s.lastRun, psrc.Seed(m.cfg.Light, s.def.Name))) {
			continue
		}
		var result json.RawMessage
		if internal {
			// Computed here, where the history lives; journaled as
			// set_var like a fetched result, so replay never recomputes
			// it.
			r, err := psrc.Internal(s.def, m.hist.entries, now, m.cfg.Location)
			if err != nil {
				m.cfg.Logf("source %s/%s: %v", m.cfg.Light, s.def.Name, err)
				continue
			}
			result = r
		}
		s.running, s.lastRun = true, now
		if s.def.Kind() == psrc.TypeTransition {
			m.startPredicate(ctx, s.def, s.raw, s.truth)
			continue
		}
		m.start(ctx, s.def, s.raw, result)
	}
}

// startPredicate runs a custom transition's predicate off the actor's
// goroutine, and fires the transition on a rising edge.
func (m *Manager) startPredicate(ctx actor.Context, def psrc.Def, raw string, prev *bool) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		done := &doneMsg{name: def.Name, raw: raw}
		var result json.RawMessage
		result, done.err = m.fetch(root, def)
		if done.err == nil {
			now := psrc.Truthy(result)
			if psrc.Edge(prev, now) {
				done.err = m.command(messages.VerbFire, messages.FireRequest{Transition: def.Fires}, nil)
			}
			if done.err == nil {
				done.truth = &now
			}
		}
		root.Send(self, done)
	}()
}

func (m *Manager) done(ctx actor.Context, msg *doneMsg) {
	s, ok := m.srcs[msg.name]
	if !ok || s.raw != msg.raw {
		return // deleted or redefined meanwhile
	}
	s.running = false
	if !s.def.Polled() {
		if msg.err != nil {
			m.cfg.Logf("source %s/%s: %v; the last values are kept", m.cfg.Light, s.def.Name, msg.err)
			m.journalError(s.def.Name, fmt.Sprintf("source %s: a message was not stored: %s", s.def.Name, sentence(msg.err)))
		}
		m.pump(ctx, s)
		return
	}
	if msg.err == nil {
		s.failures = 0
		if msg.truth != nil {
			s.truth = msg.truth
		}
		return
	}
	s.failures++
	wait := psrc.Backoff(s.failures, s.def.Interval())
	s.retryAt = m.cfg.Now().Add(wait)
	m.cfg.Logf("source %s/%s: %v; the last values are kept, retry in %v (failure %d)", m.cfg.Light, s.def.Name, msg.err, wait, s.failures)
	m.journalError(s.def.Name, fmt.Sprintf("source %s failed (%v); the light keeps the last values and retries in %v", s.def.Name, msg.err, wait.Round(time.Millisecond)))
}

// journalError records a failed run without waiting for the journal.
func (m *Manager) journalError(source, sentence string) {
	if m.cfg.Journal == nil {
		return
	}
	data, _ := json.Marshal(messages.OutErrorData{Code: 502, Kind: messages.ErrorSource, Error: sentence})
	env := messages.Envelope{V: messages.Version, ID: m.cfg.Light + ":source:" + nuid.Next(), Type: messages.OutError,
		Light: m.cfg.Light, Time: m.cfg.Now().UTC(), Data: data}
	if _, err := m.cfg.Journal.AppendAsync(subject.Out(m.cfg.Light, messages.OutError), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
		m.cfg.Logf("source %s/%s: journal the failure: %v", m.cfg.Light, source, err)
	}
}

// start runs one source off the actor's goroutine: it stores result, or
// for a poll source (result nil) what its tool fetches.
func (m *Manager) start(ctx actor.Context, def psrc.Def, raw string, result json.RawMessage) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		var err error
		if result == nil {
			result, err = m.fetch(root, def)
		}
		if err == nil {
			err = m.store(def, result)
		}
		root.Send(self, &doneMsg{name: def.Name, raw: raw, err: err})
	}()
}

// fetch runs a poll source's tool and returns its result.
func (m *Manager) fetch(root *actor.RootContext, def psrc.Def) (json.RawMessage, error) {
	res, err := root.RequestFuture(m.cfg.Tools, &tool.Run{Name: def.Fetch.Tool, Args: def.Fetch.Args}, m.cfg.Timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("tool %s did not answer: %v", def.Fetch.Tool, err)
	}
	switch r := res.(type) {
	case *messages.RunToolReply:
		return r.Result, nil
	case *messages.ErrorReply:
		return nil, fmt.Errorf("fetch failed: %s", r.Error)
	default:
		return nil, fmt.Errorf("fetch: unexpected answer %T", res)
	}
}

// store computes the variable updates of result and journals them, then
// the fire, through the light.
func (m *Manager) store(def psrc.Def, result json.RawMessage) error {
	var model messages.GetReply
	if err := m.command(messages.VerbGet, struct{}{}, &model); err != nil {
		return err
	}
	ups, err := psrc.Updates(def, result, model.Vars)
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := m.command(messages.VerbSetVar, u.Input(), nil); err != nil {
			return err
		}
	}
	if def.Fires != "" {
		if err := m.command(messages.VerbFire, messages.FireRequest{Transition: def.Fires}, nil); err != nil {
			return err
		}
	}
	return nil
}

// command sends one command to the light and decodes its reply into out.
func (m *Manager) command(verb string, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return err
	}
	msg, err := m.cfg.Conn.Request(subject.Cmd(m.cfg.Light, verb), b, m.cfg.Timeout)
	if err != nil {
		return fmt.Errorf("%s: %v", verb, err)
	}
	var e messages.ErrorReply
	if json.Unmarshal(msg.Data, &e) == nil && !e.OK && e.Error != "" {
		return fmt.Errorf("%s: the light refused it (%d): %s", verb, e.Code, e.Error)
	}
	if out != nil {
		if err := json.Unmarshal(msg.Data, out); err != nil {
			return fmt.Errorf("%s: %v", verb, err)
		}
	}
	return nil
}
