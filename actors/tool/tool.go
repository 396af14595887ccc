// Package tool runs a light's custom tools: one supervised actor per tool,
// each running calls in the Wasmtime sandbox with bounded concurrency, and
// a manager that follows the light's tool definitions (journaled in its
// model) and routes run_tool to them.
package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
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
	Conn *nats.Conn
	// Concurrency is how many calls of one tool may run at once (default 4).
	Concurrency int
	Logf        func(format string, args ...any)
}

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

type waitingRun struct {
	run    *Run
	sender *actor.PID
}

// Manager is the parent of a light's tool actors.
type Manager struct {
	cfg Config
	sub *nats.Subscription
	// waiting are runs of tools not known yet: a tool defined a moment
	// ago may not have reached the manager; they are answered once the
	// definitions are read again.
	waiting []waitingRun
	stale   bool // a reload was asked for while one was under way
	tools   map[string]messages.Tool
	runners map[string]*actor.PID
	loading bool
}

// Props returns the manager's props.
func Props(cfg Config) (*actor.Props, error) {
	if err := subject.ValidLight(cfg.Light); err != nil {
		return nil, fmt.Errorf("tool: %w", err)
	}
	if cfg.Conn == nil {
		return nil, errors.New("tool: a connection is required")
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return actor.PropsFromProducer(func() actor.Actor { return &Manager{cfg: cfg} },
		actor.WithSupervisor(actor.NewOneForOneStrategy(10, time.Minute, actor.DefaultDecider))), nil
}

// Receive handles one message.
func (m *Manager) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		m.tools, m.runners = map[string]messages.Tool{}, map[string]*actor.PID{}
		self, root := ctx.Self(), ctx.ActorSystem().Root
		sub, err := m.cfg.Conn.Subscribe(subject.Out(m.cfg.Light, messages.OutConfig), func(*nats.Msg) { root.Send(self, &reloadT{}) })
		if err != nil {
			panic(fmt.Sprintf("tool %s: follow the light's configuration: %v", m.cfg.Light, err))
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
		m.loading = false
		if msg.ok {
			m.apply(ctx, msg.tools)
		}
		if m.stale {
			// These definitions may predate what was asked for.
			m.stale = false
			m.load(ctx)
			return
		}
		waiting := m.waiting
		m.waiting = nil
		for _, w := range waiting {
			m.route(ctx, w.run, w.sender, false)
		}
	case *Run:
		m.route(ctx, msg, ctx.Sender(), true)
	}
}

// route hands a run to its tool's actor; an unknown tool is looked up
// again once before it is refused.
func (m *Manager) route(ctx actor.Context, r *Run, sender *actor.PID, retry bool) {
	pid, ok := m.runners[r.Name]
	switch {
	case ok:
		ctx.RequestWithCustomSender(pid, r, sender)
	case retry:
		m.waiting = append(m.waiting, waitingRun{run: r, sender: sender})
		m.load(ctx)
	default:
		ctx.Send(sender, &messages.ErrorReply{Code: 404, Error: fmt.Sprintf("light %s has no tool %q; it has %s (define one with define_tool)", m.cfg.Light, r.Name, m.names())})
	}
}

func (m *Manager) names() string {
	if len(m.tools) == 0 {
		return "none"
	}
	var n []string
	for k := range m.tools {
		n = append(n, k)
	}
	slices.Sort(n)
	return fmt.Sprint(n)
}

// load reads the light's tools off the actor's goroutine.
func (m *Manager) load(ctx actor.Context) {
	if m.loading {
		m.stale = true
		return
	}
	m.loading = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	nc, name, logf := m.cfg.Conn, m.cfg.Light, m.cfg.Logf
	go func() {
		var r messages.ToolsReply
		err := light.Ask(context.Background(), nc, name, messages.VerbListTools, &r, 50, "tools of "+name, logf)
		root.Send(self, &defs{tools: r.Tools, ok: err == nil})
	}()
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
		r, err := newRunner(m.cfg, t)
		if err != nil {
			m.cfg.Logf("tool %s/%s: %v", m.cfg.Light, name, err)
			continue
		}
		pid, err := ctx.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return r }), "tool-"+name)
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

// runner is one tool: it runs calls in the sandbox, at most Concurrency at
// once; a call beyond that is refused at once (busy) rather than queued
// without bound.
type runner struct {
	cfg   Config
	tool  messages.Tool
	fetch *fetcher
	slots chan struct{}
}

func newRunner(cfg Config, t messages.Tool) (*runner, error) {
	client, err := netpolicy.New(cfg.Allow, t.Hosts, netpolicy.Limits{})
	if err != nil {
		return nil, err
	}
	return &runner{cfg: cfg, tool: t, fetch: &fetcher{client: client, secrets: cfg.Secrets},
		slots: make(chan struct{}, cfg.Concurrency)}, nil
}

func (r *runner) Receive(ctx actor.Context) {
	msg, ok := ctx.Message().(*Run)
	if !ok {
		return
	}
	if r.cfg.Engine == nil {
		ctx.Respond(&messages.ErrorReply{Code: 500, Error: "the tool engine is not installed: build it with `task guest` (or set LUMEN_GUEST_WASM) and restart lumen"})
		return
	}
	select {
	case r.slots <- struct{}{}:
	default:
		ctx.Respond(&messages.ErrorReply{Code: 409, Error: fmt.Sprintf("tool %s is already running %d calls; try again when one finishes", r.tool.Name, cap(r.slots))})
		return
	}
	sender, root := ctx.Sender(), ctx.ActorSystem().Root
	args := msg.Args
	if len(args) == 0 {
		args = json.RawMessage(`{}`)
	}
	go func() {
		defer func() { <-r.slots }()
		res, err := r.cfg.Engine.Run(context.Background(), plugins.Request{Code: r.tool.Code, Params: args, Fetch: r.fetch})
		root.Send(sender, answer(r.tool.Name, res, err, r.cfg.Secrets))
	}()
}

// answer turns a call's outcome into a reply; secrets are redacted from
// everything the caller (maybe an LLM) sees.
func answer(name string, res plugins.Result, err error, sec *secrets.Store) any {
	redact := func(b []byte) []byte {
		if sec == nil {
			return b
		}
		return sec.Redact(b)
	}
	if err != nil {
		// The tool's own failures (timeout, memory, exception, invalid
		// result) are the caller's to fix: 400; anything else is ours.
		code := 500
		var pe *plugins.Error
		if errors.As(err, &pe) {
			code = 400
		}
		return &messages.ErrorReply{Code: code, Error: string(redact([]byte(fmt.Sprintf("tool %s: %v", name, err))))}
	}
	logs := make([]string, len(res.Log))
	for i, l := range res.Log {
		logs[i] = string(redact([]byte(l)))
	}
	return &messages.RunToolReply{OK: true, Result: redact(res.Value), Log: logs, Ms: float64(res.Duration.Microseconds()) / 1000}
}
