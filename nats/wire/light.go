package wire

import (
	"context"

	"github.com/lumen-home/lumen/messages"
)

// The typed side of Light: one method per verb a client reads or
// changes a light with, each decoding its reply type (messages). A
// refusal is an *Error, as for Request.

// Commander sends a verb's body to one light and returns the body of a
// success: a Light, or the light a test stands in for.
type Commander interface {
	Command(ctx context.Context, verb string, body []byte) ([]byte, error)
}

// Typed sends req to c's verb and decodes the reply into a T: the typed
// side of any Commander (the agent's light, for one).
func Typed[T any](ctx context.Context, c Commander, verb string, req any) (T, error) {
	var out T
	body, err := encode(req)
	if err != nil {
		return out, err
	}
	b, err := c.Command(ctx, verb, body)
	if err != nil {
		return out, err
	}
	return out, decode(verb, b, &out)
}

// Get is the light's whole model now.
func (l Light) Get(ctx context.Context) (messages.GetReply, error) {
	return l.GetAt(ctx, messages.GetRequest{})
}

// GetAt is the light's model as it was (q.Seq or q.At), rebuilt from the
// journal; now when q is empty.
func (l Light) GetAt(ctx context.Context, q messages.GetRequest) (messages.GetReply, error) {
	return Typed[messages.GetReply](ctx, l, messages.VerbGet, q)
}

// Fire fires a transition, as the button or a timer would.
func (l Light) Fire(ctx context.Context, transition string) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbFire, messages.FireRequest{Transition: transition})
}

// SetState moves the light to a state at once.
func (l Light) SetState(ctx context.Context, name string) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbSetState, messages.SetStateRequest{Name: name})
}

// Power switches the light on (back to the state it was in before it
// went off) or off; changed false when it already was.
func (l Light) Power(ctx context.Context, on bool) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbPower, messages.PowerRequest{On: &on})
}

// Toggle switches the light on when it is off, else off.
func (l Light) Toggle(ctx context.Context) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbToggle, nil)
}

// SetBrightness sets the dimmer (percent, 1–100) or steps it (delta,
// -99–99); give exactly one. A light that is off turns on.
func (l Light) SetBrightness(ctx context.Context, q messages.BrightnessRequest) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbSetBrightness, q)
}

// SetColor shows a color (r g b, hex, name or kelvin: give exactly one)
// in the state color. A light that is off turns on.
func (l Light) SetColor(ctx context.Context, q messages.ColorRequest) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, messages.VerbSetColor, q)
}

// Mutate sends a verb that changes the light (apply, create_state,
// append_rules, …) with its body, and returns what it did.
func (l Light) Mutate(ctx context.Context, verb string, body any) (messages.Reply, error) {
	return Typed[messages.Reply](ctx, l, verb, body)
}

// DryRun is apply with dry_run: what the configuration would change.
func (l Light) DryRun(ctx context.Context, config []byte) (messages.DryRunReply, error) {
	return Typed[messages.DryRunReply](ctx, l, messages.VerbApply, messages.WithTrue(config, "dry_run"))
}

// History is every change of the light's configuration.
func (l Light) History(ctx context.Context) (messages.HistoryReply, error) {
	return Typed[messages.HistoryReply](ctx, l, messages.VerbHistory, struct{}{})
}

// Why explains the light's state (seq 0) or what it did at event seq.
func (l Light) Why(ctx context.Context, seq uint64) (messages.WhyReply, error) {
	return Typed[messages.WhyReply](ctx, l, messages.VerbWhy, messages.WhyRequest{Seq: seq})
}

// WhatIf is what a configuration would have done with the light's past.
func (l Light) WhatIf(ctx context.Context, q messages.WhatIfRequest) (messages.WhatIfReply, error) {
	return Typed[messages.WhatIfReply](ctx, l, messages.VerbWhatIf, q)
}

// LED is what the light's LED shows.
func (l Light) LED(ctx context.Context) (messages.LEDReply, error) {
	return Typed[messages.LEDReply](ctx, l, messages.VerbLED, struct{}{})
}

// Button injects a raw edge of the simulated button.
func (l Light) Button(ctx context.Context, edge string) (messages.ButtonReply, error) {
	return Typed[messages.ButtonReply](ctx, l, messages.VerbButton, messages.ButtonRequest{Edge: edge})
}

// GPIO sets a simulated input pin's level.
func (l Light) GPIO(ctx context.Context, pin, level int) (messages.GPIOReply, error) {
	return Typed[messages.GPIOReply](ctx, l, messages.VerbGPIO, messages.GPIORequest{Pin: &pin, Level: &level})
}

// Sources lists the light's data sources.
func (l Light) Sources(ctx context.Context) (messages.SourcesReply, error) {
	return Typed[messages.SourcesReply](ctx, l, messages.VerbListSources, struct{}{})
}

// Tools lists the light's tools: defined, built in, plugins.
func (l Light) Tools(ctx context.Context) (messages.ToolsReply, error) {
	return Typed[messages.ToolsReply](ctx, l, messages.VerbListTools, struct{}{})
}

// RunTool runs a tool once.
func (l Light) RunTool(ctx context.Context, q messages.RunToolRequest) (messages.RunToolReply, error) {
	return Typed[messages.RunToolReply](ctx, l, messages.VerbRunTool, q)
}

// Intents lists the light's learned intents.
func (l Light) Intents(ctx context.Context) (messages.IntentsReply, error) {
	return Typed[messages.IntentsReply](ctx, l, messages.VerbIntents, struct{}{})
}

// Ask is one turn of the light's agent.
func (l Light) Ask(ctx context.Context, q messages.AskRequest) (messages.AskReply, error) {
	return Typed[messages.AskReply](ctx, l, messages.VerbAsk, q)
}

// Decide approves (or rejects) an agent's step waiting for a person.
func (l Light) Decide(ctx context.Context, q messages.ApprovalRequest, approve bool) (messages.ApprovalReply, error) {
	verb := messages.VerbReject
	if approve {
		verb = messages.VerbApprove
	}
	return Typed[messages.ApprovalReply](ctx, l, verb, q)
}

// Sessions lists the agent's sessions and what waits for approval.
func (l Light) Sessions(ctx context.Context, q messages.SessionsRequest) (messages.SessionsReply, error) {
	return Typed[messages.SessionsReply](ctx, l, messages.VerbSessions, q)
}

// As is one reply of RequestAll decoded into a T, or its error.
func As[T any](r Reply) (T, error) {
	var out T
	if r.Err != nil {
		return out, r.Err
	}
	return out, decode("light "+r.Light, r.Body, &out)
}
