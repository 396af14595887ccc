// Package source runs a light's poll data sources: a manager per light
// follows the source definitions journaled in the light's model and, on
// each source's schedule, runs its tool through the light's tool manager,
// then journals what it fetched as ordinary inputs of the light (one
// set_var per variable update, then a fire of the source's transition),
// sent as NATS requests to lumen.<light>.cmd.*. Replay therefore never
// calls the network: it reads the fetched values from the journal.
//
// A failure (the tool fails, its result lacks a stored path, the light
// refuses an input) journals nothing, so the light keeps its last values;
// it is logged and the source backs off (plugins/source.Backoff). The
// manager never touches the light's actor, so a source cannot crash it.
//
// The time of a source's last run is kept in memory only: after a restart
// every source runs once at once, then on its interval.
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
		name string
		raw  string // the definition that ran
		err  error
	}
)

// state is the schedule of one source.
type state struct {
	def      psrc.Def
	raw      string
	lastRun  time.Time
	failures int
	retryAt  time.Time
	running  bool
}

// Manager runs the poll sources of one light.
type Manager struct {
	cfg     Config
	sub     *nats.Subscription
	cancel  context.CancelFunc
	loading bool
	stale   bool
	srcs    map[string]*state
	resumed bool // the sources found at start are scheduled
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
		if m.cancel != nil {
			m.cancel()
		}
	case *reloadT:
		m.load(ctx)
	case *defsMsg:
		m.loading = false
		m.apply(msg.list)
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
		m.done(msg)
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
func (m *Manager) apply(list []json.RawMessage) {
	if list == nil && len(m.srcs) > 0 {
		return // the load failed: keep what runs
	}
	want := map[string]*state{}
	for _, raw := range list {
		var d psrc.Def
		if err := d.UnmarshalJSON(raw); err != nil {
			m.cfg.Logf("source %s: skip a definition: %v", m.cfg.Light, err)
			continue
		}
		if d.Kind() != psrc.TypePoll {
			continue // only poll sources run here
		}
		if old, ok := m.srcs[d.Name]; ok && old.raw == string(raw) {
			want[d.Name] = old
			continue
		}
		want[d.Name] = &state{def: d, raw: string(raw)}
	}
	m.srcs = want
}

func (m *Manager) tick(ctx actor.Context) {
	now := m.cfg.Now()
	for _, s := range m.srcs {
		if s.running {
			continue
		}
		if s.failures > 0 {
			if now.Before(s.retryAt) {
				continue
			}
		} else if !psrc.Due(s.def, s.lastRun, now) || now.Before(psrc.Next(s.def, s.lastRun, psrc.Seed(m.cfg.Light, s.def.Name))) {
			continue
		}
		s.running, s.lastRun = true, now
		m.start(ctx, s.def, s.raw)
	}
}

func (m *Manager) done(msg *doneMsg) {
	s, ok := m.srcs[msg.name]
	if !ok || s.raw != msg.raw {
		return // deleted or redefined meanwhile
	}
	s.running = false
	if msg.err == nil {
		s.failures = 0
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

// start runs one source off the actor's goroutine.
func (m *Manager) start(ctx actor.Context, def psrc.Def, raw string) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	go func() {
		err := m.run(root, def)
		root.Send(self, &doneMsg{name: def.Name, raw: raw, err: err})
	}()
}

// run fetches, computes the updates and journals them through the light.
func (m *Manager) run(root *actor.RootContext, def psrc.Def) error {
	res, err := root.RequestFuture(m.cfg.Tools, &tool.Run{Name: def.Fetch.Tool, Args: def.Fetch.Args}, m.cfg.Timeout).Result()
	if err != nil {
		return fmt.Errorf("tool %s did not answer: %v", def.Fetch.Tool, err)
	}
	var result json.RawMessage
	switch r := res.(type) {
	case *messages.RunToolReply:
		result = r.Result
	case *messages.ErrorReply:
		return fmt.Errorf("fetch failed: %s", r.Error)
	default:
		return fmt.Errorf("fetch: unexpected answer %T", res)
	}
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
