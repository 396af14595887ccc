package daemon_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/wire"
)

// simRig is the demo light in process on simulated hardware and a fake
// clock: the button's edges are stamped, and its gestures decided, on
// the clock the test moves, so a loaded machine cannot turn two clicks
// into a double click, nor a click into a hold.
type simRig struct {
	t      *testing.T
	clock  *clocktest.Clock
	c      *wire.Client
	events chan *nats.Msg
	data   string
	d      *daemon.Daemon
}

func newSimRig(t *testing.T) *simRig {
	t.Helper()
	r := &simRig{t: t, clock: clocktest.New(time.Date(2026, 11, 24, 20, 0, 0, 0, time.UTC)), data: t.TempDir()}
	cfg := daemon.DefaultConfig(r.data)
	cfg.Listen, cfg.Sync, cfg.Hardware.Driver, cfg.Clock, cfg.Logf = "127.0.0.1:0", broker.SyncBatch, "sim", r.clock, testLog(t)
	d, err := daemon.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	r.d = d
	nc, err := nats.Connect(d.URL())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	r.c = wire.New(nc)
	r.events = make(chan *nats.Msg, 4096)
	if _, err := nc.ChanSubscribe("lumen.demo.evt.>", r.events); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return r
}

// edge sends a raw edge into the simulated button, at the clock's time.
func (r *simRig) edge(e string) {
	r.t.Helper()
	if err := r.c.Call(context.Background(), "demo", messages.VerbButton, messages.ButtonRequest{Edge: e}, nil); err != nil {
		r.t.Fatal(err)
	}
}

func (r *simRig) led() messages.LEDReply {
	r.t.Helper()
	var l messages.LEDReply
	if err := r.c.Call(context.Background(), "demo", messages.VerbLED, nil, &l); err != nil {
		r.t.Fatal(err)
	}
	return l
}

func (r *simRig) waitLED(state string) messages.LEDReply {
	r.t.Helper()
	var l messages.LEDReply
	lumentest.WaitFor(r.t, 10*time.Second, "the LED to show "+state, func() bool { l = r.led(); return l.State == state })
	return l
}

// waitEvent waits for an event on subj whose body contains contains.
func (r *simRig) waitEvent(subj, contains string) *nats.Msg {
	r.t.Helper()
	return lumentest.WaitEvent(r.t, r.events, subj, contains)
}

// settle makes sure every event journaled so far has been delivered: a
// variable set now comes back after all of them.
func (r *simRig) settle() {
	r.t.Helper()
	mark := time.Now().Format(time.RFC3339Nano)
	if err := r.c.Call(context.Background(), "demo", messages.VerbSetVar, messages.InVarData{Name: "mark", Value: json.RawMessage(`"` + mark + `"`)}, nil); err != nil {
		r.t.Fatal(err)
	}
	r.waitEvent("lumen.demo.evt.out.var", mark)
}

// none fails if an event on subj containing contains was delivered.
func (r *simRig) none(subj, contains, what string) {
	r.t.Helper()
	r.settle()
	for {
		select {
		case m := <-r.events:
			if m.Subject == subj && strings.Contains(string(m.Data), contains) {
				r.t.Fatalf("%s: %s", what, m.Data)
			}
		default:
			return
		}
	}
}

// Raw edges over NATS go through debounce and gesture detection, become
// fired inputs, the rules react, and the LED shows the new state.
func TestSimulatedButtonAndLED(t *testing.T) {
	r := newSimRig(t)
	if l := r.waitLED("off"); l.Pixels[0] != (messages.Pixel{}) || l.Raw[0] != (messages.Pixel{}) {
		t.Fatalf("off shows %+v", l)
	}
	// A click with contact bounce on the way down.
	r.edge("down")
	r.edge("up")
	r.edge("down")
	r.clock.Advance(60 * time.Millisecond)
	r.edge("up")
	r.clock.Advance(400 * time.Millisecond) // the double-click window closes
	in := r.waitEvent("lumen.demo.evt.in.fired", `"button_click"`)
	if !strings.Contains(string(in.Data), `"source":"button"`) {
		t.Fatalf("gesture input does not say it came from the button: %s", in.Data)
	}
	r.waitEvent("lumen.demo.evt.out.state", `"to":"red"`)
	if l := r.waitLED("red"); l.Raw[0] != (messages.Pixel{R: 255}) || l.Pixels[0].R == 0 || l.Pixels[0].G != 0 {
		t.Fatalf("red shows %+v", l)
	}

	// A hold turns it off (the demo's wildcard rule), then a release.
	r.edge("down")
	r.clock.Advance(900 * time.Millisecond)
	r.waitEvent("lumen.demo.evt.in.fired", `"button_hold"`)
	r.edge("up")
	r.waitEvent("lumen.demo.evt.in.fired", `"button_release"`)
	r.waitLED("off")

	// With no rule on a double click, two quick clicks are two clicks,
	// each decided on its release (no double-click window to wait for).
	for range 2 {
		r.edge("down")
		r.clock.Advance(40 * time.Millisecond)
		r.edge("up")
		r.waitEvent("lumen.demo.evt.in.fired", `"button_click"`)
		r.clock.Advance(60 * time.Millisecond)
	}
	r.none("lumen.demo.evt.in.fired", `"button_double_click"`, "two clicks made a double click no rule wants")

	// With one, two quick clicks are one double click, never two clicks.
	if err := r.c.Call(context.Background(), "demo", messages.VerbAppendRules,
		json.RawMessage(`{"rules":[{"from":"*","on":"button_double_click","to":"blue"}]}`), nil); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "led's click_waits with a double-click rule", func() bool { return r.led().ClickWaits })
	for range 2 {
		r.edge("down")
		r.clock.Advance(40 * time.Millisecond)
		r.edge("up")
		r.clock.Advance(60 * time.Millisecond)
	}
	r.waitEvent("lumen.demo.evt.in.fired", `"button_double_click"`)
	r.clock.Advance(500 * time.Millisecond)
	r.none("lumen.demo.evt.in.fired", `"button_click"`, "a double click also fired a click")

	// Bad edges get clear errors.
	var we *wire.Error
	if err := r.c.Call(context.Background(), "demo", messages.VerbButton, messages.ButtonRequest{Edge: "sideways"}, nil); !errors.As(err, &we) || we.Code != 400 || !strings.Contains(we.Msg, "down") {
		t.Fatalf("bad edge: %v", err)
	}
	if err := r.c.Call(context.Background(), "demo", messages.VerbButton, messages.ButtonRequest{Edge: "up"}, nil); !errors.As(err, &we) || we.Code != 409 {
		t.Fatalf("up while up: %v", err)
	}
}

// A state whose color expression fails shows the error color and
// journals one error, not one per frame; replay verifies past it.
func TestRenderErrorIsJournaledOnce(t *testing.T) {
	r := newSimRig(t)
	ctx := context.Background()
	if err := r.c.Call(ctx, "demo", messages.VerbCreateState, messages.State{Name: "broken", R: messages.Channel{Expr: "undefinedThing * 2"}, Speed: func() *int { ms := 20; return &ms }()}, nil); err != nil {
		t.Fatal(err)
	}
	if err := r.c.Call(ctx, "demo", messages.VerbSetState, messages.SetStateRequest{Name: "broken"}, nil); err != nil {
		t.Fatal(err)
	}
	r.waitEvent("lumen.demo.evt.out.error", `"kind":"render"`)
	for range 15 { // 15 frames, each shown before the LED answers
		r.clock.Advance(20 * time.Millisecond)
		r.led()
	}
	r.none("lumen.demo.evt.out.error", `"kind":"render"`, "a second render error for the same state")

	if err := r.d.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := broker.Inspect(ctx, r.data)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Shutdown()
	if _, err := (past.Replay{Light: "demo", Verify: true}).Run(ctx, journal.New(b.JetStream())); err != nil {
		t.Fatalf("replay --verify fails once a render error is journaled: %v", err)
	}
}

// A color that never finishes a frame is stopped after render.StopAfter
// frames over their budget: one render error that says so, the LED at
// the stopped color (the error color at a quarter), no frame due any
// more, and the state fixed renders again.
func TestLoopingColorStops(t *testing.T) {
	r := newSimRig(t)
	ctx := context.Background()
	ms := 20
	spin := messages.State{Name: "spin", R: messages.Channel{Expr: "(function(){ while (true) {} })()"}, Speed: &ms}
	for _, c := range []struct {
		verb string
		body any
	}{{messages.VerbCreateState, spin}, {messages.VerbSetState, messages.SetStateRequest{Name: "spin"}}} {
		if err := r.c.Call(ctx, "demo", c.verb, c.body, nil); err != nil {
			t.Fatal(err)
		}
	}
	r.waitLED("spin")
	var stopped *nats.Msg
	for range 10 * render.StopAfter {
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		r.led() // after the frame due
		for len(r.events) > 0 && stopped == nil {
			if m := <-r.events; m.Subject == "lumen.demo.evt.out.error" && strings.Contains(string(m.Data), `"kind":"render"`) {
				stopped = m
			}
		}
		if stopped != nil {
			break
		}
	}
	if stopped == nil || !strings.Contains(string(stopped.Data), "stopped") {
		t.Fatalf("the looping state's render error: %v", stopped)
	}
	for range 5 {
		r.clock.Advance(time.Duration(ms) * time.Millisecond)
		if l := r.led(); l.Raw[0] != (messages.Pixel{R: 64, G: 0, B: 32}) {
			t.Fatalf("a stopped state shows %+v, want the stopped color", l.Raw)
		}
	}
	r.none("lumen.demo.evt.out.error", `"kind":"render"`, "a second render error for the stopped state")

	spin.R = messages.Channel{Expr: "200"}
	if err := r.c.Call(ctx, "demo", messages.VerbCreateState, spin, nil); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "the fixed state's red at 200", func() bool { return r.led().Raw[0].R == 200 })
}
