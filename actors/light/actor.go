// Package light is the light actor: it consumes a light's inputs from the
// journal strictly in order, applies each to the pure machine, journals the
// outputs, and answers commands once their input is applied.
package light

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// Config configures one light actor.
type Config struct {
	Name    string
	Journal *journal.Journal
	// Clock stamps the inputs the light journals itself and fires its
	// durable timers and schedules, once it is synchronized (a Pi has no
	// real-time clock).
	Clock clock.Clock
	// Seed is applied (journaled as a config input) when the light has no
	// history at all, e.g. the demo configuration.
	Seed *messages.ApplyRequest
	// SnapshotEvery is the number of applied inputs between snapshots.
	SnapshotEvery int
	// Batch is the most inputs applied together: their outputs are
	// journaled at once and one acknowledgement settles them all. Inputs
	// are still applied strictly in order, one at a time; a batch only
	// shares the wait for the disk (default 256).
	Batch int
	// CompactAbove is the journal size in bytes past which, after each
	// snapshot, the events the snapshot covers are purged (0: never).
	CompactAbove uint64
	// HouseFloor, on a Pi of a house, says how far the hub has copied the
	// journal: compaction keeps what it has not, until the journal is
	// past ForceAbove bytes; then it purges all the same and journals a
	// gap. Nil: no house.
	HouseFloor func(ctx context.Context) (uint64, error)
	ForceAbove uint64
	// EvalTimeout bounds each expression evaluation.
	EvalTimeout time.Duration
	// ReplyTimeout bounds how long a command waits for its input to apply.
	ReplyTimeout time.Duration
	// ClockPoll is how often an unsynchronized clock is checked again.
	ClockPoll time.Duration
	// Meter counts what the light does (the daemon's metrics); nil
	// counts nothing.
	Meter Meter
	Logf  func(format string, args ...any)
}

// Meter counts what a light does, for the daemon's metrics.
type Meter interface {
	// Applied: inputs applied together, the outputs they journaled, and
	// the time from their delivery until those outputs were durable.
	Applied(inputs, outputs int, took time.Duration)
	// Snapshotted: the light saved a snapshot.
	Snapshotted()
}

type noMeter struct{}

func (noMeter) Applied(int, int, time.Duration) {}
func (noMeter) Snapshotted()                    {}

func (c *Config) validate() error {
	if err := subject.ValidLight(c.Name); err != nil {
		return fmt.Errorf("light: %w", err)
	}
	if c.Journal == nil || c.Clock == nil {
		return errors.New("light: journal and clock are required")
	}
	if c.SnapshotEvery <= 0 {
		c.SnapshotEvery = 1000
	}
	if c.Batch <= 0 {
		c.Batch = 256
	}
	if c.EvalTimeout <= 0 {
		c.EvalTimeout = 50 * time.Millisecond
	}
	if c.ReplyTimeout <= 0 {
		c.ReplyTimeout = 30 * time.Second
	}
	if c.ClockPoll <= 0 {
		c.ClockPoll = 5 * time.Second
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Meter == nil {
		c.Meter = noMeter{}
	}
	return nil
}

// Command asks the light to journal one input and answers, once it is
// applied, with *messages.Reply or *messages.ErrorReply.
type Command struct {
	Type string          // a messages.In* type
	Data json.RawMessage // its payload
	By   string          // who asks (messages.Who*), journaled as the input's by
	// DryRun: apply the input to a copy of the machine, journal nothing,
	// and answer at once with *messages.DryRunReply (or the error reply
	// the input would get).
	DryRun bool
	// IfSeq, when not 0, journals the input only if the light's last
	// applied input is that one and none of its own is on the way.
	IfSeq uint64
}

// Get asks for the light's model; the answer is *messages.GetReply.
type Get struct{}

// ListTools asks for the light's custom tools, in definition order; the
// answer is *messages.ToolsReply.
type ListTools struct{}

// ListIntents asks for the light's learned intents, by phrase; the
// answer is *messages.IntentsReply.
type ListIntents struct{}

// internal messages: only these change the actor's fields.
type (
	delivered struct {
		batch []journal.Delivery
		from  *journal.Consumer // that delivered it
	}
	appendFailed struct {
		id  string
		err error
	}
	due struct {
		machine.Due
		late bool // the deadline had passed when it was armed (e.g. while the daemon was down)
		full bool // it waited for room on the disk already
	}
	clockTick    struct{}
	consumerLost struct{ err error }
	// resume tries again to finish the start, which waits for room on
	// the disk.
	resume struct{}
)

// Actor is one light.
type Actor struct {
	cfg       Config
	m         *machine.Machine
	applied   uint64
	snapshots int // taken since the light started: every pastEvery-th is kept
	since     int // inputs applied since the last snapshot
	waiters   map[string]*actor.PID
	missing   []output          // outputs of applied inputs that recovery has still to journal
	pending   []past.Input      // inputs after the last applied one that recovery found, for resume to apply
	empty     bool              // the light had no history at start
	resuming  clock.Timer       // while the start waits for room
	cons      *journal.Consumer // the running one: deliveries of an older one are dropped
	cancel    context.CancelFunc
	armed     map[string]clock.Timer // by kind+name
	waiting   bool                   // timers wait for the clock
}

// Props returns the actor's props; the config is validated here so that a
// misconfigured light fails at start-up, not at its first message.
func Props(cfg Config, opts ...actor.PropsOption) (*actor.Props, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// One goroutine runs the light's mailbox for good (see
	// actors.LoopDispatcher).
	opts = append([]actor.PropsOption{actor.WithDispatcher(actors.LoopDispatcher())}, opts...)
	return actor.PropsFromProducer(func() actor.Actor { return &Actor{cfg: cfg} }, opts...), nil
}

// Receive handles one message.
func (a *Actor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		if err := a.start(ctx); err != nil {
			// Let the supervisor restart us with backoff.
			panic(fmt.Sprintf("light %s: start: %v", a.cfg.Name, err))
		}
	case *resume:
		if err := a.resume(ctx); err != nil {
			panic(fmt.Sprintf("light %s: start: %v", a.cfg.Name, err))
		}
	case *actor.Stopping, *actor.Restarting:
		a.stop()
		if _, ok := msg.(*actor.Stopping); ok && a.m != nil && a.since > 0 {
			// A graceful stop leaves a fresh snapshot: the next start
			// replays nothing.
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			a.snapshot(ctx)
			cancel()
		}
		if a.m != nil {
			a.m.Close()
			a.m = nil
		}
	case *Command:
		if msg.DryRun {
			ctx.Respond(a.dryRun(msg))
			return
		}
		a.command(ctx, msg)
	case *Get:
		ctx.Respond(a.model())
	case *ListTools:
		ctx.Respond(&messages.ToolsReply{OK: true, Tools: a.m.ToolList()})
	case *ListIntents:
		ctx.Respond(&messages.IntentsReply{OK: true, Light: a.cfg.Name, Intents: a.m.Intents()})
	case *delivered:
		a.apply(ctx, msg)
	case *appendFailed:
		if pid, ok := a.waiters[msg.id]; ok {
			delete(a.waiters, msg.id)
			ctx.Send(pid, appendError(msg.err))
		}
	case *due:
		a.fireDue(ctx, msg)
	case *clockTick:
		a.arm(ctx)
	case *consumerLost:
		// E.g. someone deleted the durable consumer: restart, which
		// creates it again where the journal says the light is.
		panic(fmt.Sprintf("light %s: %v", a.cfg.Name, msg.err))
	}
}

func (a *Actor) model() *messages.GetReply {
	r := a.m.Model()
	r.OK, r.Light, r.Seq = true, a.cfg.Name, a.applied
	return &r
}

// start recovers the light from its snapshot and journal, then starts the
// durable consumer that feeds new inputs one at a time.
func (a *Actor) start(ctx actor.Context) error {
	a.stop()
	a.waiters = map[string]*actor.PID{}
	a.armed = map[string]clock.Timer{}
	rctx, rcancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer rcancel()
	var err error
	if a.empty, err = a.recover(rctx); err != nil {
		return err
	}
	return a.resume(ctx)
}

// roomPoll is how often a start that waits for room on the disk looks
// again.
const roomPoll = time.Second

// resume finishes the start once the light is recovered: it journals
// what recovery found missing, then the upgrade and seed inputs, and
// starts the consumer. While the disk has no room (journal.Room) it
// waits, answering reads and refusing commands meanwhile, instead of
// sending appends that a full disk would never acknowledge.
func (a *Actor) resume(ctx actor.Context) error {
	if err := a.cfg.Journal.Room(); err != nil {
		if _, again := ctx.Message().(*resume); !again {
			a.cfg.Logf("light %s: waits for room on the disk to finish starting: %v", a.cfg.Name, err)
		}
		self, sys := ctx.Self(), ctx.ActorSystem()
		a.resuming = a.cfg.Clock.AfterFunc(roomPoll, func() { sys.Root.Send(self, &resume{}) })
		return nil
	}
	a.resuming = nil
	bg, cancel := context.WithCancel(context.Background())
	a.cancel = cancel
	rctx, rcancel := context.WithTimeout(bg, 5*time.Minute)
	defer rcancel()
	if len(a.missing) > 0 {
		if err := a.publish(rctx, a.missing); err != nil {
			return err
		}
		a.cfg.Logf("light %s: journaled %d missing outputs of input %d after a crash", a.cfg.Name, len(a.missing), a.missing[0].cause)
		a.missing = nil
	}
	// The inputs recovery found after the last applied one are applied
	// here, not left to the consumer: a consumer made again right after
	// JetStream was reloaded (a full disk) once skipped the input its
	// previous self had delivered (TestWriteErrorRecovers).
	if len(a.pending) > 0 {
		a.applyInputs(ctx, a.pending)
		a.pending = nil
	}
	empty := a.empty
	if a.m.Level() < machine.Level {
		// The inputs after this one get this lumen's checks; those
		// before it stay as they were applied.
		data, _ := json.Marshal(messages.InUpgradeData{Level: machine.Level})
		env := messages.Input(a.cfg.Name, messages.InUpgrade, messages.UpgradeID(a.cfg.Name, machine.Level), a.cfg.Clock.Now(), data)
		env.By = messages.WhoLocal
		if _, err := a.cfg.Journal.Append(rctx, subject.In(a.cfg.Name, messages.InUpgrade), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
			return fmt.Errorf("upgrade to level %d: %w", machine.Level, err)
		}
	}
	if empty && a.cfg.Seed != nil {
		data, _ := json.Marshal(messages.InConfigData{Op: messages.OpApply, States: a.cfg.Seed.States, Rules: a.cfg.Seed.Rules,
			Vars: a.cfg.Seed.Vars, Initial: a.cfg.Seed.Initial, State: a.cfg.Seed.Initial, Schedules: a.cfg.Seed.Schedules})
		env := messages.Input(a.cfg.Name, messages.InConfig, messages.SeedID(a.cfg.Name), a.cfg.Clock.Now(), data)
		env.By = messages.WhoLocal
		if _, err := a.cfg.Journal.Append(rctx, subject.In(a.cfg.Name, messages.InConfig), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
			return fmt.Errorf("seed configuration: %w", err)
		}
	}
	// The journal, not the consumer, knows what was applied: deliver
	// from the input after that. Twice the batch in flight lets the
	// next batch arrive while one is applied.
	cons, err := a.cfg.Journal.Consumer(rctx, subject.Consumer(a.cfg.Name), subject.AllIn(a.cfg.Name),
		journal.StartAt(a.applied+1), journal.AckAll(), journal.MaxAckPending(2*a.cfg.Batch))
	if err != nil {
		return err
	}
	a.cons = cons
	go a.consume(bg, ctx.ActorSystem(), ctx.Self(), cons)
	a.arm(ctx)
	return nil
}

func (a *Actor) stop() {
	if a.cancel != nil {
		// The consumer goroutine exits at its next step; waiting for it
		// here could deadlock on the message it is handing us.
		a.cancel()
		a.cancel = nil
	}
	for k, t := range a.armed {
		t.Stop()
		delete(a.armed, k)
	}
	if a.resuming != nil {
		a.resuming.Stop()
		a.resuming = nil
	}
}

// recover rebuilds the machine: snapshot, then the journal after it. It
// reports whether the light has no history at all.
func (a *Actor) recover(ctx context.Context) (empty bool, err error) {
	f, err := past.Load(ctx, a.cfg.Journal, a.cfg.Name, a.cfg.EvalTimeout)
	if err != nil {
		return false, err
	}
	if f.Lost, err = past.ReadLost(ctx, a.cfg.Journal, a.cfg.Name); err != nil {
		return false, err
	}
	seen := f.Applied > 0
	err = a.cfg.Journal.Replay(ctx, subject.Events(a.cfg.Name), f.Applied+1, 0, func(m journal.Msg) error {
		seen = true
		return f.Add(past.Record{Seq: m.Seq, Subject: m.Subject, Data: m.Data, Time: m.Time})
	})
	if err != nil {
		return false, fmt.Errorf("light %s: replay: %w", a.cfg.Name, err)
	}
	open, err := f.Finish()
	if err != nil {
		return false, err
	}
	a.missing = nil
	for _, ap := range open {
		// The process died, or the journal failed, while journaling this
		// input's outputs: resume journals them.
		for _, i := range ap.Missing() {
			a.missing = append(a.missing, output{typ: ap.Result.Outputs[i].Type, data: ap.Computed[i], cause: ap.Input.Seq, n: i})
		}
	}
	a.m, a.applied, a.pending = f.M, f.Applied, f.Pending
	return !seen, nil
}

// consume hands the actor every input delivered so far, up to a batch,
// and waits until they are applied before taking more.
func (a *Actor) consume(ctx context.Context, sys *actor.ActorSystem, self *actor.PID, cons *journal.Consumer) {
	defer cons.Stop()
	for {
		batch, err := cons.Batch(ctx, a.cfg.Batch, nil)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if errors.Is(err, journal.ErrClosed) {
				sys.Root.Send(self, &consumerLost{err: err})
				return
			}
			a.cfg.Logf("light %s: consumer: %v", a.cfg.Name, err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		f := sys.Root.RequestFuture(self, &delivered{batch: batch, from: cons}, a.cfg.ReplyTimeout)
		if _, err := f.Result(); err != nil && ctx.Err() == nil {
			a.cfg.Logf("light %s: inputs %d-%d: %v", a.cfg.Name, batch[0].Seq, batch[len(batch)-1].Seq, err)
		}
	}
}

// appliedInput is an input the machine has applied, whose outputs are
// being journaled.
type appliedInput struct {
	in      past.Input
	res     machine.Result
	outs    [][]byte
	changes *messages.Changes // an apply someone waits for: what it changed
}

// apply handles delivered inputs in order: skip those already applied,
// apply the others (applyInputs), then ack the last input, which settles
// all.
func (a *Actor) apply(ctx actor.Context, d *delivered) {
	defer ctx.Respond(struct{}{})
	if d.from != a.cons {
		// Left in the mailbox by the consumer before a restart (the
		// actor is new then): the new one delivers these inputs again.
		return
	}
	ins := make([]past.Input, 0, len(d.batch))
	last := a.applied
	for _, dv := range d.batch {
		if dv.Seq <= last {
			continue // a redelivery
		}
		ins = append(ins, past.DecodeInput(a.cfg.Name, past.Record{Seq: dv.Seq, Subject: dv.Subject, Data: dv.Data, Time: dv.Time}))
		last = dv.Seq
	}
	rearm := a.applyInputs(ctx, ins)
	// A lost ack only causes a redelivery, which is skipped by its
	// sequence.
	if err := d.batch[len(d.batch)-1].AckNoWait(); err != nil {
		a.cfg.Logf("light %s: %v", a.cfg.Name, err)
	}
	if rearm {
		a.arm(ctx)
	}
	if a.since >= a.cfg.SnapshotEvery {
		sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ReplyTimeout)
		a.snapshot(sctx)
		cancel()
	}
}

// applyInputs applies inputs (in order, none applied yet), journals all
// their outputs at once, then answers the commands waiting for them. It
// reports whether what is armed may have changed.
func (a *Actor) applyInputs(ctx actor.Context, ins []past.Input) (rearm bool) {
	start := time.Now()
	actx, cancel := context.WithTimeout(context.Background(), a.cfg.ReplyTimeout)
	defer cancel()
	var (
		done []appliedInput
		outs []output
		last = a.applied
	)
	for _, in := range ins {
		var before *messages.ApplyRequest
		from := a.m.State()
		if a.repliesChanges(in) {
			exp := a.m.Export()
			before = &exp
		}
		res, b := past.Compute(a.m, a.cfg.Name, in, past.TimedOut{})
		for i := range b {
			outs = append(outs, output{typ: res.Outputs[i].Type, data: b[i], cause: in.Seq, n: i})
		}
		ap := appliedInput{in: in, res: res, outs: b}
		if before != nil && res.Err == nil {
			ch := changesOf(*before, from, a.m)
			ap.changes = &ch
		}
		done = append(done, ap)
		last = in.Seq
	}
	if err := a.publish(actx, outs); err != nil {
		// The machine has applied inputs whose outputs are not all
		// journaled: restart, and recovery completes them. The commands
		// waiting are told, since their answers go with this actor.
		for _, ap := range done {
			if pid, ok := a.waiters[ap.in.ID]; ok && ap.in.ID != "" {
				ctx.Send(pid, unfinished(a.cfg.Name, ap.in.Seq, err))
			}
		}
		panic(fmt.Sprintf("light %s: journal outputs of inputs %d-%d: %v", a.cfg.Name, a.applied+1, last, err))
	}
	a.applied = last
	a.cfg.Meter.Applied(len(done), len(outs), time.Since(start))
	// The outputs are durable: answer.
	for _, ap := range done {
		if pid, ok := a.waiters[ap.in.ID]; ok && ap.in.ID != "" {
			delete(a.waiters, ap.in.ID)
			ctx.Send(pid, reply(ap.in.Seq, ap.res, ap.outs, ap.changes))
		}
		rearm = rearm || hasTimerOutput(ap.res)
	}
	a.since += len(done)
	return rearm
}

// hasTimerOutput reports whether an input may have changed what is
// armed: a timer or schedule output, a layer's end, or a configuration
// change (which may add or end a layer with a deadline).
func hasTimerOutput(res machine.Result) bool {
	for _, o := range res.Outputs {
		switch o.Type {
		case messages.OutTimer, messages.OutSchedule, messages.OutLayer, messages.OutConfig:
			return true
		}
	}
	return false
}

func (a *Actor) snapshot(ctx context.Context) {
	b, err := a.m.Snapshot()
	if err == nil {
		b, err = json.Marshal(past.Snapshot{Applied: a.applied, Machine: b})
	}
	if err == nil {
		err = a.cfg.Journal.SaveSnapshot(ctx, a.cfg.Name, b)
	}
	if err != nil {
		a.cfg.Logf("light %s: snapshot: %v", a.cfg.Name, err)
		return
	}
	a.since = 0
	a.cfg.Meter.Snapshotted()
	a.keepPast(ctx, b)
	a.compact(ctx)
}

// output is one output event to journal.
type output struct {
	typ   string
	data  []byte
	cause uint64
	n     int // its position among its input's outputs
}

// publish journals outputs, all in flight at once, each with the id
// derived from its cause so a retry after a crash never stores one twice.
func (a *Actor) publish(ctx context.Context, outs []output) error {
	pending := make([]*journal.Pending, len(outs))
	for i, o := range outs {
		p, err := a.cfg.Journal.AppendAsync(subject.Out(a.cfg.Name, o.typ), o.data,
			journal.MsgID(messages.OutputID(a.cfg.Name, o.cause, o.n)))
		if err != nil {
			return err
		}
		pending[i] = p
	}
	for _, p := range pending {
		if _, err := p.Wait(ctx); err != nil {
			return err
		}
	}
	return nil
}

func reply(seq uint64, res machine.Result, outs [][]byte, changes *messages.Changes) any {
	if res.Err != nil {
		return &messages.ErrorReply{Code: res.Err.Code, Error: res.Err.Error}
	}
	envs := make([]messages.Envelope, len(outs))
	for i, b := range outs {
		_ = messages.DecodeEnvelope(b, &envs[i])
	}
	return &messages.Reply{OK: true, Seq: seq, State: res.State, Changed: res.Changed, Rule: res.Rule, Outputs: envs, Changes: changes}
}

// repliesChanges reports whether in is an apply (or a set_names) a
// command waits for, whose reply says what it changed. Only those pay for the two exports
// the diff needs; replay and the inputs nobody waits for never do.
func (a *Actor) repliesChanges(in past.Input) bool {
	if in.Type != messages.InConfig || in.ID == "" || a.waiters[in.ID] == nil {
		return false
	}
	var d struct {
		Op string `json:"op"`
	}
	return json.Unmarshal(in.Data, &d) == nil && (d.Op == messages.OpApply || d.Op == messages.OpSetNames)
}

// dryRun applies a command's input to a copy of the machine, as the
// light would apply it now, and answers with what it would change; the
// light and its journal stay as they are.
func (a *Actor) dryRun(c *Command) any {
	m, err := a.m.Clone()
	if err != nil {
		return &messages.ErrorReply{Code: 500, Error: fmt.Sprintf("dry run: could not copy the light (%v); try again", err)}
	}
	defer m.Close()
	res := m.Apply(machine.Event{Seq: a.applied + 1, Time: a.cfg.Clock.Now()}, c.Type, c.Data)
	if res.Err != nil {
		return &messages.ErrorReply{Code: res.Err.Code, Error: res.Err.Error}
	}
	return &messages.DryRunReply{OK: true, DryRun: true, Changes: changesOf(a.m.Export(), a.m.State(), m)}
}

// changesOf is what an apply changed: the configuration before (an
// export) against m's, and the state, from before to m's.
func changesOf(before messages.ApplyRequest, from string, m *machine.Machine) messages.Changes {
	ch := messages.DiffConfig(before, m.Export())
	if to := m.State(); to != from {
		ch.State = &messages.Move{From: from, To: to}
	}
	return ch
}

// unfinished is the answer to a command whose input is journaled but
// whose outputs could not be: the light restarts and applies it from its
// journal, so sending it again would apply it twice.
func unfinished(light string, seq uint64, err error) *messages.ErrorReply {
	if errors.Is(err, journal.ErrDiskFull) || errors.Is(err, journal.ErrFull) {
		return &messages.ErrorReply{Code: actors.CodeFull, Error: fmt.Sprintf("light %s journaled this command (input %d) but the disk filled up before it could journal what the command changed; it takes effect by itself once there is room (free some space, or move --data to a larger disk): do not send it again", light, seq)}
	}
	return &messages.ErrorReply{Code: 500, Error: fmt.Sprintf("light %s journaled this command (input %d) but could not journal what it changed (%v); the light restarts and applies it from its journal: do not send it again", light, seq, err)}
}

// appendError is the answer to a command whose input could not be
// journaled.
func appendError(err error) *messages.ErrorReply {
	if r := actors.NoRoom(err); r != nil {
		return r
	}
	return &messages.ErrorReply{Code: 500, Error: fmt.Sprintf("could not journal the command: %v; try again", err)}
}

// command journals a command's input; the answer is sent when the
// consumer delivers and applies it. Without room on the disk it is
// refused at once, journaling nothing.
func (a *Actor) command(ctx actor.Context, c *Command) {
	if err := a.cfg.Journal.Room(); err != nil {
		ctx.Respond(appendError(err))
		return
	}
	if c.IfSeq != 0 && (c.IfSeq != a.applied || len(a.waiters) > 0) {
		ctx.Respond(&messages.ErrorReply{Code: 409, Error: fmt.Sprintf("light %s changed since input %d (its last is %d): nothing was applied; read it again and make the change again", a.cfg.Name, c.IfSeq, a.applied)})
		return
	}
	// What the light would refuse as it is now is refused before it is
	// journaled (power on with nothing to turn on to).
	if e := a.m.Refuses(c.Type, c.Data); e != nil {
		ctx.Respond(&messages.ErrorReply{Code: e.Code, Error: e.Error})
		return
	}
	id := nuid.Next()
	env := messages.Input(a.cfg.Name, c.Type, id, a.cfg.Clock.Now(), c.Data)
	env.By = c.By
	if sender := ctx.Sender(); sender != nil {
		a.waiters[id] = sender
	}
	self, sys := ctx.Self(), ctx.ActorSystem()
	j, subj, body, timeout := a.cfg.Journal, subject.In(a.cfg.Name, c.Type), messages.AppendEnvelope(nil, &env), a.cfg.ReplyTimeout
	go func() {
		actx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		if _, err := j.Append(actx, subj, body, journal.MsgID(id)); err != nil {
			sys.Root.Send(self, &appendFailed{id: id, err: err})
		}
	}()
}

// arm sets a real timer for each pending durable timer, schedule and
// layer deadline. While the clock is not synchronized nothing is armed; a
// tick checks again.
func (a *Actor) arm(ctx actor.Context) {
	for k, t := range a.armed {
		t.Stop()
		delete(a.armed, k)
	}
	dues := a.m.Dues()
	if len(dues) == 0 {
		return
	}
	self, sys := ctx.Self(), ctx.ActorSystem()
	if !a.cfg.Clock.Synced() {
		if !a.waiting {
			kinds := map[string]int{}
			for _, d := range dues {
				kinds[d.Kind]++
			}
			a.cfg.Logf("light %s: the system clock is not synchronized yet; %d timers, %d schedules and %d layers wait for it", a.cfg.Name,
				kinds[messages.InTimer], kinds[messages.InSchedule], kinds[messages.InLayer])
		}
		a.waiting = true
		a.armed["clock"] = a.cfg.Clock.AfterFunc(a.cfg.ClockPoll, func() { sys.Root.Send(self, &clockTick{}) })
		return
	}
	if a.waiting {
		a.cfg.Logf("light %s: the system clock is synchronized; timers run", a.cfg.Name)
		a.waiting = false
	}
	now := a.cfg.Clock.Now()
	for _, d := range dues {
		wait := d.At.Sub(now)
		msg := &due{Due: d, late: wait < 0}
		a.armed[d.Kind+":"+d.Name] = a.cfg.Clock.AfterFunc(wait, func() { sys.Root.Send(self, msg) })
	}
}

// dueRoomRetry is how often a due timer, schedule or layer end that
// found the disk full looks for room again.
const dueRoomRetry = 5 * time.Second

// fireDue journals a timer or schedule input. Its id is derived from the
// deadline, so a timer fired both before and after a crash is stored once,
// and the machine ignores a deadline it no longer has.
func (a *Actor) fireDue(ctx actor.Context, d *due) {
	delete(a.armed, d.Kind+":"+d.Name)
	if err := a.cfg.Journal.Room(); err != nil {
		// It stays pending in the machine: try again, late, once
		// there is room (a restart meanwhile fires it late too).
		if !d.full {
			a.cfg.Logf("light %s: %s %s is due but waits for room on the disk: %v", a.cfg.Name, d.Kind, d.Name, err)
		}
		again, self, sys := &due{Due: d.Due, late: true, full: true}, ctx.Self(), ctx.ActorSystem()
		a.armed[d.Kind+":"+d.Name] = a.cfg.Clock.AfterFunc(dueRoomRetry, func() { sys.Root.Send(self, again) })
		return
	}
	data := d.Data(d.late || a.cfg.Clock.Now().Sub(d.At) > time.Second)
	id := messages.DueID(a.cfg.Name, d.Kind, d.Name, d.At)
	env := messages.Input(a.cfg.Name, d.Kind, id, a.cfg.Clock.Now(), data)
	env.By = messages.Who(d.Kind, d.Name) // timer:<name>, schedule:<name> or layer:<name>
	j, subj, body := a.cfg.Journal, subject.In(a.cfg.Name, d.Kind), messages.AppendEnvelope(nil, &env)
	go func() {
		actx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := j.Append(actx, subj, body, journal.MsgID(id)); err != nil {
			a.cfg.Logf("light %s: journal %s %s: %v", a.cfg.Name, d.Kind, d.Name, err)
		}
	}()
}

// WaitApplied waits until the light has applied every input journaled so
// far, so that a daemon announces itself ready only once its lights are.
func WaitApplied(ctx context.Context, root *actor.RootContext, pid *actor.PID, j *journal.Journal, name string) error {
	// A first round trip makes sure the actor has started (and journaled
	// its seed configuration, if any) before looking at the journal.
	if _, err := root.RequestFuture(pid, &Get{}, 5*time.Minute).Result(); err != nil {
		return fmt.Errorf("light %s: not answering: %w", name, err)
	}
	last, err := j.LastMsg(ctx, subject.AllIn(name))
	switch {
	case errors.Is(err, journal.ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	for {
		res, err := root.RequestFuture(pid, &Get{}, 5*time.Second).Result()
		if err == nil {
			if g, ok := res.(*messages.GetReply); ok && g.Seq >= last.Seq {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("light %s: still catching up with its journal: %w", name, ctx.Err())
		case <-time.After(20 * time.Millisecond):
		}
	}
}
