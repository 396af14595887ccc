// Package source runs a light's data sources. A manager per light follows
// the source definitions journaled in the light's model and supervises one
// actor per source (child.go), which turns each of its runs into one input
// of the light: the data input {"source","vars"} (messages.InDataData),
// sent as the NATS request lumen.<light>.cmd.data. The light applies a run
// as a whole: it keeps each variable's previous value as <var>_prev, sets
// the variables, fires the source's transition, and records the run's
// time as the source's last run. Replay therefore never calls the network
// nor recomputes anything: it reads the values from the journal.
//
//   - poll: on its schedule, runs its tool through the light's tool
//     manager; the result is the tool's.
//   - internal: on its schedule, computes state_duration,
//     transitions_today or last_5_transitions from the light's state
//     outputs, which the source's actor follows in the journal
//     (history.go); transitions_today counts from midnight in the
//     daemon's time zone (Config.Location, default $TZ or the system's),
//     the zone of the expressions' Date.
//   - nats: on every message on its subject; the result is the payload
//     (datasource.PushResult). Messages are handled one at a time, in
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
//     (datasource.Edge); it stores nothing, and only the fire is
//     journaled. The last result is kept in memory: the first one after a
//     start is the baseline and never fires.
//
// A schedule resumes from the source's last run as the light recorded it,
// so a restart neither runs a slot twice nor skips one: a source whose
// slot came while the daemon was down runs at once.
//
// A failure (the tool fails, a result lacks a stored path, a message is
// too large, the light refuses the run) journals no input, so the light
// keeps its last values; it is journaled as an error event of kind
// "source" and a polled source backs off (datasource.Backoff). A
// source's actor that crashes is restarted by the manager after a backoff
// (the restart is journaled, like a light's), without touching the other
// sources or the light.
package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Config configures the sources of one light.
type Config struct {
	Light string
	// Tools is the light's tool manager (actors/tool), which runs fetches.
	Tools *actor.PID
	// Conn reads the definitions and sends the runs to the light as
	// commands.
	Conn   *nats.Conn
	client *wire.Client
	// Changes counts the light's configuration changes on a connection
	// of the daemon (wire.Changes), which the webhooks synchronize with
	// before they hand a request over (Hooks.Add): a request that comes
	// after a change the light answered waits until the definitions are
	// read again, so that a source just created takes it and one just
	// deleted does not. Nil: it may come before the definitions are.
	Changes actors.Changes
	// Tick is how often schedules are checked (default 1 s).
	Tick time.Duration
	// Timeout bounds one tool run and each command (default 30 s).
	Timeout time.Duration
	// Journal holds the light's history, which internal sources follow;
	// each failed run is recorded there as an error event of kind
	// "source" and each restart of a source's actor as a restart event
	// (cause 0: not outputs of an input, and replay does not recompute
	// them), so `lumen tail` and the agent see them.
	Journal *journal.Journal
	// Location is the time zone of transitions_today's midnight (default
	// time.Local: $TZ, else the system's).
	Location *time.Location
	// Hooks is the base URL of the daemon's webhooks (http://HOST:PORT),
	// empty when it has no HTTP port: a webhook source then journals an
	// error event that says how to turn it on.
	Hooks string
	// Strategy supervises the sources' actors (default
	// actors.DefaultStrategy, whose restarts are journaled).
	Strategy *actors.Strategy
	// Clock times the schedules and backoffs (default the system's).
	Clock clock.Clock
	// Meter counts the sources' runs and restarts (the daemon's
	// metrics); nil counts nothing.
	Meter Meter
	Logf  func(format string, args ...any)
}

// Meter counts what a light's data sources do, for the daemon's metrics.
// It is called from any goroutine.
type Meter interface {
	// SourceRun: source ran once (a poll, a predicate, a pushed
	// message), and failed, storing nothing, or not.
	SourceRun(source string, failed bool)
	// Restarted: a source's actor (role "source") was restarted.
	Restarted(role string)
}

type noMeter struct{}

func (noMeter) SourceRun(string, bool) {}
func (noMeter) Restarted(string)       {}

type (
	defsMsg struct {
		list     []json.RawMessage
		lastRuns map[string]time.Time
		loaded   bool // false: the light did not answer
	}
	reloadT struct{}
	tickT   struct{}
)

// kid is the manager's view of one source's actor.
type kid struct {
	pid *actor.PID
	def datasource.Def
	raw string
}

// Manager supervises the data sources of one light.
type Manager struct {
	cfg  *Config
	sub  *nats.Subscription
	tick clock.Timer   // the next check of the schedules
	defs actors.Reader // of the light's source definitions
	kids map[string]*kid
	gpio gpioState
	// hooks wait for the read under way: they came after a change the
	// light answered, which the definitions may lack.
	hooks actors.Waiting[*Hook]
}

// Props returns the manager's props.
func Props(cfg Config) (*actor.Props, error) {
	if err := subject.ValidLight(cfg.Light); err != nil {
		return nil, fmt.Errorf("source: %w", err)
	}
	if cfg.Conn == nil || cfg.Tools == nil || cfg.Journal == nil {
		return nil, errors.New("source: a connection, the journal and the tool manager are required")
	}
	cfg.client = wire.New(cfg.Conn)
	if cfg.Tick <= 0 {
		cfg.Tick = time.Second
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Clock == nil {
		cfg.Clock = clock.System(clock.Trust)
	}
	if cfg.Location == nil {
		cfg.Location = time.Local
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	if cfg.Meter == nil {
		cfg.Meter = noMeter{}
	}
	c := &cfg
	strategy := cfg.Strategy
	if strategy == nil {
		strategy = actors.JournaledStrategy(c.Light, "data source", c.Journal, c.Clock, c.Logf).Counted(func(actors.Restart) { c.Meter.Restarted("source") })
		strategy.OnStop = func(r actors.Restart) {
			c.Logf("source %s: %s failed too often (%v); it is stopped until its definition changes or lumen restarts", c.Light, r.Child.GetId(), r.Reason)
			c.journalError(r.Child.GetId(), fmt.Sprintf("data source actor %s failed too often (%v); it is stopped until its definition changes or lumen restarts", r.Child.GetId(), r.Reason))
		}
	}
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: c, defs: actors.Reader{Changes: c.Changes}} }, actor.WithSupervisor(strategy)), nil
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.kids = map[string]*kid{}
		sub, err := actors.OnConfig(ctx, m.cfg.Conn, m.cfg.Light, &reloadT{})
		if err != nil {
			panic(fmt.Sprintf("source %s: %v", m.cfg.Light, err))
		}
		m.sub = sub
		m.followGPIO(ctx)
		m.armTick(ctx)
		m.load(ctx)
	case *actor.Stopping, *actor.Restarting:
		// The sources' actors are stopped with their parent.
		if m.sub != nil {
			_ = m.sub.Unsubscribe()
		}
		m.gpio.stop()
		if m.tick != nil {
			m.tick.Stop()
		}
	case *reloadT:
		m.load(ctx)
	case *defsMsg:
		again := m.defs.Done(msg.loaded)
		m.apply(ctx, msg)
		if again {
			m.load(ctx) // the pin changes waiting wait for it
			return
		}
		m.drainGPIO(ctx, msg.loaded)
		m.hooks.Release(func(h *Hook, sender *actor.PID) { m.hook(ctx, h, sender) })
	case *tickT:
		t := &tick{now: m.cfg.Clock.Now()}
		for _, k := range m.kids {
			if k.def.Polled() {
				ctx.Send(k.pid, t)
			}
		}
		m.armTick(ctx)
	case *gpioMsg:
		m.gpioEdge(ctx, msg.payload)
	case *Hook:
		if !m.hooks.Hold(&m.defs, msg, ctx.Sender(), func() { m.load(ctx) }) {
			m.hook(ctx, msg, ctx.Sender())
		}
	}
}

// hook hands a webhook request to its source's actor, which answers it.
func (m *Manager) hook(ctx actor.Context, h *Hook, sender *actor.PID) {
	k, ok := m.kids[h.Source]
	if !ok || k.def.Kind() != datasource.TypeWebhook {
		ctx.Send(sender, noWebhook(m.cfg.Light, h.Source))
		return
	}
	ctx.RequestWithCustomSender(k.pid, h, sender)
}

// armTick schedules the next check of the schedules.
func (m *Manager) armTick(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	m.tick = m.cfg.Clock.AfterFunc(m.cfg.Tick, func() { root.Send(self, &tickT{}) })
}

// load reads the light's sources off the actor's goroutine.
func (m *Manager) load(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	client, name, logf := m.cfg.client, m.cfg.Light, m.cfg.Logf
	m.defs.Read(func() {
		var r messages.SourcesReply
		if err := client.CallRetry(context.Background(), name, messages.VerbListSources, nil, &r, wire.Retry{Attempts: 50, Logf: logf, Who: "sources of " + name}); err != nil {
			logf("source %s: cannot read the sources (%v); the ones running go on, and the next configuration change reads them again", name, err)
			root.Send(self, &defsMsg{}) // give up this round; the next config change reloads
			return
		}
		root.Send(self, &defsMsg{list: r.Sources, lastRuns: r.LastRuns, loaded: true})
	})
}

// apply follows the definitions: a new or changed source gets a new actor
// (which starts from the source's last run), a deleted one's actor is
// stopped (a run under way finishes, and the light refuses it).
func (m *Manager) apply(ctx actor.Context, defs *defsMsg) {
	if !defs.loaded {
		return // the load failed: keep what runs
	}
	want := map[string]*kid{}
	for _, raw := range defs.list {
		var d datasource.Def
		if err := d.UnmarshalJSON(raw); err != nil {
			m.cfg.Logf("source %s: skip a definition: %v", m.cfg.Light, err)
			continue
		}
		switch d.Kind() {
		case datasource.TypePoll, datasource.TypeInternal, datasource.TypeNATS, datasource.TypeMQTT, datasource.TypeWebhook, datasource.TypeTransition, datasource.TypeGPIO:
		default:
			continue // a type this daemon does not run
		}
		if old, ok := m.kids[d.Name]; ok && old.raw == string(raw) {
			want[d.Name] = old
			continue
		}
		if old, ok := m.kids[d.Name]; ok {
			ctx.Stop(old.pid)
		}
		pid, err := m.spawn(ctx, d, string(raw), defs.lastRuns[d.Name])
		if err != nil {
			m.cfg.Logf("source %s/%s: %v", m.cfg.Light, d.Name, err)
			continue
		}
		want[d.Name] = &kid{pid: pid, def: d, raw: string(raw)}
	}
	for name, k := range m.kids {
		if _, ok := want[name]; !ok {
			ctx.Stop(k.pid)
		}
	}
	m.kids = want
}

// spawn starts the actor of source def, named source-<name>.
func (m *Manager) spawn(ctx actor.Context, def datasource.Def, raw string, lastRun time.Time) (*actor.PID, error) {
	return actors.SpawnNamed(ctx, childProps(m.cfg, def, raw, lastRun), "source-"+def.Name)
}

// noWebhook answers a webhook request for a source that is no webhook.
func noWebhook(lightName, src string) *HookReply {
	return &HookReply{Code: 404, Error: fmt.Sprintf("light %s has no webhook source %s; define one with create_source {\"name\":%q,\"type\":\"webhook\",…}", lightName, src, src)}
}

// journalError records a failed run without waiting for the journal.
func (c *Config) journalError(source, sentence string) {
	actors.JournalFailure(c.Journal, c.Light, messages.OutErrorData{Code: 502, Kind: messages.ErrorSource, Error: sentence}, c.Clock.Now(), func(format string, args ...any) {
		c.Logf("source %s/%s: "+format, append([]any{c.Light, source}, args...)...)
	})
}

// sentence is an error's text without its package prefix.
func sentence(err error) string {
	if se := (*datasource.Error)(nil); errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}
