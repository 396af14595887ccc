package house

import (
	"context"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Seen is one running light as a list of the lights shows it (lumen ls,
// a page of the house).
type Seen struct {
	wire.Running
	// Model is its get reply; Err says why there is none.
	Model messages.GetReply
	Err   error
	// Color is what its LED shows, #rrggbb, before gamma and the
	// brightness cap (the duty of its pixels is for the hardware); ""
	// unknown.
	Color string
	// Agent is whether its agent is on; nil unknown.
	Agent *bool
	// LastInput is the type of the last input it was given and when
	// (at a hub, from the house stream); "" unknown.
	LastInput string
	LastAt    time.Time
}

// Overview is every light that answers at c's server, in Discover's
// order, and at a hub the lights of the house that do not (Unreachable).
func Overview(ctx context.Context, c *wire.Client) ([]Seen, []Absent, error) {
	running, err := c.Discover(ctx)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(running))
	for i, r := range running {
		names[i] = r.Light
	}
	var absent []Absent
	var j *journal.Journal
	if js, err := jetstream.New(c.Conn()); err == nil {
		absent, _ = Unreachable(ctx, js, names)
		j, _ = OpenJournal(ctx, js) // nil: no journal to read
	}
	gets := c.RequestAll(ctx, names, messages.VerbGet, nil)
	leds := c.RequestAll(ctx, names, messages.VerbLED, nil)
	agents := c.RequestAll(ctx, names, messages.VerbSessions, nil)
	out := make([]Seen, len(running))
	for i, r := range running {
		s := Seen{Running: r}
		s.Model, s.Err = wire.As[messages.GetReply](gets[i])
		if led, err := wire.As[messages.LEDReply](leds[i]); err == nil && len(led.Raw) > 0 {
			s.Color = led.Raw[0].Hex()
		}
		if a, err := wire.As[messages.SessionsReply](agents[i]); err == nil {
			s.Agent = &a.Agent
		}
		if j != nil {
			if m, err := j.LastMsg(ctx, subject.AllIn(r.Light)); err == nil {
				_, _, s.LastInput, _ = subject.Parse(m.Subject)
				s.LastAt = m.Time
			}
		}
		out[i] = s
	}
	return out, absent, nil
}
