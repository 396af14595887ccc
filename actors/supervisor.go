// Package actors holds the supervision tree: a root that supervises the
// actors of every light (its state machine, hardware, tools, data sources
// and agent) one for one, restarting a crashed child after an exponential
// backoff and reporting each restart, with the light it belongs to, so it
// can be journaled; and what every actor shares (journaling what no input
// caused, answering a request with an actor's reply, a mailbox loop).
package actors

import (
	"fmt"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/nats/journal"
)

// Restart describes one supervised restart.
type Restart struct {
	Child    *actor.PID
	Light    string // the light the child belongs to
	Role     string // what the child is to its light (Root.Spawn's role)
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
	// OnStop is called when a child is given up on (Delay is 0).
	OnStop func(Restart)

	// whose tells which light a child belongs to and what it is to it
	// (set by NewRoot and JournaledStrategy).
	whose func(child *actor.PID) (light, role string)
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
	r := Restart{Child: child, Reason: reason, Restarts: n}
	if s.whose != nil {
		r.Light, r.Role = s.whose(child)
	}
	if n > s.MaxRestarts {
		if s.OnStop != nil {
			s.OnStop(r)
		}
		sup.StopChildren(child)
		return
	}
	r.Delay = s.Initial << (n - 1)
	if r.Delay > s.Max || r.Delay <= 0 {
		r.Delay = s.Max
	}
	if s.OnRestart != nil {
		s.OnRestart(r)
	}
	delay := r.Delay
	time.AfterFunc(delay, func() { sup.RestartChildren(child) })
}

// Counted returns s, counting each restart with count after OnRestart
// (the daemon's metrics).
func (s *Strategy) Counted(count func(Restart)) *Strategy {
	on := s.OnRestart
	s.OnRestart = func(r Restart) {
		if on != nil {
			on(r)
		}
		count(r)
	}
	return s
}

// Root is the top of the tree: it supervises its children with the
// strategy given to NewRoot and keeps which light each belongs to, and
// what it is to it.
type Root struct {
	sys *actor.ActorSystem
	pid *actor.PID

	mu       sync.Mutex
	children map[string]child // by actor id
}

type child struct{ light, role string }

// spawn asks the root actor to start a supervised child of light; the
// answer is *spawned.
type spawn struct {
	light, role string
	props       *actor.Props
}

type spawned struct {
	pid *actor.PID
	err error
}

// rootActor spawns the children, on the root's goroutine, where their
// failures are handled: a child is known by its light before it can fail.
type rootActor struct{ r *Root }

func (a rootActor) Receive(ctx actor.Context) {
	if m, ok := ctx.Message().(*spawn); ok {
		name := m.role + "-" + m.light
		pid, err := ctx.SpawnNamed(m.props, name)
		if err != nil {
			err = fmt.Errorf("actors: spawn %s: %w", name, err)
		} else {
			a.r.mu.Lock()
			a.r.children[pid.Id] = child{light: m.light, role: m.role}
			a.r.mu.Unlock()
		}
		ctx.Respond(&spawned{pid: pid, err: err})
	}
}

// NewRoot starts the root actor supervising its children with s, which
// is told each child's light.
func NewRoot(sys *actor.ActorSystem, s *Strategy) (*Root, error) {
	r := &Root{sys: sys, children: map[string]child{}}
	s.whose = r.whose
	props := actor.PropsFromProducer(func() actor.Actor { return rootActor{r: r} }, actor.WithSupervisor(s))
	pid, err := sys.Root.SpawnNamed(props, "lumen")
	if err != nil {
		return nil, fmt.Errorf("actors: root: %w", err)
	}
	r.pid = pid
	return r, nil
}

// Spawn starts a supervised child of light, its role (light, device,
// tools, …), named <role>-<light>, and waits for it.
func (r *Root) Spawn(light, role string, props *actor.Props) (*actor.PID, error) {
	res, err := r.sys.Root.RequestFuture(r.pid, &spawn{light: light, role: role, props: props}, 10*time.Second).Result()
	if err != nil {
		return nil, fmt.Errorf("actors: spawn %s of %s: %w", role, light, err)
	}
	s := res.(*spawned)
	return s.pid, s.err
}

// Stop stops the root and every actor under it, and waits.
func (r *Root) Stop() {
	_ = r.sys.Root.StopFuture(r.pid).Wait()
}

func (r *Root) whose(pid *actor.PID) (light, role string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.children[pid.GetId()]
	return c.light, c.role
}

// JournaledStrategy is DefaultStrategy for the actors of light below its
// top-level ones (a light's sources, tools, agent sessions): each restart
// is logged and journaled as a restart output of the light
// (JournalRestart), and a child given up on is logged. what names the
// children in the log, e.g. "data source".
func JournaledStrategy(light, what string, j *journal.Journal, clk clock.Clock, logf func(string, ...any)) *Strategy {
	s := DefaultStrategy()
	s.whose = func(*actor.PID) (string, string) { return light, what }
	s.OnRestart = func(r Restart) {
		logf("%s %s of light %s crashed (%v); restart %d in %s", what, r.Child.GetId(), light, r.Reason, r.Restarts, r.Delay)
		if j == nil {
			return
		}
		if err := JournalRestart(j, light, r, clk.Now()); err != nil {
			logf("journal the restart of %s: %v", r.Child.GetId(), err)
		}
	}
	s.OnStop = func(r Restart) {
		logf("%s %s of light %s failed too often (%v); it is stopped", what, r.Child.GetId(), light, r.Reason)
	}
	return s
}
