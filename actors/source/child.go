package source

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// maxQueue bounds the messages of a push source that wait while one is
// being stored: a flood beyond it is dropped, with an error event.
const maxQueue = 64

type (
	// tick: the manager's clock; a polled source runs when it is due.
	tick struct{ now time.Time }
	// pushMsg is a message of a push source (nats, mqtt, gpio).
	pushMsg struct{ payload []byte }
	// runDone ends a run started by incarnation by.
	runDone struct {
		by    *child
		err   error
		truth *bool // a custom transition's predicate result
	}
	// crash: a run's goroutine panicked; the actor fails with it, so
	// that its supervisor restarts it.
	crash struct {
		by     *child
		reason any
	}
)

// queued is a pushed message waiting to be stored: its payload, or for a
// webhook the result already read from its body.
type queued struct {
	payload []byte
	result  json.RawMessage
}

// memo is what a source's actor keeps across its restarts (each restart
// is a new instance from the same props): when it last ran, so that a
// restart never runs a slot twice, and a custom transition's last result.
// Only the actor's goroutine touches it.
type memo struct {
	lastRun time.Time
	truth   *bool
}

// child is the actor of one data source.
type child struct {
	cfg  *Config
	def  datasource.Def
	raw  string
	memo *memo

	failures int
	retryAt  time.Time
	running  bool
	queue    []queued             // push sources: messages waiting
	dropped  int                  // payloads dropped since the last error event
	subs     []*nats.Subscription // a push source's: its subject as the daemon, NATS clients and MQTT clients publish it
	hist     history              // internal sources
}

// childProps returns the props of source def's actor; lastRun is its last
// run as the light recorded it (zero: never, so it runs at once).
func childProps(cfg *Config, def datasource.Def, raw string, lastRun time.Time) *actor.Props {
	mem := &memo{lastRun: lastRun}
	return actor.PropsFromProducer(func() actor.Actor { return &child{cfg: cfg, def: def, raw: raw, memo: mem} })
}

// Receive handles one message.
func (c *child) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		c.started(ctx)
	case *actor.Stopping, *actor.Restarting:
		for _, sub := range c.subs {
			_ = sub.Unsubscribe()
		}
		c.subs = nil
		c.hist.stop()
	case *tick:
		c.tick(ctx, msg.now)
	case *runDone:
		if msg.by == c {
			c.done(ctx, msg)
		}
	case *crash:
		if msg.by == c {
			panic(msg.reason)
		}
	case *pushMsg:
		c.push(ctx, queued{payload: msg.payload})
	case *Hook:
		ctx.Respond(c.hook(ctx, msg))
	case *histMsg:
		c.hist.add(msg)
	}
}

func (c *child) started(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	switch c.def.Kind() {
	case datasource.TypeNATS, datasource.TypeMQTT:
		// Outside clients publish in accounts of their own, which the
		// daemon's account imports under prefixes (subject.Outside).
		for _, subj := range subject.Outside(c.def.ListenSubject()) {
			sub, err := c.cfg.Conn.Subscribe(subj, func(msg *nats.Msg) { root.Send(self, &pushMsg{payload: msg.Data}) })
			if err != nil {
				// The definition stays; the next change of it tries again.
				c.cfg.Logf("source %s/%s: subscribe to %s: %v", c.cfg.Light, c.def.Name, c.def.ListenSubject(), err)
				c.cfg.journalError(c.def.Name, fmt.Sprintf("source %s cannot listen on %s (%v); redefine it with another subject", c.def.Name, c.def.ListenSubject(), err))
				return
			}
			c.subs = append(c.subs, sub)
		}
	case datasource.TypeWebhook:
		if c.cfg.Hooks == "" {
			c.cfg.Logf("source %s/%s: webhooks are off; start lumen up with --http 127.0.0.1:8080", c.cfg.Light, c.def.Name)
			c.cfg.journalError(c.def.Name, fmt.Sprintf("source %s is a webhook, but the daemon has no HTTP port; start it with lumen up --http 127.0.0.1:8080 (or http: in lumen.yaml)", c.def.Name))
		}
	case datasource.TypeInternal:
		c.hist.epoch++
		bg, cancel := context.WithCancel(context.Background())
		c.hist.cancel = cancel
		if c.hist.saver == nil {
			c.hist.saver = &historySaver{j: c.cfg.Journal, light: c.cfg.Light, logf: c.cfg.Logf}
		}
		go follow(bg, c.cfg.Journal, c.cfg.Light, c.hist.epoch, func(h *histMsg) { root.Send(self, h) }, c.cfg.Logf)
	}
}

// tick runs a polled source (the manager ticks only those) when it is
// due: at its slot after its last run, or after its backoff when it
// failed.
func (c *child) tick(ctx actor.Context, now time.Time) {
	if c.running {
		return
	}
	internal := c.def.Kind() == datasource.TypeInternal
	if internal {
		if !c.hist.ready {
			return // the history is not read yet: the values would be wrong
		}
		c.hist.saver.maybeSave(&c.hist.h, now)
	}
	if c.failures > 0 {
		if now.Before(c.retryAt) {
			return
		}
	} else if last := c.memo.lastRun; !datasource.Due(c.def, last, now) || now.Before(datasource.Next(c.def, last, datasource.Seed(c.cfg.Light, c.def.Name))) {
		return
	}
	var result json.RawMessage
	if internal {
		// Computed here, where the history is; journaled as a run like
		// a fetched result, so replay never recomputes it.
		r, err := datasource.Internal(c.def, &c.hist.h, now, c.cfg.Location)
		if err != nil {
			c.cfg.Logf("source %s/%s: %v", c.cfg.Light, c.def.Name, err)
			return
		}
		result = r
	}
	c.memo.lastRun = now
	c.start(ctx, result)
}

// start runs the source once off the actor's goroutine: a custom
// transition's predicate, or storing result, or for a poll source (result
// nil) what its tool fetches.
func (c *child) start(ctx actor.Context, result json.RawMessage) {
	c.running = true
	self, root := ctx.Self(), ctx.ActorSystem().Root
	def, prev := c.def, c.memo.truth
	go func() {
		done := &runDone{by: c}
		defer func() {
			if r := recover(); r != nil {
				root.Send(self, &crash{by: c, reason: r})
				return
			}
			root.Send(self, done)
		}()
		if def.Kind() == datasource.TypeTransition {
			done.truth, done.err = c.predicate(root, prev)
			return
		}
		if result == nil {
			result, done.err = c.fetch(root)
		}
		if done.err == nil {
			done.err = c.store(result)
		}
	}()
}

// predicate runs a custom transition's predicate and fires the transition
// on a rising edge; it returns the predicate's truth.
func (c *child) predicate(root *actor.RootContext, prev *bool) (*bool, error) {
	result, err := c.fetch(root)
	if err != nil {
		return nil, err
	}
	now := datasource.Truthy(result)
	if datasource.Edge(prev, now) {
		if err := c.command(messages.VerbFire, messages.FireRequest{Transition: c.def.Fires}); err != nil {
			return nil, err
		}
	}
	return &now, nil
}

func (c *child) done(ctx actor.Context, msg *runDone) {
	c.running = false
	c.cfg.Meter.SourceRun(c.def.Name, msg.err != nil)
	if !c.def.Polled() {
		if msg.err != nil {
			c.cfg.Logf("source %s/%s: %v; the last values are kept", c.cfg.Light, c.def.Name, msg.err)
			c.cfg.journalError(c.def.Name, fmt.Sprintf("source %s: a message was not stored: %s", c.def.Name, sentence(msg.err)))
		}
		c.pump(ctx)
		return
	}
	if msg.err == nil {
		c.failures = 0
		if msg.truth != nil {
			c.memo.truth = msg.truth
		}
		return
	}
	c.failures++
	wait := datasource.Backoff(c.failures, c.def.Interval())
	c.retryAt = c.cfg.Clock.Now().Add(wait)
	c.cfg.Logf("source %s/%s: %v; the last values are kept, retry in %v (failure %d)", c.cfg.Light, c.def.Name, msg.err, wait, c.failures)
	c.cfg.journalError(c.def.Name, fmt.Sprintf("source %s failed (%v); the light keeps the last values and retries in %v", c.def.Name, msg.err, wait.Round(time.Millisecond)))
}

// push queues a message of a push source and stores it when the source
// is idle.
func (c *child) push(ctx actor.Context, q queued) {
	if len(c.queue) >= maxQueue {
		c.dropped++
		if c.dropped == 1 {
			c.cfg.journalError(c.def.Name, fmt.Sprintf("source %s receives messages faster than the light stores them; more than %d wait, so messages are dropped. Publish less often", c.def.Name, maxQueue))
		}
		return
	}
	c.queue = append(c.queue, q)
	c.pump(ctx)
}

// pump starts storing the next waiting message of an idle push source; a
// message that is no result is refused at once with an error event.
func (c *child) pump(ctx actor.Context) {
	for !c.running && len(c.queue) > 0 {
		next := c.queue[0]
		c.queue = c.queue[1:]
		if len(c.queue) == 0 {
			c.dropped = 0
		}
		result, err := next.result, error(nil)
		if result == nil {
			result, err = datasource.PushResult(c.def, next.payload)
		}
		if err != nil {
			c.cfg.Meter.SourceRun(c.def.Name, true)
			c.cfg.Logf("source %s/%s: %v", c.cfg.Light, c.def.Name, err)
			c.cfg.journalError(c.def.Name, sentence(err))
			continue
		}
		c.start(ctx, result)
	}
}

// fetch runs a poll source's tool and returns its result.
func (c *child) fetch(root *actor.RootContext) (json.RawMessage, error) {
	res, err := root.RequestFuture(c.cfg.Tools, &tool.Run{Name: c.def.Fetch.Tool, Args: c.def.Fetch.Args}, c.cfg.Timeout).Result()
	if err != nil {
		return nil, fmt.Errorf("tool %s did not answer: %v", c.def.Fetch.Tool, err)
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

// store journals one run of the source: the values of its store paths in
// result, as the light's data input, which keeps the _prev values, sets
// the variables and fires the transition as a whole.
func (c *child) store(result json.RawMessage) error {
	vals, err := datasource.Values(c.def, result)
	if err != nil {
		return err
	}
	return c.command(messages.VerbData, messages.InDataData{Source: c.def.Name, Vars: vals})
}

// command sends one command to the light; a refusal is an error.
func (c *child) command(verb string, body any) error {
	ctx, cancel := context.WithTimeout(context.Background(), c.cfg.Timeout)
	defer cancel()
	ctx = wire.AsWho(ctx, messages.Who(messages.WhoSource, c.def.Name))
	err := c.cfg.client.Call(ctx, c.cfg.Light, verb, body, nil)
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		return fmt.Errorf("%s: the light refused it (%d): %s", verb, we.Code, we.Msg)
	}
	if err != nil {
		return fmt.Errorf("%s: %v", verb, err)
	}
	return nil
}
