package light_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
)

// Until the clock is synchronized a due timer waits, and the light says
// so; once it is, the timer fires (late).
func TestTimersWaitForClockSync(t *testing.T) {
	b := lumentest.StartBus(t, broker.Config{})
	j := b.Journal
	clock := clocktest.New(time.Date(2026, 11, 24, 23, 0, 0, 0, time.UTC))
	clock.SetSynced(false)
	var l lumentest.Buffer
	props, err := light.Props(light.Config{Name: "k", Journal: j, Clock: clock, ClockPoll: 5 * time.Second, Logf: l.Logf})
	if err != nil {
		t.Fatal(err)
	}
	sys := actor.NewActorSystem()
	pid := sys.Root.Spawn(props)
	defer sys.Root.Stop(pid)

	cmd := func(typ string, data string) any {
		res, err := sys.Root.RequestFuture(pid, &light.Command{Type: typ, Data: json.RawMessage(data)}, 10*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := res.(*messages.ErrorReply); ok {
			t.Fatalf("%s %s: %s", typ, data, e.Error)
		}
		return res
	}
	get := func() *messages.GetReply {
		res, err := sys.Root.RequestFuture(pid, &light.Get{}, 10*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		return res.(*messages.GetReply)
	}
	cmd(messages.InConfig, `{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"rules":[
		{"from":"*","on":"arm","to":"off","action":"startTimer('ding', 20)"},
		{"from":"*","on":"ding","to":"red"}]}`)
	cmd(messages.InFired, `{"transition":"arm"}`)
	// Long past the deadline, the light only looks at the clock again.
	for range 3 {
		if !clock.WaitArmed(clock.Now().Add(5*time.Second), 10*time.Second) {
			t.Fatal("the light does not check the clock again")
		}
		clock.Advance(5 * time.Second)
	}
	if g := get(); g.State != "off" || len(g.Timers) != 1 {
		t.Fatalf("the timer fired before the clock was synchronized: %+v", g)
	}
	if !l.Contains("not synchronized") {
		t.Fatalf("the light does not say why the timer waits: %v", l.String())
	}
	clock.SetSynced(true)
	// At its next look the light arms the timer, whose deadline passed:
	// it fires at once.
	if !clock.WaitArmed(clock.Now().Add(5*time.Second), 10*time.Second) {
		t.Fatal("the light does not check the clock again")
	}
	clock.Advance(5 * time.Second)
	lumentest.WaitFor(t, 10*time.Second, "the timer to fire once the clock is synchronized", func() bool { return get().State == "red" })
}
