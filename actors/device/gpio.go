package device

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/input"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// GPIO input pins. The hardware actor owns every pin: it watches the pins
// the light's gpio sources name (it reads them from the light's model,
// like the states it renders), debounces their levels and publishes each
// change on core NATS (subject.GPIO), where the source manager stores and
// fires it through the light's journaled inputs. Replay therefore never
// reads a pin, and raw levels are never journaled.

// PinSetter is input pins whose levels can be set from software (the
// simulator).
type PinSetter interface {
	Set(pin int, high bool) (changed bool, err error)
}

// SetPin sets a simulated input pin's level; the answer is
// *messages.GPIOReply or *messages.ErrorReply.
type SetPin struct {
	Pin  int
	High bool
}

// CheckSource asks whether a gpio source may have its pin beside Others,
// the sources the light will have with it (the model the device last read
// may lag behind); the answer is *CheckResult.
type CheckSource struct {
	Def    datasource.Def
	Others []datasource.Def
}

// CheckResult answers CheckSource: Err is nil, or a *datasource.Error with
// CodeConflict that says what to do.
type CheckResult struct{ Err error }

type (
	levelT struct{ l hardware.Level }
	pinT   struct{ gen int }
)

// watch is one watched pin.
type watch struct {
	pull     hardware.Pull
	debounce time.Duration
	det      *input.Debouncer
}

// pinState is the actor's GPIO inputs.
type pinState struct {
	pins  map[int]*watch
	errs  map[string]string // source → the problem last journaled for it
	gen   int
	timer clock.Timer
}

// startPins begins reading the levels of the input pins until the actor
// stops or restarts (the Inputs, and its channel, outlive a restart).
func (a *Actor) startPins(ctx actor.Context) {
	if a.cfg.Inputs == nil {
		return
	}
	self, root, bg := ctx.Self(), ctx.ActorSystem().Root, a.ctx
	levels := a.cfg.Inputs.Levels()
	go func() {
		for {
			select {
			case <-bg.Done():
				return
			case l, ok := <-levels:
				if !ok {
					return
				}
				root.Send(self, &levelT{l: l})
			}
		}
	}()
}

// stopPins gives back every watched pin, so a restarted actor starts from
// the model again.
func (a *Actor) stopPins() {
	if a.gpio.timer != nil {
		a.gpio.timer.Stop()
	}
	if a.cfg.Inputs != nil {
		for pin := range a.gpio.pins {
			_ = a.cfg.Inputs.Unwatch(pin)
		}
	}
	a.gpio = pinState{}
}

// applyPins follows the gpio sources of the light's model: it watches the
// pins they name and gives back the others. A source that cannot have its
// pin (a model journaled under another wiring, or a pin the hardware
// refuses) journals one error event of kind source; it does not stop the
// others.
func (a *Actor) applyPins(sources []json.RawMessage) {
	var defs []datasource.Def
	for _, raw := range sources {
		var d datasource.Def
		if d.UnmarshalJSON(raw) == nil && d.Kind() == datasource.TypeGPIO && d.Pin != nil {
			defs = append(defs, d)
		}
	}
	if a.gpio.pins == nil {
		a.gpio.pins = map[int]*watch{}
	}
	errs := map[string]string{}
	want := map[int]*watch{}
	var accepted []datasource.Def
	for _, d := range defs {
		if a.cfg.Inputs == nil {
			errs[d.Name] = a.noPins()
			continue
		}
		if err := datasource.GPIOConflict(d, a.cfg.Inputs.Reserved(), accepted); err != nil {
			errs[d.Name] = sentence(err)
			continue
		}
		accepted = append(accepted, d)
		if _, ok := want[*d.Pin]; !ok {
			want[*d.Pin] = &watch{pull: hardware.Pull(d.Pull), debounce: d.Debounce()}
		}
	}
	for pin, w := range a.gpio.pins {
		if nw, ok := want[pin]; !ok || nw.pull != w.pull || nw.debounce != w.debounce {
			if err := a.cfg.Inputs.Unwatch(pin); err != nil {
				a.cfg.Logf("device %s: unwatch BCM %d: %v", a.cfg.Light, pin, err)
			}
			delete(a.gpio.pins, pin)
		}
	}
	for _, pin := range slices.Sorted(maps.Keys(want)) {
		if _, ok := a.gpio.pins[pin]; ok {
			continue
		}
		w := want[pin]
		high, err := a.cfg.Inputs.Watch(pin, w.pull)
		if err == nil {
			w.det, err = input.New(w.debounce, high)
		}
		if err != nil {
			for _, d := range accepted {
				if *d.Pin == pin {
					errs[d.Name] = fmt.Sprintf("BCM %d cannot be read (%v); check the wiring and the pin", pin, err)
				}
			}
			continue
		}
		a.gpio.pins[pin] = w
	}
	for name, msg := range errs {
		if a.gpio.errs[name] != msg {
			a.sourceError(name, msg)
		}
	}
	a.gpio.errs = errs
}

// level takes one raw level of a watched pin.
func (a *Actor) level(ctx actor.Context, l hardware.Level) {
	w, ok := a.gpio.pins[l.Pin]
	if !ok {
		return // unwatched meanwhile
	}
	a.publishPin(l.Pin, w.det.Sample(l.High, l.At))
	a.armPins(ctx)
}

// tickPins settles the pins whose debounce window has closed.
func (a *Actor) tickPins(ctx actor.Context) {
	now := a.cfg.Clock.Now()
	for _, pin := range slices.Sorted(maps.Keys(a.gpio.pins)) {
		a.publishPin(pin, a.gpio.pins[pin].det.Tick(now))
	}
	a.armPins(ctx)
}

// publishPin announces a pin's debounced changes to its sources.
func (a *Actor) publishPin(pin int, changes []input.Change) {
	for _, c := range changes {
		ev := messages.GPIOEvent{Pin: pin, Edge: c.Kind(), At: c.At.UTC()}
		if c.High {
			ev.Level = 1
		}
		b, _ := json.Marshal(ev)
		if err := a.cfg.Conn.Publish(subject.GPIO(a.cfg.Light, pin), b); err != nil {
			a.cfg.Logf("device %s: publish BCM %d: %v", a.cfg.Light, pin, err)
		}
	}
}

// armPins sets one timer for the earliest debounce deadline. A newly
// watched pin starts settled, so only levels and ticks arm it.
func (a *Actor) armPins(ctx actor.Context) {
	a.gpio.gen++
	if a.gpio.timer != nil {
		a.gpio.timer.Stop()
	}
	var next time.Time
	for _, w := range a.gpio.pins {
		if at, ok := w.det.Deadline(); ok && (next.IsZero() || at.Before(next)) {
			next = at
		}
	}
	if next.IsZero() {
		return
	}
	msg, self, root := &pinT{gen: a.gpio.gen}, ctx.Self(), ctx.ActorSystem().Root
	a.gpio.timer = a.cfg.Clock.AfterFunc(next.Sub(a.cfg.Clock.Now()), func() { root.Send(self, msg) })
}

// setPin drives a simulated input pin.
func (a *Actor) setPin(m *SetPin) any {
	if a.cfg.Inputs == nil {
		return &messages.ErrorReply{Code: 409, Error: a.noPins()}
	}
	in, ok := a.cfg.Inputs.(PinSetter)
	if !ok {
		return &messages.ErrorReply{Code: 409, Error: fmt.Sprintf("light %s reads real GPIO pins; drive BCM %d with the sensor (only simulated pins take levels over NATS)", a.cfg.Light, m.Pin)}
	}
	if _, ok := a.gpio.pins[m.Pin]; !ok {
		if what, taken := a.cfg.Inputs.Reserved()[m.Pin]; taken {
			return &messages.ErrorReply{Code: 409, Error: fmt.Sprintf("BCM %d is %s, not an input pin", m.Pin, what)}
		}
		return &messages.ErrorReply{Code: 409, Error: fmt.Sprintf("BCM %d is not watched: no gpio source of light %s uses it; create one first, e.g. create_source {\"name\":\"pir\",\"type\":\"gpio\",\"pin\":%d,\"fires\":\"motion\"}", m.Pin, a.cfg.Light, m.Pin)}
	}
	changed, err := in.Set(m.Pin, m.High)
	if err != nil {
		return &messages.ErrorReply{Code: 409, Error: err.Error()}
	}
	r := &messages.GPIOReply{OK: true, Pin: m.Pin, Changed: changed}
	if m.High {
		r.Level = 1
	}
	return r
}

// checkSource tells whether a gpio source may have its pin.
func (a *Actor) checkSource(m *CheckSource) *CheckResult {
	if m.Def.Kind() != datasource.TypeGPIO {
		return &CheckResult{}
	}
	if a.cfg.Inputs == nil {
		return &CheckResult{Err: &datasource.Error{Code: datasource.CodeConflict, Msg: fmt.Sprintf("source %q: %s", m.Def.Name, a.noPins())}}
	}
	return &CheckResult{Err: datasource.GPIOConflict(m.Def, a.cfg.Inputs.Reserved(), m.Others)}
}

func (a *Actor) noPins() string {
	return fmt.Sprintf("light %s has no GPIO input pins: on a Pi only the light of hardware.light reads the pins; define the gpio source on that light", a.cfg.Light)
}

// sourceError journals a gpio source's problem like the source manager
// journals a failed run: an error event of kind source, cause 0.
func (a *Actor) sourceError(source, msg string) {
	a.cfg.Logf("device %s: source %s: %s", a.cfg.Light, source, msg)
	actors.JournalFailure(a.cfg.Journal, a.cfg.Light, messages.OutErrorData{Code: datasource.CodeConflict, Kind: messages.ErrorSource,
		Error: fmt.Sprintf("source %s is not watched: %s", source, msg)}, a.cfg.Clock.Now(), a.logf)
}

// sentence is an error's text without its package prefix.
func sentence(err error) string {
	if se := (*datasource.Error)(nil); errors.As(err, &se) {
		return se.Msg
	}
	return err.Error()
}
