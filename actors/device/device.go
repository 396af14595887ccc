// Package device is the hardware actor: the only thing that touches a
// light's LED and button. It follows the light's state events and renders
// the current state on the LED, and turns raw button edges into gestures
// that it journals as the light's inputs.
package device

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Injector is a device whose button can be pressed from software (the
// simulator).
type Injector interface {
	Inject(down bool) error
}

// Config configures the hardware actor of one light.
type Config struct {
	Light   string
	Device  hardware.Device
	Journal *journal.Journal
	// Inputs, when set, are the GPIO input pins this light's gpio sources
	// may watch (nil: the light has none).
	Inputs hardware.Inputs
	// Conn follows the light's outputs and asks it for its model; the
	// actor talks to the light only over NATS.
	Conn *nats.Conn
	// Changes counts the light's configuration changes on the connection
	// the led verb is served on (wire.Changes): a led request that comes
	// after an answered change (a function redefined, a state recolored)
	// waits for a model read made after it, so it shows what was asked.
	Changes  actors.Changes
	client   *wire.Client
	Render   render.Options
	Gestures gesture.Config
	// Clock times the frames, the gestures and the pins' debounce.
	Clock clock.Clock
	Logf  func(format string, args ...any)
	// OnShow, when set, sees the first frame of every state shown (for
	// the terminal's status line). It must not block.
	OnShow func(state string, raw, out []hardware.RGB)
}

func (c *Config) validate() error {
	if err := subject.ValidLight(c.Light); err != nil {
		return fmt.Errorf("device: %w", err)
	}
	if c.Device == nil || c.Journal == nil || c.Conn == nil {
		return errors.New("device: a device, a journal and a connection are required")
	}
	c.client = wire.New(c.Conn, wire.WithWho(messages.WhoButton))
	if c.Clock == nil {
		c.Clock = clock.System(clock.Trust)
	}
	if c.Logf == nil {
		c.Logf = func(string, ...any) {}
	}
	if c.Render.Pixels == 0 {
		c.Render.Pixels = c.Device.Pixels()
	}
	if c.Render.Pixels != c.Device.Pixels() {
		return fmt.Errorf("device: the renderer draws %d pixels but the LED has %d", c.Render.Pixels, c.Device.Pixels())
	}
	if _, err := render.New(c.Render); err != nil {
		return fmt.Errorf("device: %w", err)
	}
	if _, err := gesture.New(c.Gestures); err != nil {
		return fmt.Errorf("device: %w", err)
	}
	return nil
}

// Press injects a raw edge into a simulated button; the answer is
// *messages.ButtonReply or *messages.ErrorReply.
type Press struct {
	Down bool
	Web  bool // an edge of the page's virtual button
}

// Show asks what the LED shows; the answer is *messages.LEDReply.
type Show struct{}

// internal messages: only these change the actor's fields.
type (
	output   struct{ msg *nats.Msg }
	model    struct{ reply *messages.GetReply }
	edge     struct{ e hardware.Edge }
	gestureT struct{ gen int }
	frameT   struct{ gen int }
	reload   struct{}
	pendingT struct{ id, session string }
)

// Actor is the hardware actor of one light.
type Actor struct {
	cfg    Config
	ctx    context.Context // ends when the actor stops or restarts
	cancel context.CancelFunc
	sub    *nats.Subscription

	r      *render.Renderer
	det    *gesture.Detector
	webDet *gesture.Detector // the page's virtual button: its own detector
	states map[string]messages.State
	vars   map[string]json.RawMessage
	// doubles are the froms of the enabled rules on a double click:
	// where none matches the state shown, a click is decided on release.
	doubles []string
	bright  int    // the light's dimmer, percent
	seen    uint64 // the input sequence the model reflects
	state   string // the state shown
	cause   uint64 // the input that made it current
	raw     []hardware.RGB
	out     []hardware.RGB
	failed  string // the state whose render error was journaled since it was entered

	// A pending agent approval takes over the LED (a pulsing amber) and
	// the button (hold approves, click rejects) until it is decided.
	approval        string
	approvalSession string
	swallowRelease  bool            // the release that ends an approving hold
	agentSeen       map[string]bool // sessions with events since start: newer than the sessions read at start

	frameGen, gestureGen int
	framePub             time.Time // when a frame was last published
	frameTimer           clock.Timer
	gestureTimer         clock.Timer
	model                actors.Reader         // of the light's model
	shows                actors.Waiting[*Show] // led requests waiting for a read after a change

	gpio pinState
}

// Props returns the actor's props, validating the config.
func Props(cfg Config, opts ...actor.PropsOption) (*actor.Props, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	// It follows every output of its light: one goroutine runs its
	// mailbox for good (see actors.LoopDispatcher).
	opts = append([]actor.PropsOption{actor.WithDispatcher(actors.LoopDispatcher())}, opts...)
	return actor.PropsFromProducer(func() actor.Actor { return &Actor{cfg: cfg, model: actors.Reader{Changes: cfg.Changes}} }, opts...), nil
}

// Receive handles one message.
func (a *Actor) Receive(ctx actor.Context) {
	switch msg := ctx.Message().(type) {
	case *actor.Started:
		if err := a.start(ctx); err != nil {
			panic(fmt.Sprintf("device %s: start: %v", a.cfg.Light, err))
		}
	case *actor.Stopping, *actor.Restarting:
		a.stop()
	case *output:
		a.follow(ctx, msg.msg)
	case *model:
		again := a.model.Done(true)
		a.apply(ctx, msg.reply)
		if again {
			// The read may predate the change (a new gpio source would
			// go unwatched until the next one).
			a.load(ctx)
			return
		}
		a.shows.Release(func(_ *Show, sender *actor.PID) { ctx.Send(sender, a.shown()) })
	case *reload:
		a.load(ctx)
	case *pendingT:
		a.pending(ctx, msg)
	case *edge:
		a.emit(a.det.Edge(msg.e), sourceButton)
		a.armGestures(ctx)
	case *gestureT:
		if msg.gen == a.gestureGen {
			now := a.cfg.Clock.Now()
			a.emit(a.det.Tick(now), sourceButton)
			a.emit(a.webDet.Tick(now), sourceWeb)
			a.armGestures(ctx)
		}
	case *frameT:
		if msg.gen == a.frameGen {
			a.frame(ctx, false)
		}
	case *Press:
		if msg.Web {
			ctx.Respond(a.webPress(ctx, msg.Down))
		} else {
			ctx.Respond(a.press(msg.Down))
		}
	case *levelT:
		a.level(ctx, msg.l)
	case *pinT:
		if msg.gen == a.gpio.gen {
			a.tickPins(ctx)
		}
	case *SetPin:
		ctx.Respond(a.setPin(msg))
	case *CheckSource:
		ctx.Respond(a.checkSource(msg))
	case *Show:
		if a.state == "" && a.model.Reading() {
			// Started, its first model on the way: show what it says.
			a.shows.Add(msg, ctx.Sender())
			return
		}
		if !a.shows.Hold(&a.model, msg, ctx.Sender(), func() { a.load(ctx) }) {
			ctx.Respond(a.shown())
		}
	}
}

// shown is the led verb's answer: what the LED shows now.
func (a *Actor) shown() *messages.LEDReply {
	state := a.state
	if a.approval != "" {
		state = ApprovalState
	}
	return &messages.LEDReply{OK: true, State: state, Pixels: pixels(a.out), Raw: pixels(a.raw), Brightness: a.bright, ClickWaits: !a.det.Instant()}
}

func (a *Actor) start(ctx actor.Context) error {
	a.stop()
	r, err := render.New(a.cfg.Render)
	if err != nil {
		return err
	}
	det, err := gesture.New(a.cfg.Gestures)
	if err != nil {
		r.Close()
		return err
	}
	webDet, _ := gesture.New(a.cfg.Gestures) // the same settings, checked just above
	a.r, a.det, a.webDet = r, det, webDet
	a.states, a.vars, a.seen, a.state, a.bright = map[string]messages.State{}, map[string]json.RawMessage{}, 0, "", messages.MaxBrightness
	a.approval, a.approvalSession, a.agentSeen = "", "", nil
	bg, cancel := context.WithCancel(context.Background())
	a.ctx, a.cancel = bg, cancel
	self, root := ctx.Self(), ctx.ActorSystem().Root
	// Follow the outputs before asking for the model, so nothing falls
	// between the two; outputs the model already reflects are skipped.
	a.sub, err = a.cfg.Conn.Subscribe(subject.AllOut(a.cfg.Light), func(m *nats.Msg) {
		root.Send(self, &output{msg: m})
	})
	if err != nil {
		return fmt.Errorf("follow %s: %w", a.cfg.Light, err)
	}
	if err := a.cfg.Conn.Flush(); err != nil {
		return fmt.Errorf("follow %s: %w", a.cfg.Light, err)
	}
	edges := a.cfg.Device.Edges()
	go func() {
		for {
			select {
			case <-bg.Done():
				return
			case e, ok := <-edges:
				if !ok {
					return
				}
				root.Send(self, &edge{e: e})
			}
		}
	}()
	a.startPins(ctx)
	a.load(ctx)
	a.recallApproval(ctx, bg)
	return nil
}

func (a *Actor) stop() {
	if a.cancel != nil {
		a.cancel()
		a.cancel = nil
	}
	if a.sub != nil {
		_ = a.sub.Unsubscribe()
		a.sub = nil
	}
	for _, t := range []clock.Timer{a.frameTimer, a.gestureTimer} {
		if t != nil {
			t.Stop()
		}
	}
	if a.r != nil {
		a.r.Close()
		a.r = nil
	}
	a.stopPins()
}

// load asks the light for its model, off the actor's goroutine.
func (a *Actor) load(ctx actor.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	bg, client, name, logf := a.ctx, a.cfg.client, a.cfg.Light, a.cfg.Logf
	a.model.Read(func() {
		var g messages.GetReply
		if client.CallRetry(bg, name, messages.VerbGet, nil, &g, wire.Retry{Logf: logf, Who: "device " + name}) == nil {
			root.Send(self, &model{reply: &g})
		}
	})
}

// apply takes the light's model: its states, variables and current state.
func (a *Actor) apply(ctx actor.Context, g *messages.GetReply) {
	a.states = make(map[string]messages.State, len(g.States))
	for _, s := range g.States {
		a.states[s.Name] = s
	}
	a.doubles = a.doubles[:0]
	for _, r := range g.Rules {
		if r.Enabled && r.On == gesture.Double {
			a.doubles = append(a.doubles, r.From)
		}
	}
	a.vars = maps.Clone(g.Vars)
	if a.vars == nil {
		a.vars = map[string]json.RawMessage{}
	}
	a.applyPins(g.Sources)
	if err := a.r.SetFunctions(g.Functions); err != nil {
		// The light checked them; states that call them show the error
		// color.
		a.logf("functions: %v", err)
	}
	if g.Seq >= a.seen {
		a.seen = g.Seq
		a.setBrightness(g.Brightness)
		// A fade the model says runs goes on where the clock says it is:
		// after a start, and when the model overtook the state event
		// that began it (its reply came before the event), else the
		// state would show at once and the late event fade from there.
		a.enterFading(ctx, g.State, g.Seq, resumed(g.Fade, a.cfg.Render.Pixels, a.cfg.Clock.Now()))
		return
	}
	// A state event newer than this model arrived meanwhile: keep its
	// state, with the new definitions.
	a.enter(ctx, a.state, a.cause)
}

// follow handles one output of the light.
func (a *Actor) follow(ctx actor.Context, m *nats.Msg) {
	var env messages.Envelope
	if err := messages.DecodeEnvelope(m.Data, &env); err != nil {
		return
	}
	if env.Type == messages.OutAgent {
		a.agentEvent(ctx, env.Data)
		return
	}
	if env.Cause == 0 {
		return // restart and render events
	}
	if env.Cause <= a.seen && env.Type != messages.OutState {
		return
	}
	switch env.Type {
	case messages.OutState:
		var d messages.OutStateData
		if json.Unmarshal(env.Data, &d) != nil || env.Cause < a.cause {
			return
		}
		a.seen = max(a.seen, env.Cause)
		if c := d.Color; c != nil {
			// set_color: the state takes its color here, no model read.
			a.states[messages.ColorState] = messages.State{Name: messages.ColorState, R: messages.Num(float64(c.R)), G: messages.Num(float64(c.G)),
				B: messages.Num(float64(c.B)), Description: messages.ColorStateDescription}
		}
		if _, ok := a.states[d.To]; !ok {
			a.load(ctx) // a state created since the model was read
		}
		// Every state event re-renders, self-transitions included, so a
		// random color changes on each click.
		a.enterFading(ctx, d.To, env.Cause, fadeOf(d.FadeMs, env.Time))
	case messages.OutVar:
		var d messages.OutVarData
		if json.Unmarshal(env.Data, &d) != nil {
			return
		}
		if d.Unset {
			delete(a.vars, d.Name)
		} else {
			a.vars[d.Name] = d.Value
		}
		a.r.SetVars(a.vars)
	case messages.OutConfig:
		a.load(ctx)
	case messages.OutBrightness:
		var d messages.OutBrightnessData
		if json.Unmarshal(env.Data, &d) != nil {
			return
		}
		a.seen = max(a.seen, env.Cause)
		if a.setBrightness(d.Percent) {
			if f := fadeOf(d.FadeMs, env.Time); f != nil {
				a.r.SetFade(*f)
			}
			a.frame(ctx, true)
		}
	}
}

// setBrightness sets the dimmer the frames are drawn with (a model from
// before the dimmer has none: full); it reports whether it changed.
func (a *Actor) setBrightness(percent int) bool {
	if percent == 0 {
		percent = messages.MaxBrightness
	}
	if percent == a.bright {
		return false
	}
	a.bright = percent
	a.r.SetBrightness(percent)
	return true
}

// frameEvery spaces the frames published of an animation: 30 a second.
const frameEvery = time.Second / 30

// enter starts rendering state name, caused by input cause, with the
// renderer's default fade (hardware.fade_ms).
func (a *Actor) enter(ctx actor.Context, name string, cause uint64) {
	a.enterFading(ctx, name, cause, nil)
}

// fadeOf is the fade a state or brightness output asks for, from the
// input's time (at); nil: the renderer's default.
func fadeOf(ms *int, at time.Time) *render.Fade {
	if ms == nil {
		return nil
	}
	return &render.Fade{Start: at, Duration: time.Duration(*ms) * time.Millisecond}
}

// resumed is the light's fade as its model tells it, when it still runs
// at now (a restart in the middle of a 30-minute sunrise): from the color
// it started from, else from what the LED shows (dark after a start).
func resumed(f *messages.Fade, pixels int, now time.Time) *render.Fade {
	if f == nil {
		return nil
	}
	d := time.Duration(f.Ms) * time.Millisecond
	if !now.Before(f.Start.Add(d)) {
		return nil
	}
	var from []hardware.RGB
	if f.From != nil {
		from = slices.Repeat([]hardware.RGB{hardware.RGB(*f.From)}, pixels)
	}
	return &render.Fade{From: from, Start: f.Start, Duration: d}
}

// enterFading is enter with a fade of its own (nil: the default).
func (a *Actor) enterFading(ctx actor.Context, name string, cause uint64, fade *render.Fade) {
	if name == "" {
		return
	}
	// One render error per entry into a state, not one per frame; a
	// re-render of the same entry (the model read again) is no new entry.
	same := name == a.state && cause == a.cause
	if !same {
		a.failed = ""
	}
	a.state, a.cause = name, cause
	instant := !slices.ContainsFunc(a.doubles, func(from string) bool { return machine.FromMatches(from, name) })
	a.det.SetInstant(instant)
	a.webDet.SetInstant(instant)
	st, ok := a.states[name]
	if !ok {
		// Not known yet (the model is being read): dark until it is.
		st = messages.State{Name: name}
	}
	if a.approval != "" {
		st = approvalState
	}
	if f, ok := a.r.Fading(); ok && (fade == nil && same || fade != nil && f.Start.Equal(fade.Start) && f.Duration == fade.Duration) {
		// The same entry rendered again (new definitions), or the fade
		// that runs told again (by the model, then by its event): it
		// goes on as it was, from the colors it started from.
		fade = &f
	}
	if err := a.r.SetState(st, a.cfg.Clock.Now(), cause, a.vars); err != nil {
		a.renderError(name, err)
	}
	if fade != nil && a.approval == "" {
		a.r.SetFade(*fade)
	}
	a.frame(ctx, true)
}

// frame renders and shows the frame due now, and arms the next one.
func (a *Actor) frame(ctx actor.Context, first bool) {
	now := a.cfg.Clock.Now()
	f := a.r.Frame(now)
	if f.Err != nil {
		a.renderError(a.state, f.Err)
	}
	if err := a.cfg.Device.Show(f.Out); err != nil {
		a.cfg.Logf("device %s: show: %v", a.cfg.Light, err)
	}
	a.raw, a.out = f.Raw, f.Out
	if first || now.Sub(a.framePub) >= frameEvery {
		// The state's first frame is announced; an animation's frames
		// follow, at most 30 a second, for whoever shows the LED
		// elsewhere (the page).
		shown, subj := a.state, subject.LED(a.cfg.Light)
		if a.approval != "" {
			shown = ApprovalState
		}
		if !first {
			subj = subject.LEDFrames(a.cfg.Light)
		}
		ev := messages.LEDEvent{State: shown, Cause: a.cause, Time: now, Pixels: pixels(f.Out), Raw: pixels(f.Raw), Brightness: a.bright}
		if b, err := json.Marshal(ev); err == nil {
			_ = a.cfg.Conn.Publish(subj, b)
		}
		a.framePub = now
	}
	if first && a.cfg.OnShow != nil {
		a.cfg.OnShow(a.state, f.Raw, f.Out)
	}
	a.frameGen++
	if a.frameTimer != nil {
		a.frameTimer.Stop()
	}
	if next, ok := a.r.Next(now); ok {
		msg, self, root := &frameT{gen: a.frameGen}, ctx.Self(), ctx.ActorSystem().Root
		a.frameTimer = a.cfg.Clock.AfterFunc(next.Sub(now), func() { root.Send(self, msg) })
	}
}

// renderError journals a state's render error once per state.
func (a *Actor) renderError(state string, err error) {
	if a.failed == state {
		return
	}
	if a.model.Reading() {
		// The model being read may define what failed (a function just
		// defined): the state is rendered again when it comes, and
		// reports its error then if it still has one.
		return
	}
	a.failed = state
	a.cfg.Logf("device %s: state %s: %v", a.cfg.Light, state, err)
	actors.JournalFailure(a.cfg.Journal, a.cfg.Light, messages.OutErrorData{Code: 400, Kind: messages.ErrorRender,
		Error: fmt.Sprintf("state %q cannot be shown: %v; fix its colors with create_state", state, err)}, a.cfg.Clock.Now(), a.logf)
}

// emit journals gestures as the light's inputs, in order; while an
// approval is pending they decide it instead.
func (a *Actor) emit(gs []gesture.Gesture, source string) {
	for _, g := range gs {
		if a.swallowRelease && g.Kind == gesture.Release {
			a.swallowRelease = false
			continue
		}
		if a.approval != "" {
			a.decide(g.Kind)
			continue
		}
		data, _ := json.Marshal(messages.InFiredData{Transition: g.Kind, Source: source})
		env := messages.Input(a.cfg.Light, messages.InFired, nuid.Next(), g.At, data)
		env.By = messages.WhoButton
		if source == sourceWeb {
			env.By = messages.WhoHTTP
		}
		actors.Journal(a.cfg.Journal, subject.In(a.cfg.Light, messages.InFired), &env, a.logf)
	}
}

// logf logs as the light's hardware.
func (a *Actor) logf(format string, args ...any) {
	a.cfg.Logf("device %s: "+format, append([]any{a.cfg.Light}, args...)...)
}

// armGestures sets one timer for the detector's next deadline.
func (a *Actor) armGestures(ctx actor.Context) {
	a.gestureGen++
	if a.gestureTimer != nil {
		a.gestureTimer.Stop()
	}
	at, ok := a.det.Deadline()
	if web, wok := a.webDet.Deadline(); wok && (!ok || web.Before(at)) {
		at, ok = web, true
	}
	if !ok {
		return
	}
	msg, self, root := &gestureT{gen: a.gestureGen}, ctx.Self(), ctx.ActorSystem().Root
	a.gestureTimer = a.cfg.Clock.AfterFunc(at.Sub(a.cfg.Clock.Now()), func() { root.Send(self, msg) })
}

// Where a gesture comes from, as its fired input says.
const (
	sourceButton = "button"
	sourceWeb    = "web"
)

// webPress takes an edge of the page's virtual button: its own detector
// decides the gestures, with the real button's settings, on any
// hardware; they are journaled with source web.
func (a *Actor) webPress(ctx actor.Context, down bool) any {
	if r := a.noRoom(down); r != nil {
		return r
	}
	a.emit(a.webDet.Edge(hardware.Edge{Down: down, At: a.cfg.Clock.Now()}), sourceWeb)
	a.armGestures(ctx)
	e := messages.EdgeUp
	if down {
		e = messages.EdgeDown
	}
	return a.buttonReply(e)
}

// buttonReply says the edge was taken, with the gestures' timings, so
// that a virtual button can hold long enough to make a hold.
func (a *Actor) buttonReply(edge string) *messages.ButtonReply {
	c := a.det.Config()
	return &messages.ButtonReply{OK: true, Edge: edge, HoldMs: c.Hold.Milliseconds(), DoubleMs: c.DoubleWindow.Milliseconds()}
}

func (a *Actor) press(down bool) any {
	in, ok := a.cfg.Device.(Injector)
	if !ok {
		return &messages.ErrorReply{Code: 409, Error: "this light has a real button; press it (only the simulated button takes edges over NATS)"}
	}
	if r := a.noRoom(down); r != nil {
		return r
	}
	switch err := in.Inject(down); {
	case errors.Is(err, hardware.ErrButtonDown):
		return &messages.ErrorReply{Code: 409, Error: messages.ButtonIsDown}
	case errors.Is(err, hardware.ErrButtonUp):
		return &messages.ErrorReply{Code: 409, Error: messages.ButtonIsUp}
	case err != nil:
		return &messages.ErrorReply{Code: 409, Error: err.Error()}
	}
	e := messages.EdgeUp
	if down {
		e = messages.EdgeDown
	}
	return a.buttonReply(e)
}

// noRoom refuses a press of the simulated or the page's button with 507
// when the disk has no room for the gesture it would make (the real
// button's are dropped with a log line: see actors.Journal). A release
// always goes through, so that no press is left held.
func (a *Actor) noRoom(down bool) *messages.ErrorReply {
	if !down {
		return nil
	}
	return actors.NoRoom(a.cfg.Journal.Room())
}

func pixels(f []hardware.RGB) []messages.Pixel {
	p := make([]messages.Pixel, len(f))
	for i, c := range f {
		p[i] = messages.Pixel(c)
	}
	return p
}
