package device

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// Serve adds the device's verbs to the light's micro service instance:
// lumen.<light>.cmd.button injects a raw edge into a simulated button and
// lumen.<light>.cmd.led tells what the LED shows.
func Serve(svc micro.Service, root *actor.RootContext, pid *actor.PID, lightName string, timeout time.Duration) error {
	grp := svc.AddGroup(subject.CmdPrefix(lightName))
	meta := micro.WithEndpointMetadata(map[string]string{"light": lightName})
	if err := grp.AddEndpoint(messages.VerbButton, micro.HandlerFunc(func(req micro.Request) {
		var r messages.ButtonRequest
		if err := messages.Decode(req.Data(), &r); err != nil {
			light.RespondError(req, 400, fmt.Sprintf(`button: %v; send {"edge":"down"} or {"edge":"up"}`, err))
			return
		}
		if r.Edge != messages.EdgeDown && r.Edge != messages.EdgeUp {
			light.RespondError(req, 400, fmt.Sprintf(`button: edge %q is neither "down" nor "up"; send {"edge":"down"}, then {"edge":"up"}`, r.Edge))
			return
		}
		light.Answer(req, root, pid, &Press{Down: r.Edge == messages.EdgeDown}, timeout, messages.VerbButton, "the device")
	}), meta); err != nil {
		return fmt.Errorf("device %s: endpoint button: %w", lightName, err)
	}
	if err := grp.AddEndpoint(messages.VerbLED, micro.HandlerFunc(func(req micro.Request) {
		var r struct{}
		if err := messages.Decode(req.Data(), &r); err != nil {
			light.RespondError(req, 400, fmt.Sprintf("led: %v; led takes {}", err))
			return
		}
		light.Answer(req, root, pid, &Show{}, timeout, messages.VerbLED, "the device")
	}), meta); err != nil {
		return fmt.Errorf("device %s: endpoint led: %w", lightName, err)
	}
	return nil
}
