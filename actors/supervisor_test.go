package actors_test

import (
	"sync"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
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
		OnStop:    func(_ *actor.PID, reason any) { stopped <- reason },
	}
	root, err := actors.NewRoot(sys, s)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 10)
	pid, err := actors.SpawnChild(sys, root, "crashy", actor.PropsFromProducer(func() actor.Actor { return &crashy{started: started} }))
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
