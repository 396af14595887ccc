package agent

import (
	"fmt"

	"github.com/asynkron/protoactor-go/actor"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Serve adds ask, approve, reject and sessions to the light's micro
// service instance. Handlers return at once: an ask is answered when its
// request ends, which may be minutes later (approvals), so clients use a
// long timeout or "async":true.
func Serve(svc micro.Service, root *actor.RootContext, pid *actor.PID, lightName string) error {
	grp := svc.AddGroup(subject.CmdPrefix(lightName))
	meta := micro.WithEndpointMetadata(map[string]string{subject.MetaLight: lightName})
	respond := func(req micro.Request) func(any) {
		return func(v any) { wire.Respond(req, v) }
	}
	endpoints := map[string]micro.HandlerFunc{
		messages.VerbAsk: func(req micro.Request) {
			var r messages.AskRequest
			if err := messages.Decode(req.Data(), &r); err != nil {
				wire.RespondError(req, 400, fmt.Sprintf(`ask: %v; send {"text":"next 3 clicks red","session":"kitchen-chat"}`, err))
				return
			}
			root.Send(pid, &Ask{Req: r, Reply: respond(req)})
		},
		messages.VerbTalk: func(req micro.Request) {
			session, who := req.Headers().Get(messages.HeaderSession), req.Headers().Get(messages.HeaderWho)
			if who == "" {
				who = "voice"
			}
			root.Send(pid, &Talk{Audio: req.Data(), Session: session, Who: who, Reply: respond(req)})
		},
		messages.VerbSessions: func(req micro.Request) {
			var r messages.SessionsRequest
			if err := messages.Decode(req.Data(), &r); err != nil {
				wire.RespondError(req, 400, fmt.Sprintf(`sessions: %v; send {} or {"session":"default"}`, err))
				return
			}
			root.Send(pid, &ListSessions{Req: r, Reply: respond(req)})
		},
	}
	for verb, approve := range map[string]bool{messages.VerbApprove: true, messages.VerbReject: false} {
		endpoints[verb] = func(req micro.Request) {
			var r messages.ApprovalRequest
			if err := messages.Decode(req.Data(), &r); err != nil {
				wire.RespondError(req, 400, fmt.Sprintf(`%s: %v; send {"id":"default-7"} (the id ask and lumen sessions show), or {} for the only pending one`, verb, err))
				return
			}
			root.Send(pid, &Decide{Req: r, Approve: approve, Reply: respond(req)})
		}
	}
	for verb, h := range endpoints {
		if verb != messages.VerbTalk { // audio: talk has its own limit
			h = wire.Bounded(verb, messages.MaxBody, h)
		}
		if err := grp.AddEndpoint(verb, h, meta); err != nil {
			return fmt.Errorf("agent %s: endpoint %s: %w", lightName, verb, err)
		}
	}
	return nil
}
