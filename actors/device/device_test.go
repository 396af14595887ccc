package device_test

import (
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/device"
	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/actors/light/service"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/hwtest"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// rig is a light "k" with its service and a hardware actor on a fake
// device whose button edges carry the fake clock's time.
type rig struct {
	sys   *actor.ActorSystem
	light *actor.PID
	dev   *actor.PID
	hw    *hwtest.Device
	clock *clocktest.Clock
	nc    *nats.Conn
	j     *journal.Journal
}

const config = `{"op":"apply","states":[
	{"name":"red","r":255,"g":0,"b":0},
	{"name":"broken","r":"nope.x","g":0,"b":0,"speed":10},
	{"name":"pulse","r":"frame % 256","g":0,"b":0,"speed":10}],
	"rules":[{"from":"*","on":"button_click","to":"red"},{"from":"*","on":"button_hold","to":"off"}]}`

// quietSystem is an actor system that logs nothing.
func quietSystem() *actor.ActorSystem {
	return actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}))
}

func newRig(t *testing.T) *rig {
	t.Helper()
	br := lumentest.StartBus(t, broker.Config{})
	j := br.Journal
	nc := br.Conn(t)
	sys := quietSystem()
	lp, err := light.Props(light.Config{Name: "k", Journal: j, Clock: clock.System(clock.Trust)})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{sys: sys, light: sys.Root.Spawn(lp), nc: nc, j: j, clock: clocktest.New(time.Now())}
	svc, err := service.Serve(nc, sys.Root, r.light, "k", nil, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	r.command(t, messages.InConfig, config)
	r.hw = hwtest.NewDevice(1, r.clock)
	dp, err := device.Props(device.Config{Light: "k", Device: r.hw, Journal: j, Conn: nc, Clock: r.clock,
		Render: render.Options{Pixels: 1, Gamma: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r.dev = sys.Root.Spawn(dp)
	t.Cleanup(func() { _ = sys.Root.StopFuture(r.dev).Wait(); _ = sys.Root.StopFuture(r.light).Wait() })
	return r
}

func (r *rig) command(t *testing.T, typ, data string) {
	t.Helper()
	res, err := r.sys.Root.RequestFuture(r.light, &light.Command{Type: typ, Data: json.RawMessage(data)}, 10*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := res.(*messages.ErrorReply); ok {
		t.Fatalf("%s %s: %s", typ, data, e.Error)
	}
}

// firedInputs follows the light's fired inputs until the test ends.
func (r *rig) firedInputs(t *testing.T) chan *nats.Msg {
	t.Helper()
	fired := make(chan *nats.Msg, 16)
	sub, err := r.nc.ChanSubscribe(subject.In("k", messages.InFired), fired)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	return fired
}

// frameDone waits until the actor has shown the frame due now and armed
// the next one, every later: what it publishes of the frame is then sent
// too. The frames are the only timers of the device's clock while the
// button rests.
func (r *rig) frameDone(t *testing.T, every time.Duration) {
	t.Helper()
	if !r.clock.WaitArmed(r.clock.Now().Add(every), 10*time.Second) {
		t.Fatal("the animation stopped: no next frame is armed")
	}
}

// nextFrame moves the device's clock to its next frame, every later, once
// the frame before is done.
func (r *rig) nextFrame(t *testing.T, every time.Duration) {
	t.Helper()
	r.frameDone(t, every)
	r.clock.Advance(every)
}

// waitFrame waits until the fake LED's last frame is want.
func (r *rig) waitFrame(t *testing.T, want hardware.RGB) {
	t.Helper()
	lumentest.WaitFor(t, 10*time.Second, fmt.Sprintf("the LED to show %v", want), func() bool {
		f := r.hw.Last()
		return len(f) == 1 && f[0] == want
	})
}

func (r *rig) show(t *testing.T) *messages.LEDReply {
	t.Helper()
	res, err := r.sys.Root.RequestFuture(r.dev, &device.Show{}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	return res.(*messages.LEDReply)
}

func TestGesturesDriveTheLightAndTheLEDFollows(t *testing.T) {
	r := newRig(t)
	fired := r.firedInputs(t)
	r.waitFrame(t, hardware.RGB{}) // the light starts off

	// A click: no rule reacts to a double click, so it is decided on its
	// release, with no double-click window to wait for.
	r.hw.Press()
	r.clock.Advance(50 * time.Millisecond)
	released := r.clock.Now()
	r.hw.Release()
	r.clock.Advance(400 * time.Millisecond)
	select {
	case m := <-fired:
		var env messages.Envelope
		if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(env.Data), `"transition":"button_click"`) || !strings.Contains(string(env.Data), `"source":"button"`) {
			t.Fatalf("gesture input %s", env.Data)
		}
		if !env.Time.Equal(released.UTC()) {
			t.Fatalf("gesture time %v, want the release %v", env.Time, released)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no click journaled")
	}
	r.waitFrame(t, hardware.RGB{R: 255})
	if got := r.show(t); got.State != "red" || got.Raw[0] != (messages.Pixel{R: 255}) {
		t.Fatalf("led = %+v", got)
	}

	if r.show(t).ClickWaits {
		t.Fatal("led says a click waits, with no double-click rule")
	}

	// A double-click rule from red: from red, a click waits for the
	// double-click window; a rule from elsewhere changes nothing.
	r.command(t, messages.InConfig, `{"op":"append_rules","rules":[{"from":"red","on":"button_double_click","to":"off"}]}`)
	lumentest.WaitFor(t, 10*time.Second, "led to say a click waits, with a double-click rule from red", func() bool { return r.show(t).ClickWaits })
	r.hw.Press()
	r.clock.Advance(50 * time.Millisecond)
	released = r.clock.Now()
	r.hw.Release()
	r.clock.Advance(400 * time.Millisecond)
	select {
	case m := <-fired:
		var env messages.Envelope
		if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
			t.Fatal(err)
		}
		if want := released.Add(300 * time.Millisecond); !env.Time.Equal(want.UTC()) {
			t.Fatalf("gesture time %v, want the end of the double-click window %v", env.Time, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no click journaled")
	}

	// A hold turns it off.
	r.hw.Press()
	r.clock.Advance(900 * time.Millisecond)
	r.waitFrame(t, hardware.RGB{})
	r.hw.Release()
	if r.show(t).ClickWaits {
		t.Fatal("led says a click waits in off, with a double-click rule from red only")
	}

	// The fake device cannot be pressed over NATS.
	res, err := r.sys.Root.RequestFuture(r.dev, &device.Press{Down: true}, 5*time.Second).Result()
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := res.(*messages.ErrorReply); !ok || e.Code != 409 {
		t.Fatalf("press on a real button: %+v", res)
	}
}

func TestRenderErrorOncePerState(t *testing.T) {
	r := newRig(t)
	errs := make(chan *nats.Msg, 16)
	sub, err := r.nc.ChanSubscribe(subject.Out("k", messages.OutError), errs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	r.command(t, messages.InState, `{"name":"broken"}`)
	select {
	case m := <-errs:
		var env messages.Envelope
		_ = messages.DecodeEnvelope(m.Data, &env)
		if env.Cause != 0 || !strings.Contains(string(env.Data), `"kind":"render"`) || !strings.Contains(string(env.Data), "broken") {
			t.Fatalf("render error %s", m.Data)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no render error journaled")
	}
	// Frames keep coming (speed 10 ms) in the error color, with no
	// further error events.
	n := r.hw.Count()
	for range 4 {
		r.nextFrame(t, 10*time.Millisecond)
	}
	r.frameDone(t, 10*time.Millisecond)
	if r.hw.Count() <= n+3 {
		t.Fatalf("%d frames shown in 4 frame periods", r.hw.Count()-n)
	}
	if f := r.hw.Last(); f[0] != (hardware.RGB{R: 255, G: 0, B: 128}) {
		t.Fatalf("error color %v", f)
	}
	select {
	case m := <-errs:
		t.Fatalf("a second render error: %s", m.Data)
	default:
	}
	// Entering the state again reports it again: once per entry, not
	// per frame.
	r.command(t, messages.InState, `{"name":"red"}`)
	r.waitFrame(t, hardware.RGB{R: 255})
	r.command(t, messages.InState, `{"name":"broken"}`)
	select {
	case <-errs:
	case <-time.After(10 * time.Second):
		t.Fatal("no render error when the failing state is entered again")
	}
}

// An animated state's frames are published, at most 30 a second, for
// whoever shows the LED elsewhere; its first frame is the announcement.
func TestAnimationFramesPublished(t *testing.T) {
	r := newRig(t)
	r.waitFrame(t, hardware.RGB{})
	announced := make(chan *nats.Msg, 16)
	frames := make(chan *nats.Msg, 1024)
	for subj, ch := range map[string]chan *nats.Msg{subject.LED("k"): announced, subject.LEDFrames("k"): frames} {
		sub, err := r.nc.ChanSubscribe(subj, ch)
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Unsubscribe()
	}
	if err := r.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	r.command(t, messages.InState, `{"name":"pulse"}`)
	select {
	case <-announced:
	case <-time.After(10 * time.Second):
		t.Fatal("no announcement of the state")
	}
	// One second of the device's clock, in 10 ms frames.
	for range 100 {
		r.nextFrame(t, 10*time.Millisecond)
	}
	r.frameDone(t, 10*time.Millisecond)
	// The device publishes on r.nc: a round trip of it brings every
	// frame it has published.
	if err := r.nc.Flush(); err != nil {
		t.Fatal(err)
	}
	n := len(frames)
	if n < 20 || n > 31 {
		t.Fatalf("%d frames published in a second of a 100 fps animation, want at most 30 (and some)", n)
	}
	var ev messages.LEDEvent
	if err := json.Unmarshal((<-frames).Data, &ev); err != nil || ev.State != "pulse" || len(ev.Pixels) != 1 {
		t.Fatalf("a frame: %+v %v", ev, err)
	}
}

// The page's virtual button works on a light with a real button: its
// edges have a gesture detector of their own, and its gestures are
// journaled with source web.
func TestWebButton(t *testing.T) {
	r := newRig(t)
	fired := r.firedInputs(t)
	r.waitFrame(t, hardware.RGB{})
	for _, down := range []bool{true, false} {
		res, err := r.sys.Root.RequestFuture(r.dev, &device.Press{Down: down, Web: true}, 5*time.Second).Result()
		if err != nil {
			t.Fatal(err)
		}
		if rep, ok := res.(*messages.ButtonReply); !ok || !rep.OK {
			t.Fatalf("a web edge: %+v", res)
		}
		r.clock.Advance(50 * time.Millisecond)
	}
	// The actor arms each timer from a Now it read a moment earlier, so
	// a timer armed while the clock moves may land past one Advance: keep
	// time moving until the click's window has closed.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for giveUp := time.After(10 * time.Second); ; {
		select {
		case <-tick.C:
			r.clock.Advance(50 * time.Millisecond)
			continue
		case m := <-fired:
			var env messages.Envelope
			if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(env.Data), `"transition":"button_click"`) || !strings.Contains(string(env.Data), `"source":"web"`) {
				t.Fatalf("web gesture input %s", env.Data)
			}
		case <-giveUp:
			t.Fatal("no click journaled")
		}
		break
	}
	r.waitFrame(t, hardware.RGB{R: 255})
}

// A state's color calls the light's functions: the device takes them
// with the model, and renders with the new ones after a redefinition.
// A state entered right after its function is defined shows it, with no
// render error for the moment the device had not read the function yet.
func TestColorsCallFunctions(t *testing.T) {
	r := newRig(t)
	errs := make(chan *nats.Msg, 16)
	sub, err := r.nc.ChanSubscribe(subject.Out("k", messages.OutError), errs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	r.waitFrame(t, hardware.RGB{})
	r.command(t, messages.InConfig, `{"op":"define_function","functions":[{"name":"level","params":["x"],"code":"return x / 2;"}]}`)
	r.command(t, messages.InConfig, `{"op":"create_state","states":[{"name":"half","r":"level(200)","g":"level(100)","b":0}]}`)
	r.command(t, messages.InState, `{"name":"half"}`)
	r.waitFrame(t, hardware.RGB{R: 100, G: 50})
	r.command(t, messages.InConfig, `{"op":"define_function","functions":[{"name":"level","params":["x"],"code":"return x / 4;"}]}`)
	r.command(t, messages.InState, `{"name":"red"}`)
	r.command(t, messages.InState, `{"name":"half"}`)
	r.waitFrame(t, hardware.RGB{R: 50, G: 25})
	select {
	case m := <-errs:
		t.Fatalf("a render error: %s", m.Data)
	case <-time.After(200 * time.Millisecond):
	}
}

// A model may overtake the state event that began a fade (their replies
// and events come on different subscriptions): the fade still runs from
// where it started, and the late event does not begin it again from what
// the LED shows. Here the test is the light: it answers get with the
// model it chooses and publishes the events in the order it chooses.
func TestFadeWhenTheModelOvertakesItsEvent(t *testing.T) {
	br := lumentest.StartBus(t, broker.Config{})
	nc := br.Conn(t)
	start := time.Date(2026, 11, 29, 7, 0, 0, 0, time.UTC)
	clk := clocktest.New(start)
	warm := messages.State{Name: "warm", R: messages.Num(255), G: messages.Num(147), B: messages.Num(41)}
	models := make(chan messages.GetReply, 1)
	models <- messages.GetReply{OK: true, Light: "f", State: "off", Brightness: 100, States: []messages.State{warm}, Seq: 2}
	var last messages.GetReply
	sub, err := nc.Subscribe(subject.Cmd("f", messages.VerbGet), func(m *nats.Msg) {
		select {
		case last = <-models:
		default:
		}
		b, _ := json.Marshal(last)
		_ = m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()
	hw := hwtest.NewDevice(1, clk)
	dp, err := device.Props(device.Config{Light: "f", Device: hw, Journal: br.Journal, Conn: nc, Clock: clk,
		Render: render.Options{Pixels: 1, Gamma: 1}})
	if err != nil {
		t.Fatal(err)
	}
	r := &rig{sys: quietSystem()} // no light: the test is the light
	r.dev = r.sys.Root.Spawn(dp)
	defer func() { _ = r.sys.Root.StopFuture(r.dev).Wait() }()
	show := func() *messages.LEDReply { t.Helper(); return r.show(t) }
	lumentest.WaitFor(t, 10*time.Second, "the model of the light off", func() bool { return show().State == "off" })

	// set_state warm with a 30-minute fade: the model that has it first,
	// then its event.
	ms := 30 * 60 * 1000
	models <- messages.GetReply{OK: true, Light: "f", State: "warm", Brightness: 100, States: []messages.State{warm}, Seq: 3,
		Fade: &messages.Fade{Start: start, Ms: ms, From: &messages.Pixel{}}}
	publish := func(typ string, data any) {
		t.Helper()
		b, _ := json.Marshal(data)
		env := messages.Envelope{V: 1, ID: fmt.Sprint(typ, 3), Type: typ, Light: "f", Time: start, Cause: 3, Data: b}
		if err := nc.Publish(subject.Out("f", typ), messages.AppendEnvelope(nil, &env)); err != nil {
			t.Fatal(err)
		}
	}
	// Each entry into a state announces its first frame.
	announced := lumentest.Collect(t, nc, subject.LED("f"), 16)
	entered := func(what string) {
		t.Helper()
		for {
			var ev messages.LEDEvent
			select {
			case m := <-announced:
				if json.Unmarshal(m.Data, &ev) == nil && ev.State == "warm" {
					if ev.Pixels[0] != (messages.Pixel{}) {
						t.Fatalf("%s: the LED shows %v at the fade's start, want dark", what, ev.Pixels[0])
					}
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("%s: warm never shown", what)
			}
		}
	}
	publish(messages.OutConfig, map[string]any{})
	entered("the model")
	publish(messages.OutState, messages.OutStateData{From: "off", To: "warm", FadeMs: &ms})
	entered("its event")
	if !clk.WaitArmed(start.Add(time.Second), 10*time.Second) {
		t.Fatal("no frame of the fade armed")
	}
	clk.Advance(15 * time.Minute)
	lumentest.WaitFor(t, 10*time.Second, "the LED halfway", func() bool {
		p := show().Pixels[0]
		return p.R > 50 && p.R < 200 && p.G > 20 && p.G < 120 // {99 54 9}: the blend is in Oklab
	})
	clk.Advance(15 * time.Minute)
	lumentest.WaitFor(t, 10*time.Second, "the fade's end", func() bool {
		return show().Pixels[0] == messages.Pixel{R: 255, G: 147, B: 41}
	})
}
