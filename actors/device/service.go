package device

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Serve adds the device's verbs to the light's micro service instance:
// lumen.<light>.cmd.button injects a raw edge into a simulated button,
// lumen.<light>.cmd.gpio sets a simulated input pin's level and
// lumen.<light>.cmd.led tells what the LED shows.
func Serve(svc micro.Service, root *actor.RootContext, pid *actor.PID, lightName string, timeout time.Duration) error {
	grp := svc.AddGroup(subject.CmdPrefix(lightName))
	meta := micro.WithEndpointMetadata(map[string]string{subject.MetaLight: lightName})
	if err := grp.AddEndpoint(messages.VerbButton, wire.Bounded(messages.VerbButton, messages.MaxBody, func(req micro.Request) {
		var r messages.ButtonRequest
		if err := messages.Decode(req.Data(), &r); err != nil {
			wire.RespondError(req, 400, fmt.Sprintf(`button: %v; send {"edge":"down"} or {"edge":"up"}`, err))
			return
		}
		if r.Edge != messages.EdgeDown && r.Edge != messages.EdgeUp {
			wire.RespondError(req, 400, fmt.Sprintf(`button: edge %q is neither "down" nor "up"; send {"edge":"down"}, then {"edge":"up"}`, r.Edge))
			return
		}
		if r.From != "" && r.From != messages.FromWeb {
			wire.RespondError(req, 400, fmt.Sprintf(`button: from %q is not "web"; leave it out for a raw edge of the simulated button`, r.From))
			return
		}
		actors.Answer(req, root, pid, &Press{Down: r.Edge == messages.EdgeDown, Web: r.From == messages.FromWeb}, timeout, messages.VerbButton, "the device", nil)
	}), meta); err != nil {
		return fmt.Errorf("device %s: endpoint button: %w", lightName, err)
	}
	if err := grp.AddEndpoint(messages.VerbGPIO, wire.Bounded(messages.VerbGPIO, messages.MaxBody, func(req micro.Request) {
		var r messages.GPIORequest
		if err := messages.Decode(req.Data(), &r); err != nil {
			wire.RespondError(req, 400, fmt.Sprintf(`gpio: %v; send {"pin":23,"level":1}`, err))
			return
		}
		switch {
		case r.Pin == nil || *r.Pin < 0 || *r.Pin > datasource.MaxGPIOPin:
			wire.RespondError(req, 400, fmt.Sprintf(`gpio: pin must be a BCM number from 0 to %d; send {"pin":23,"level":1}`, datasource.MaxGPIOPin))
			return
		case r.Level == nil || (*r.Level != 0 && *r.Level != 1):
			wire.RespondError(req, 400, `gpio: level must be 1 (high) or 0 (low); send {"pin":23,"level":1}`)
			return
		}
		actors.Answer(req, root, pid, &SetPin{Pin: *r.Pin, High: *r.Level == 1}, timeout, messages.VerbGPIO, "the device", nil)
	}), meta); err != nil {
		return fmt.Errorf("device %s: endpoint gpio: %w", lightName, err)
	}
	if err := grp.AddEndpoint(messages.VerbLED, wire.Bounded(messages.VerbLED, messages.MaxBody, func(req micro.Request) {
		var r struct{}
		if err := messages.Decode(req.Data(), &r); err != nil {
			wire.RespondError(req, 400, fmt.Sprintf("led: %v; led takes {}", err))
			return
		}
		actors.Answer(req, root, pid, &Show{}, timeout, messages.VerbLED, "the device", nil)
	}), meta); err != nil {
		return fmt.Errorf("device %s: endpoint led: %w", lightName, err)
	}
	return nil
}

// SourceCheck returns the check the light's service runs on gpio sources
// before it journals them (service.WithSourceCheck): the device answers, as
// the owner of the pins. pid is read when a check runs, so the check may
// be made before the device is spawned.
func SourceCheck(root *actor.RootContext, pid func() *actor.PID, timeout time.Duration) func(datasource.Def, []datasource.Def) error {
	return func(d datasource.Def, others []datasource.Def) error {
		p := pid()
		if p == nil {
			return nil // no device yet: the device checks again when it reads the model
		}
		res, err := root.RequestFuture(p, &CheckSource{Def: d, Others: others}, timeout).Result()
		if err != nil {
			return fmt.Errorf("device: the hardware actor did not answer (%v); try again", err)
		}
		if r, ok := res.(*CheckResult); ok {
			return r.Err
		}
		return fmt.Errorf("device: unexpected answer %T", res)
	}
}
