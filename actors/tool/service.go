package tool

import (
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/actors"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Serve adds run_tool to the light's micro service instance.
func Serve(svc micro.Service, root *actor.RootContext, pid *actor.PID, lightName string, timeout time.Duration) error {
	grp := svc.AddGroup(subject.CmdPrefix(lightName))
	if err := grp.AddEndpoint(messages.VerbRunTool, wire.Bounded(messages.VerbRunTool, messages.MaxBody, func(req micro.Request) {
		var r messages.RunToolRequest
		if err := messages.Decode(req.Data(), &r); err != nil {
			wire.RespondError(req, 400, fmt.Sprintf(`run_tool: %v; send {"name":"weather","args":{…}}`, err))
			return
		}
		if r.Name == "" {
			wire.RespondError(req, 400, `run_tool: "name" is required, e.g. {"name":"weather","args":{"city":"Paris"}}`)
			return
		}
		actors.Answer(req, root, pid, &Run{Name: r.Name, Args: r.Args}, timeout, messages.VerbRunTool, "the tool", nil)
	}), micro.WithEndpointMetadata(map[string]string{subject.MetaLight: lightName})); err != nil {
		return fmt.Errorf("tool %s: endpoint run_tool: %w", lightName, err)
	}
	return nil
}
