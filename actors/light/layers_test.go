package light_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
)

// A layer that lasts for a while ends at its deadline, which the light
// arms like a timer: on time while it runs, late after a restart that
// outlived it. The journal replays to the same outputs.
func TestLayerDeadline(t *testing.T) {
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	j := b.Journal
	clock := clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC))
	sys := actor.NewActorSystem()
	spawn := func() *actor.PID {
		props, err := light.Props(light.Config{Name: "k", Journal: j, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		return sys.Root.Spawn(props)
	}
	pid := spawn()
	cmd := func(typ string, data string) *messages.Reply {
		t.Helper()
		res, err := sys.Root.RequestFuture(pid, &light.Command{Type: typ, Data: json.RawMessage(data)}, 10*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		if e, ok := res.(*messages.ErrorReply); ok {
			t.Fatalf("%s %s: %s", typ, data, e.Error)
		}
		return res.(*messages.Reply)
	}
	get := func() *messages.GetReply {
		t.Helper()
		res, err := sys.Root.RequestFuture(pid, &light.Get{}, 10*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		return res.(*messages.GetReply)
	}
	waitState := func(want string) {
		t.Helper()
		lumentest.WaitFor(t, 10*time.Second, "the light to be "+want, func() bool { return get().State == want })
	}
	click := func() string { return cmd(messages.InFired, `{"transition":"button_click"}`).State }

	cmd(messages.InConfig, `{"op":"apply","states":[{"name":"white","r":255,"g":255,"b":255},{"name":"red","r":255,"g":0,"b":0}],
		"rules":[{"from":"off","on":"button_click","to":"white"},{"from":"white","on":"button_click","to":"off"}]}`)
	r := cmd(messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"party","ms":60000}}`)
	if r.Outputs[0].Type != messages.OutConfig || !strings.Contains(string(r.Outputs[0].Data), `"layers":["party"]`) {
		t.Fatalf("append_rules: %+v", r.Outputs)
	}
	if s := click(); s != "red" {
		t.Fatalf("a click in the layer: %s", s)
	}
	// On time: the actor armed the deadline when the layer began.
	if !clock.WaitArmed(clock.Now().Add(time.Minute), 10*time.Second) {
		t.Fatal("the layer's deadline is not armed")
	}
	clock.Advance(time.Minute)
	waitState("off")
	if g := get(); len(g.Layers) != 0 || len(g.Rules) != 2 {
		t.Fatalf("after the deadline: %+v", g)
	}
	if s := click(); s != "white" {
		t.Fatalf("a click after the layer: %s", s)
	}

	// Late: the light is down when the deadline passes.
	cmd(messages.InConfig, `{"op":"append_rules","rules":[{"from":"*","on":"button_click","to":"red"}],"layer":{"name":"again","ms":30000}}`)
	if s := click(); s != "red" {
		t.Fatalf("a click in the second layer: %s", s)
	}
	if err := sys.Root.StopFuture(pid).Wait(); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	pid = spawn()
	defer sys.Root.Stop(pid)
	waitState("white") // the state it began in
	last, err := j.LastMsg(ctx, "lumen.k.evt.in.layer")
	if err != nil || !strings.Contains(string(last.Data), `"name":"again"`) || !strings.Contains(string(last.Data), `"late":true`) {
		t.Fatalf("the late layer input: %s %v", last.Data, err)
	}
	out, err := j.LastMsg(ctx, "lumen.k.evt.out.layer")
	if err != nil || !strings.Contains(string(out.Data), `{"name":"again","ended_by":"ms","restored":true,"late":true}`) {
		t.Fatalf("the late layer output: %s %v", out.Data, err)
	}
	if _, err := (past.Replay{Light: "k", Verify: true}).Run(ctx, j); err != nil {
		t.Fatalf("replay --verify: %v", err)
	}
}
