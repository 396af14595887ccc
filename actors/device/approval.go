package device

// A pending agent approval takes over the light's LED and button: the
// LED pulses amber, a hold approves and a click rejects. The device
// follows the agent's events for it, and sends the decision as the
// approve or reject command, like a person would.

import (
	"context"
	"encoding/json"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// ApprovalState is what the LED reports while an agent approval is
// pending.
const ApprovalState = "approval"

// approvalState pulses amber about once a second: unlike any state a
// person is likely to make, so "the light wants an answer" is plain.
var approvalState = messages.State{Name: ApprovalState,
	R: messages.Channel{Expr: "255*(0.55+0.45*Math.sin(frame*0.16))"},
	G: messages.Channel{Expr: "120*(0.55+0.45*Math.sin(frame*0.16))"},
	B: messages.Channel{Num: 0}, Speed: func() *int { ms := 40; return &ms }()}

// agentEvent follows the agent's approvals.
func (a *Actor) agentEvent(ctx actor.Context, data json.RawMessage) {
	var d messages.OutAgentData
	if json.Unmarshal(data, &d) != nil {
		return
	}
	if a.agentSeen == nil {
		a.agentSeen = map[string]bool{}
	}
	a.agentSeen[d.Session] = true
	switch {
	case d.Kind == messages.AgentKindApproval && d.Approval != "":
		a.approval, a.approvalSession = d.Approval, d.Session
	case a.approval != "" && d.Session == a.approvalSession &&
		(d.Kind == messages.AgentKindDecision || d.Kind == messages.AgentKindEnd || d.Kind == messages.AgentKindAsk):
		a.approval, a.approvalSession = "", ""
	default:
		return
	}
	a.enter(ctx, a.state, a.cause)
}

// decide sends a gesture's decision on the pending approval to the agent:
// hold approves, click rejects, other gestures do nothing.
func (a *Actor) decide(kind string) {
	verb := ""
	switch kind {
	case gesture.Hold:
		verb, a.swallowRelease = messages.VerbApprove, true
	case gesture.Click:
		verb = messages.VerbReject
	default:
		return
	}
	req := messages.ApprovalRequest{ID: a.approval, Who: "button"}
	client, logf, light := a.cfg.client, a.cfg.Logf, a.cfg.Light
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := client.Call(ctx, light, verb, req, nil); err != nil {
			logf("device %s: %s by button: %v", light, verb, err)
		}
	}()
}

// recallApproval shows an approval pending since before a restart again:
// the agent has no event to send for it. It asks the light's sessions
// off the actor's goroutine, until bg ends.
func (a *Actor) recallApproval(ctx actor.Context, bg context.Context) {
	self, root := ctx.Self(), ctx.ActorSystem().Root
	client, name, logf := a.cfg.client, a.cfg.Light, a.cfg.Logf
	go func() {
		var sr messages.SessionsReply
		if client.CallRetry(bg, name, messages.VerbSessions, nil, &sr, wire.Retry{Attempts: 30, Logf: logf, Who: "device " + name}) != nil {
			return
		}
		for _, s := range sr.Sessions {
			if s.Pending != nil && s.Pending.Approval != "" {
				root.Send(self, &pendingT{id: s.Pending.Approval, session: s.Session})
			}
		}
	}()
}

// pending takes a recalled approval, unless the agent has said more of
// its session since the start.
func (a *Actor) pending(ctx actor.Context, p *pendingT) {
	if a.approval == "" && !a.agentSeen[p.session] {
		a.approval, a.approvalSession = p.id, p.session
		a.enter(ctx, a.state, a.cause)
	}
}
