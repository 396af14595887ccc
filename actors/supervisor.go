// Package actors holds the supervision tree: a root that supervises every
// light (and, later, data sources, tools and agent sessions) one for one,
// restarting a crashed child after an exponential backoff and reporting
// each restart so it can be journaled.
package actors

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/nats/journal"
)

// Restart describes one supervised restart.
type Restart struct {
	Child    *actor.PID
	Reason   any
	Restarts int           // failures within the window, this one included
	Delay    time.Duration // backoff before the restart
}

// Strategy is a one-for-one strategy with exponential backoff: a failing
// child is restarted after Initial, 2×Initial … up to Max; more than
// MaxRestarts failures within Window stop it for good.
type Strategy struct {
	MaxRestarts int
	Window      time.Duration
	Initial     time.Duration
	Max         time.Duration
	// OnRestart is called before each restart, off the actor's goroutine.
	OnRestart func(Restart)
	// OnStop is called when a child is given up on.
	OnStop func(child *actor.PID, reason any)
}

// DefaultStrategy restarts up to 10 times a minute, backing off from
// 100 ms to 5 s.
func DefaultStrategy() *Strategy {
	return &Strategy{MaxRestarts: 10, Window: time.Minute, Initial: 100 * time.Millisecond, Max: 5 * time.Second}
}

var _ actor.SupervisorStrategy = (*Strategy)(nil)

// HandleFailure implements actor.SupervisorStrategy.
func (s *Strategy) HandleFailure(_ *actor.ActorSystem, sup actor.Supervisor, child *actor.PID, rs *actor.RestartStatistics, reason any, _ any) {
	if rs.NumberOfFailures(s.Window) == 0 {
		rs.Reset()
	}
	rs.Fail()
	n := rs.NumberOfFailures(s.Window)
	if n > s.MaxRestarts {
		if s.OnStop != nil {
			s.OnStop(child, reason)
		}
		sup.StopChildren(child)
		return
	}
	delay := s.Initial << (n - 1)
	if delay > s.Max || delay <= 0 {
		delay = s.Max
	}
	if s.OnRestart != nil {
		s.OnRestart(Restart{Child: child, Reason: reason, Restarts: n, Delay: delay})
	}
	time.AfterFunc(delay, func() { sup.RestartChildren(child) })
}

// Spawn asks the root to start a supervised child; the answer is
// *Spawned.
type Spawn struct {
	Name  string
	Props *actor.Props
}

// Spawned answers Spawn.
type Spawned struct {
	PID *actor.PID
	Err error
}

// Root is the top of the tree. Its children are supervised by the strategy
// given to NewRoot.
type Root struct{}

// Receive implements actor.Actor.
func (Root) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*Spawn); ok {
		pid, err := ctx.SpawnNamed(m.Props, m.Name)
		if err != nil {
			err = fmt.Errorf("actors: spawn %s: %w", m.Name, err)
		}
		ctx.Respond(&Spawned{PID: pid, Err: err})
	}
}

// NewRoot starts the root actor supervising its children with s.
func NewRoot(sys *actor.ActorSystem, s *Strategy) (*actor.PID, error) {
	props := actor.PropsFromProducer(func() actor.Actor { return Root{} }, actor.WithSupervisor(s))
	pid, err := sys.Root.SpawnNamed(props, "lumen")
	if err != nil {
		return nil, fmt.Errorf("actors: root: %w", err)
	}
	return pid, nil
}

// SpawnChild starts a child under root and waits for it.
func SpawnChild(sys *actor.ActorSystem, root *actor.PID, name string, props *actor.Props) (*actor.PID, error) {
	res, err := sys.Root.RequestFuture(root, &Spawn{Name: name, Props: props}, 10*time.Second).Result()
	if err != nil {
		return nil, fmt.Errorf("actors: spawn %s: %w", name, err)
	}
	s := res.(*Spawned)
	return s.PID, s.Err
}

// JournaledStrategy is DefaultStrategy for the actors of light below its
// top-level ones (a light's sources, tools, agent sessions): each restart
// is logged and journaled as a restart output of the light
// (JournalRestart), and a child given up on is logged. what names the
// children in the log, e.g. "data source".
func JournaledStrategy(light, what string, j *journal.Journal, now func() time.Time, logf func(string, ...any)) *Strategy {
	s := DefaultStrategy()
	s.OnRestart = func(r Restart) {
		logf("%s %s of light %s crashed (%v); restart %d in %s", what, r.Child.GetId(), light, r.Reason, r.Restarts, r.Delay)
		if j == nil {
			return
		}
		if err := JournalRestart(j, light, r, now()); err != nil {
			logf("journal the restart of %s: %v", r.Child.GetId(), err)
		}
	}
	s.OnStop = func(child *actor.PID, reason any) {
		logf("%s %s of light %s failed too often (%v); it is stopped", what, child.GetId(), light, reason)
	}
	return s
}
