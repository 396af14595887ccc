// Package tool runs a light's custom tools: one supervised actor per tool,
// each running calls with bounded concurrency, and a manager that follows
// the light's tool definitions (journaled in its model) and routes
// run_tool to them. Besides the defined tools (JavaScript in the Wasmtime
// sandbox) a light has the built-in fetch_json, fetch_text and get_time
// (builtin.go) and the operator's precompiled plugins (plugin.go).
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/internal/argschema"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
	"github.com/lumen-home/lumen/plugins"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/plugins/secrets"
)

// Engine runs tool code in the sandbox (*plugins.Engine, or a wrapper
// that loads it lazily).
type Engine interface {
	Run(ctx context.Context, req plugins.Request) (plugins.Result, error)
}

// Config configures the tools of one light.
type Config struct {
	Light string
	// Engine runs the JavaScript; nil means the tool engine is not
	// installed, and every run says so.
	Engine  Engine
	Allow   netpolicy.Operator // what the operator lets tools reach beyond the defaults
	Secrets *secrets.Store     // nil: no secrets
	// Conn reads the light's tool definitions over NATS.
	Conn   *nats.Conn
	client *wire.Client
	// Changes counts the light's configuration changes on the
	// connection run_tool is served on (wire.Changes): a run that comes
	// after a change the light answered waits until the definitions are
	// read again, so that it never runs what the change replaced. Nil:
	// a run may follow the change by the time the definitions are read.
	Changes actors.Changes
	// Plugins are the operator's precompiled plugins, shared by every
	// light (OpenPlugins); nil: none.
	Plugins *Plugins
	// Concurrency is how many calls of one tool may run at once (default 4).
	Concurrency int
	// Journal, when set, records each restart of a tool's actor as a
	// restart event of the light.
	Journal *journal.Journal
	// Clock is get_time's (default the system's).
	Clock clock.Clock
	// Web configures get_weather and web_search.
	Web Web
	// Meter counts the calls and restarts of the light's tools (the
	// daemon's metrics); nil counts nothing.
	Meter Meter
	Logf  func(format string, args ...any)
}

// Meter counts what a light's tools do, for the daemon's metrics. It is
// called from any goroutine.
type Meter interface {
	// ToolCall: a call of tool reached it, and failed or not.
	ToolCall(tool string, failed bool)
	// Restarted: a tool's actor (role "tool") was restarted.
	Restarted(role string)
}

type noMeter struct{}

func (noMeter) ToolCall(string, bool) {}
func (noMeter) Restarted(string)      {}

// Run asks for one run of a tool; the answer is *messages.RunToolReply or
// *messages.ErrorReply.
type Run struct {
	Name string
	Args json.RawMessage
}

type (
	defs struct {
		tools []messages.Tool
		ok    bool // false: the light did not answer; keep what runs
	}
	reloadT struct{}
)

// Manager is the parent of a light's tool actors.
type Manager struct {
	cfg Config
	sub *nats.Subscription
	// waiting are runs of tools not known yet: a tool defined a moment
	// ago may not have reached the manager; they are answered once the
	// definitions are read again.
	waiting actors.Waiting[*Run]
	tools   map[string]messages.Tool
	runners map[string]*actor.PID
	// fixed are the built-in tools and the plugins: they exist for the
	// manager's whole life and win over a defined tool of the same name
	// (the light refuses a built-in's name; a plugin is the operator's).
	fixed map[string]*actor.PID
	defs  actors.Reader // of the light's tool definitions
}

// Props returns the manager's props.
func Props(cfg Config) (*actor.Props, error) {
	if err := subject.ValidLight(cfg.Light); err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	if cfg.Conn == nil {
		return nil, errors.New("tool: a connection is required")
	}
	cfg.client = wire.New(cfg.Conn, wire.WithWho(messages.WhoTool))
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
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
	s := actors.JournaledStrategy(cfg.Light, "tool", cfg.Journal, cfg.Clock, cfg.Logf).Counted(func(actors.Restart) { cfg.Meter.Restarted("tool") })
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: cfg, defs: actors.Reader{Changes: cfg.Changes}} }, actor.WithSupervisor(s)), nil
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.tools, m.runners = map[string]messages.Tool{}, map[string]*actor.PID{}
		m.startFixed(ctx)
		sub, err := actors.OnConfig(ctx, m.cfg.Conn, m.cfg.Light, &reloadT{})
		if err != nil {
			panic(fmt.Sprintf("tool %s: %v", m.cfg.Light, err))
		}
		m.sub = sub
		m.load(ctx)
	case *actor.Stopping, *actor.Restarting:
		if m.sub != nil {
			_ = m.sub.Unsubscribe()
		}
	case *reloadT:
		m.load(ctx)
	case *defs:
		again := m.defs.Done(msg.ok)
		if msg.ok {
			m.apply(ctx, msg.tools)
		}
		if again {
			// These definitions may predate what was asked for.
			m.load(ctx)
			return
		}
		m.waiting.Release(func(r *Run, sender *actor.PID) { m.route(ctx, r, sender, false) })
	case *Run:
		// After a change the light answered since the definitions were
		// read (the tool may be new, or its code), or behind the runs
		// waiting for the read under way.
		if !m.waiting.Hold(&m.defs, msg, ctx.Sender(), func() { m.load(ctx) }) {
			m.route(ctx, msg, ctx.Sender(), true)
		}
	}
}

// yields reports whether a built-in gives way to a tool the light defines
// with its name: those that came after lights could define such tools.
func yields(name string) bool { return name == builtinGetWeather || name == builtinWebSearch }

// route hands a run to its tool's actor; an unknown tool is looked up
// again once before it is refused.
func (m *Manager) route(ctx actor.Context, r *Run, sender *actor.PID, retry bool) {
	pid, ok := m.runners[r.Name]
	_, defined := m.tools[r.Name]
	if fixed, isFixed := m.fixed[r.Name]; isFixed && !(defined && yields(r.Name)) {
		ctx.RequestWithCustomSender(fixed, r, sender)
		return
	}
	switch {
	case ok:
		ctx.RequestWithCustomSender(pid, r, sender)
	case retry:
		m.waiting.Add(r, sender)
		m.load(ctx)
	default:
		ctx.Send(sender, &messages.ErrorReply{Code: 404, Error: fmt.Sprintf("light %s has no tool %q; it has %s (define one with define_tool)", m.cfg.Light, r.Name, m.names())})
	}
}

func (m *Manager) names() string {
	var n []string
	for k := range m.tools {
		if _, shadowed := m.fixed[k]; !shadowed || yields(k) {
			n = append(n, k)
		}
	}
	n = append(n, m.cfg.Plugins.Names()...)
	slices.Sort(n)
	if len(n) == 0 {
		return "only the built-in " + strings.Join(BuiltinNames(), ", ")
	}
	return fmt.Sprint(n) + " and the built-in " + strings.Join(BuiltinNames(), ", ")
}

// startFixed starts the built-in tools' and the plugins' runners. Each has
// its own fetch client (rate limit) on this light, like a defined tool.
func (m *Manager) startFixed(ctx actor.Context) {
	m.fixed = map[string]*actor.PID{}
	spawn := func(name, prefix string, exec execFunc) {
		r := &runner{name: name, exec: exec, secrets: m.cfg.Secrets, slots: make(chan struct{}, m.cfg.Concurrency), meter: m.cfg.Meter}
		pid, err := ctx.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return r }), prefix+name)
		if err != nil {
			m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
			return
		}
		m.fixed[name] = pid
	}
	open := func() (*fetcher, error) {
		client, err := netpolicy.New(m.cfg.Allow, nil, netpolicy.Limits{})
		if err != nil {
			return nil, err
		}
		return &fetcher{client: client, open: true, secrets: m.cfg.Secrets}, nil
	}
	for _, name := range BuiltinNames() {
		b := &builtin{name: name, clock: m.cfg.Clock, web: m.cfg.Web}
		if name != builtinGetTime {
			f, err := open()
			if err != nil {
				m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
				continue
			}
			b.fetch = f
		}
		spawn(name, "builtin-", b.run)
	}
	for _, name := range m.cfg.Plugins.Names() {
		pl := m.cfg.Plugins.get(name)
		f, err := open()
		if err != nil {
			m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
			continue
		}
		spawn(name, "plugin-", func(ctx context.Context, args json.RawMessage) (plugins.Result, error) {
			return pl.run(ctx, args, f)
		})
	}
}

// load reads the light's tools off the actor's goroutine.
func (m *Manager) load(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	client, name, logf := m.cfg.client, m.cfg.Light, m.cfg.Logf
	m.defs.Read(func() {
		var r messages.ToolsReply
		err := client.CallRetry(context.Background(), name, messages.VerbListTools, nil, &r, wire.Retry{Attempts: 50, Logf: logf, Who: "tools of " + name})
		root.Send(self, &defs{tools: r.Tools, ok: err == nil})
	})
}

// apply starts, replaces and stops tool actors to match the definitions.
func (m *Manager) apply(ctx actor.Context, tools []messages.Tool) {
	want := map[string]messages.Tool{}
	for _, t := range tools {
		want[t.Name] = t
	}
	for name, pid := range m.runners {
		if t, ok := want[name]; !ok || !sameTool(t, m.tools[name]) {
			ctx.Stop(pid)
			delete(m.runners, name)
		}
	}
	for name, t := range want {
		if _, ok := m.runners[name]; ok {
			continue
		}
		if _, ok := m.fixed[name]; ok && !yields(name) {
			if _, known := m.tools[name]; !known {
				m.cfg.Logf("tool %s/%s: the plugin %s runs instead of the tool defined with that name; delete that tool, or rename the plugin", m.cfg.Light, name, name)
			}
			continue
		}
		r, err := newRunner(m.cfg, t)
		if err != nil {
			m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
			continue
		}
		pid, err := actors.SpawnNamed(ctx, actor.PropsFromProducer(func() actor.Actor { return r }), "tool-"+name)
		if err != nil {
			m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
			continue
		}
		m.runners[name] = pid
	}
	m.tools = want
}

func sameTool(a, b messages.Tool) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// execFunc runs one call of a tool with its args.
type execFunc func(ctx context.Context, args json.RawMessage) (plugins.Result, error)

// errNoEngine is a defined tool's run when the JavaScript engine is not
// installed.
var errNoEngine = errors.New("the tool engine is not installed: build it with `task guest` (or set LUMEN_GUEST_WASM) and restart lumen")

// runner is one tool (defined, built-in or plugin): it runs calls, at
// most Concurrency at once; a call beyond that is refused at once (busy)
// rather than queued without bound.
type runner struct {
	name    string
	exec    execFunc
	secrets *secrets.Store
	slots   chan struct{}
	params  *argschema.Schema // nil: the tool takes any arguments
	meter   Meter
}

// newRunner is the runner of a tool defined with define_tool: its code in
// the JavaScript guest, fetching only the hosts it declares.
func newRunner(cfg Config, t messages.Tool) (*runner, error) {
	client, err := netpolicy.New(cfg.Allow, t.Hosts, netpolicy.Limits{})
	if err != nil {
		return nil, err
	}
	f := &fetcher{client: client, secrets: cfg.Secrets}
	engine := cfg.Engine
	exec := func(ctx context.Context, args json.RawMessage) (plugins.Result, error) {
		if engine == nil {
			return plugins.Result{}, errNoEngine
		}
		return engine.Run(ctx, plugins.Request{Code: t.Code, Params: args, Fetch: f})
	}
	r := &runner{name: t.Name, exec: exec, secrets: cfg.Secrets, slots: make(chan struct{}, cfg.Concurrency), meter: cfg.Meter}
	if t.Params != nil {
		// A schema the light took before it checked schemas may not
		// compile: the tool then takes any arguments, as it did.
		if s, err := argschema.Compile(t.Params); err == nil {
			r.params = s
		} else {
			cfg.Logf("tool %s/%s: its params schema is not checked: %v", cfg.Light, t.Name, err)
		}
	}
	return r, nil
}

func (r *runner) Receive(ctx actor.Context) {
	msg, ok := ctx.Message().(*Run)
	if !ok {
		return
	}
	args := msg.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	if r.params != nil {
		// Before it runs, so that the caller (a model too) learns which
		// argument to fix.
		if err := r.params.Check(args); err != nil {
			r.meter.ToolCall(r.name, true)
			ctx.Respond(&messages.ErrorReply{Code: 400, Error: fmt.Sprintf("tool %s: the arguments do not match its params schema: %v", r.name, err)})
			return
		}
	}
	select {
	case r.slots <- struct{}{}:
	default:
		r.meter.ToolCall(r.name, true)
		ctx.Respond(&messages.ErrorReply{Code: 409, Error: fmt.Sprintf("tool %s is already running %d calls; try again when one finishes", r.name, cap(r.slots))})
		return
	}
	sender, root := ctx.Sender(), ctx.ActorSystem().Root
	go func() {
		defer func() { <-r.slots }()
		res, err := r.exec(context.Background(), args)
		r.meter.ToolCall(r.name, err != nil)
		root.Send(sender, answer(r.name, res, err, r.secrets))
	}()
}

// answer turns a call's outcome into a reply; secrets are redacted from
// everything the caller (maybe an LLM) sees.
func answer(name string, res plugins.Result, err error, sec *secrets.Store) any {
	hide := func(b []byte) []byte {
		if sec == nil {
			return b
		}
		return sec.Redact(b)
	}
	if err != nil {
		// The tool's own failures (timeout, memory, exception, invalid
		// result, a built-in's bad args or URL) are the caller's to fix:
		// 400; anything else is ours.
		code := 500
		var pe *plugins.Error
		var ce *callError
		if errors.As(err, &pe) || errors.As(err, &ce) {
			code = 400
		}
		if errors.Is(err, errNoEngine) {
			return &messages.ErrorReply{Code: code, Error: err.Error()}
		}
		return &messages.ErrorReply{Code: code, Error: redact.URLs(string(hide([]byte(fmt.Sprintf("tool %s: %v", name, err)))))}
	}
	logs := make([]string, len(res.Log))
	for i, l := range res.Log {
		logs[i] = string(hide([]byte(l)))
	}
	return &messages.RunToolReply{OK: true, Result: hide(res.Value), Log: logs, Ms: float64(res.Duration.Microseconds()) / 1000}
}
