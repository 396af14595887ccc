package actors_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
)

type crashy struct{ started chan struct{} }

func (c *crashy) Receive(ctx actor.Context) {
	switch ctx.Message().(type) {
	case *actor.Started:
		c.started <- struct{}{}
	case string:
		panic("boom")
	}
}

// A crashing child is restarted after a growing backoff, each restart is
// reported, and past MaxRestarts it is stopped and reported once more.
func TestStrategyRestartsWithBackoffThenStops(t *testing.T) {
	sys := actor.NewActorSystem()
	var mu sync.Mutex
	var restarts []actors.Restart
	stopped := make(chan any, 1)
	s := &actors.Strategy{MaxRestarts: 3, Window: time.Minute, Initial: 10 * time.Millisecond, Max: 25 * time.Millisecond,
		OnRestart: func(r actors.Restart) { mu.Lock(); restarts = append(restarts, r); mu.Unlock() },
		OnStop:    func(r actors.Restart) { stopped <- r.Reason },
	}
	root, err := actors.NewRoot(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 10)
	pid, err := root.Spawn("k", "crashy", actor.PropsFromProducer(func() actor.Actor { return &crashy{started: started} }))
	if err != nil {
		t.Fatal(err)
	}
	<-started
	for i := 0; i < 3; i++ {
		sys.Root.Send(pid, "crash")
		select {
		case <-started:
		case <-time.After(5 * time.Second):
			t.Fatalf("not restarted after crash %d", i+1)
		}
	}
	sys.Root.Send(pid, "crash")
	select {
	case reason := <-stopped:
		if reason != "boom" {
			t.Errorf("stop reason %v", reason)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not stopped after too many crashes")
	}
	mu.Lock()
	defer mu.Unlock()
	want := []time.Duration{10 * time.Millisecond, 20 * time.Millisecond, 25 * time.Millisecond}
	if len(restarts) != len(want) {
		t.Fatalf("restarts %v", restarts)
	}
	for i, r := range restarts {
		if r.Restarts != i+1 || r.Delay != want[i] || r.Reason != "boom" {
			t.Errorf("restart %d: %+v, want delay %s", i, r, want[i])
		}
	}
}

// The root tells the light of a crashed child from what it spawned, not
// from the child's name: a light may well be called desk-light-1, and its
// hardware actor device-desk-light-1.
func TestRootKnowsEachChildsLight(t *testing.T) {
	sys := actor.NewActorSystem()
	lights := make(chan string, 8)
	s := actors.DefaultStrategy()
	s.Initial = time.Millisecond
	s.OnRestart = func(r actors.Restart) { lights <- r.Role + " of " + r.Light }
	root, err := actors.NewRoot(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Stop()
	started := make(chan struct{}, 10)
	props := actor.PropsFromProducer(func() actor.Actor { return &crashy{started: started} })
	for _, c := range []struct{ light, role string }{
		{"desk-light-1", "device"},
		{"desk-light-1", "tools"},
		{"light-device-", "light"},
	} {
		pid, err := root.Spawn(c.light, c.role, props)
		if err != nil {
			t.Fatal(err)
		}
		if pid.Id != "lumen/"+c.role+"-"+c.light {
			t.Errorf("child id %s", pid.Id)
		}
		<-started
		sys.Root.Send(pid, "crash")
		select {
		case got := <-lights:
			if want := c.role + " of " + c.light; got != want {
				t.Errorf("%s crashed: restart of %q, want %q", pid.Id, got, want)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("%s: no restart", pid.Id)
		}
		<-started
	}
}

// JournaledStrategy records each restart of a light's actor in the
// journal: a restart output of the light, with cause 0, naming the actor.
func TestJournaledStrategy(t *testing.T) {
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	j := b.Journal
	sys := actor.NewActorSystem()
	s := actors.JournaledStrategy("k", "tool", j, clock.System(clock.Trust), t.Logf)
	parent := sys.Root.Spawn(actor.PropsFromFunc(func(ctx actor.Context) {
		if p, ok := ctx.Message().(*actor.Props); ok {
			ctx.Respond(ctx.Spawn(p))
		}
	}, actor.WithSupervisor(s)))
	started := make(chan struct{}, 4)
	res, err := sys.Root.RequestFuture(parent, actor.PropsFromProducer(func() actor.Actor { return &crashy{started: started} }), 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	child := res.(*actor.PID)
	<-started
	sys.Root.Send(child, "crash")
	select {
	case <-started:
	case <-time.After(5 * time.Second):
		t.Fatal("not restarted")
	}
	var m journal.Msg
	lumentest.WaitFor(t, 5*time.Second, "the restart event", func() bool {
		var err error
		m, err = j.LastMsg(ctx, "lumen.k.evt.out.restart")
		return err == nil
	})
	var env messages.Envelope
	var d messages.OutRestartData
	if err := messages.DecodeEnvelope(m.Data, &env); err != nil || json.Unmarshal(env.Data, &d) != nil {
		t.Fatalf("restart event %s: %v", m.Data, err)
	}
	if d.Actor != child.Id || d.Restarts != 1 || d.Reason != "boom" || env.Cause != 0 || env.Light != "k" {
		t.Fatalf("restart event %s", m.Data)
	}
}

// A failure journaled for a light never shows a URL's password.
func TestJournalFailureRedacts(t *testing.T) {
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	j := b.Journal
	actors.JournalFailure(j, "k", messages.OutErrorData{Code: 502, Kind: messages.ErrorSource, Error: "source door: cannot reach mqtt://ann:s3cr3t@broker:1883"}, time.Now(), t.Logf)
	lumentest.WaitFor(t, 5*time.Second, "the failure in the journal", func() bool {
		m, err := j.LastMsg(ctx, "lumen.k.evt.out.error")
		if err != nil {
			return false
		}
		if strings.Contains(string(m.Data), "s3cr3t") || !strings.Contains(string(m.Data), "mqtt://ann:xxxxx@broker:1883") {
			t.Fatalf("journaled: %s", m.Data)
		}
		return true
	})
}
