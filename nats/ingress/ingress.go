// Package ingress journals what outside clients publish to the lights'
// inputs. A client publishes lumen.<light>.evt.in.<type> in the clients'
// account; that account maps it to the daemon's ingress
// (subject.IngressMapping), and the ingress journals it on the light's
// input subject with an id and a time of the daemon's own, by "nats". So
// a client's Nats-Msg-Id can never take an output's dedupe id, its
// envelope's time can never arm a timer in 2099, and no client sees the
// journal's acknowledgement inbox to answer it first.
package ingress

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nuid"

	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// Journal is where inputs go.
type Journal interface {
	AppendAsync(subj string, data []byte, opts ...journal.AppendOption) (*journal.Pending, error)
}

// Config configures an Ingress.
type Config struct {
	// Conn is a connection of the daemon's account, best its own: the
	// ingress is on the path of every input a client publishes.
	Conn *nats.Conn
	// Journal journals the inputs, best through Conn.
	Journal Journal
	// Lights are the lights running here: inputs of others are
	// dropped, as the journal would not take them.
	Lights []string
	// Clock is the daemon's clock.
	Clock clock.Clock
	// Logf receives the failures, at most one a minute; nil: none.
	Logf func(format string, args ...any)
}

// Ingress journals the inputs clients publish, until Stop.
type Ingress struct {
	cfg    Config
	lights map[string]bool
	sub    *nats.Subscription

	mu     sync.Mutex
	logged time.Time
}

// Start subscribes to the ingress subject.
func Start(cfg Config) (*Ingress, error) {
	if cfg.Conn == nil || cfg.Journal == nil || cfg.Clock == nil {
		return nil, fmt.Errorf("ingress: Conn, Journal and Clock are required")
	}
	in := &Ingress{cfg: cfg, lights: map[string]bool{}}
	for _, l := range cfg.Lights {
		in.lights[l] = true
	}
	sub, err := cfg.Conn.Subscribe(subject.AllIngress(), in.handle)
	if err != nil {
		return nil, fmt.Errorf("ingress: subscribe: %w", err)
	}
	// Many clients may publish at once: the journal's own backpressure
	// (AppendAsync's stall wait) is the limit, not the subscription's.
	if err := sub.SetPendingLimits(-1, 64<<20); err != nil {
		return nil, fmt.Errorf("ingress: %w", err)
	}
	in.sub = sub
	return in, nil
}

// Stop unsubscribes.
func (in *Ingress) Stop() {
	if in.sub != nil {
		_ = in.sub.Unsubscribe()
	}
}

// handle journals one input. Messages of one subscription are handled in
// order, and AppendAsync keeps that order in the journal.
func (in *Ingress) handle(m *nats.Msg) {
	light, typ, ok := subject.ParseIngress(m.Subject)
	if !ok || !in.lights[light] {
		if m.Reply != "" && ok {
			in.refuse(m, 404, fmt.Sprintf("no light named %q runs here", light))
		}
		return
	}
	id := nuid.Next()
	subj := subject.In(light, typ)
	p, err := in.cfg.Journal.AppendAsync(subj, Rewrite(m.Data, id, in.cfg.Clock.Now()), journal.MsgID(id))
	if err != nil {
		in.fail(m, subj, err)
		return
	}
	if m.Reply == "" {
		return
	}
	// The ingress answers, not JetStream: nats-server lets no client
	// publish with the reply subject of a service import (_R_.…).
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
		defer cancel()
		seq, err := p.Wait(ctx)
		if err != nil {
			in.fail(m, subj, err)
			return
		}
		// What JetStream answers a publish, so that a client's
		// jetstream.Publish works as before.
		b, _ := json.Marshal(struct {
			Stream string `json:"stream"`
			Seq    uint64 `json:"seq"`
		}{subject.Stream, seq})
		_ = m.Respond(b)
	}()
}

// replyTimeout bounds the wait for the journal's acknowledgement of an
// input whose client asked for a reply.
const replyTimeout = 30 * time.Second

// fail answers a client that asked for a reply, and logs.
func (in *Ingress) fail(m *nats.Msg, subj string, err error) {
	in.logf("ingress: journal a client's input on %s: %v", subj, err)
	if m.Reply != "" {
		in.refuse(m, 503, fmt.Sprintf("could not journal the input: %v", err))
	}
}

// refuse answers as JetStream answers a refused publish.
func (in *Ingress) refuse(m *nats.Msg, code int, why string) {
	b, _ := json.Marshal(map[string]any{"error": map[string]any{"code": code, "description": why}})
	_ = m.Respond(b)
}

func (in *Ingress) logf(format string, args ...any) {
	if in.cfg.Logf == nil {
		return
	}
	in.mu.Lock()
	now := time.Now()
	quiet := now.Sub(in.logged) < time.Minute
	if !quiet {
		in.logged = now
	}
	in.mu.Unlock()
	if !quiet {
		in.cfg.Logf(format, args...)
	}
}

// Rewrite returns a client's input as the daemon journals it: an
// envelope gets the daemon's id and time and by "nats" (the client's id,
// time and by decide nothing), and keeps the rest, so that the light
// still refuses an envelope that names another light or type. Anything
// else is journaled as it came: the light reads it as its data, at the
// time the journal stored it.
func Rewrite(data []byte, id string, now time.Time) []byte {
	var env messages.Envelope
	if messages.DecodeEnvelope(data, &env) != nil || env.V <= 0 || env.Data == nil {
		return data
	}
	env.ID, env.Time, env.By = id, now.UTC(), messages.WhoNATS
	return messages.AppendEnvelope(nil, &env)
}
