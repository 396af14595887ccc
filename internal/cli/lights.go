package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// fleet is --light's name for every running light.
const fleet = "fleet"

// Open connects and settles which light the command is for.
func (t *Term) Open(ctx context.Context) (*nats.Conn, error) {
	return t.openFor(ctx, false)
}

// openFor is open for a command that may go to several lights (many):
// then --light fleet and --group set t.Several.
func (t *Term) openFor(ctx context.Context, many bool) (*nats.Conn, error) {
	if !many && (t.Light == fleet || t.Group != "") {
		return nil, Usage(errors.New("this command answers for one light: give --light NAME ('lumen ls' lists them)"))
	}
	nc, err := t.Connect()
	if err != nil {
		return nil, err
	}
	if err := t.pick(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// pick settles t.Light, or t.Several for --light fleet and --group.
func (t *Term) pick(ctx context.Context, nc *nats.Conn) error {
	if t.Light == "" && t.Group == "" {
		t.Light = os.Getenv("LUMEN_LIGHT")
	}
	if strings.EqualFold(t.Light, fleet) {
		t.Light = fleet
	}
	if t.Light != "" && t.Light != fleet && t.Group == "" {
		name, err := subject.LightName(t.Light)
		if err != nil {
			return Usage(fmt.Errorf("--light: %w", err))
		}
		t.Light = name
		return nil
	}
	running, err := t.client(nc).Discover(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(running))
	for _, r := range running {
		if t.Group == "" || slices.Contains(r.Groups, t.Group) {
			names = append(names, r.Light)
		}
	}
	switch {
	case t.Group != "" && t.Light != "":
		return Usage(errors.New("give --light or --group, not both"))
	case len(running) == 0:
		return t.noLights(ctx, nc)
	case len(names) == 0:
		return fmt.Errorf("no running light is in group %q; the lights are %s ('lumen ls' shows their groups)", t.Group, lightNames(running))
	case t.Light == "" && t.Group == "" && len(names) > 1:
		return Usage(fmt.Errorf("%d lights are running (%s): say which with --light NAME (or $LUMEN_LIGHT), or --light fleet for all", len(names), strings.Join(names, ", ")))
	case t.Light == "" && t.Group == "":
		t.Light = names[0]
	default:
		t.Several = names
	}
	return nil
}

// noLights says why no light runs at --server: a hub whose Pis are away,
// or no lumen up.
func (t *Term) noLights(ctx context.Context, nc *nats.Conn) error {
	js, _ := jetstream.New(nc) // nil: the sentence for a daemon
	return house.NoLights(ctx, js, t.Server)
}

// where is --server as a person may see it: without its password.
func (t *Term) where() string { return redact.URLs(t.Server) }

func lightNames(running []wire.Running) string {
	names := make([]string, len(running))
	for i, r := range running {
		names[i] = r.Light
	}
	return strings.Join(names, ", ")
}

// noSuchLight puts the lights that do run into the error for one that
// does not.
func (t *Term) noSuchLight(nc *nats.Conn) error {
	msg := fmt.Sprintf("no light named %q is running at %s", t.Light, t.where())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if running, err := t.client(nc).Discover(ctx); err == nil && len(running) > 0 {
		return fmt.Errorf("%s; the running lights are %s", msg, lightNames(running))
	}
	return fmt.Errorf("%s; start it with 'lumen up --light %s'", msg, t.Light)
}

func (t *Term) client(nc *nats.Conn) *wire.Client {
	return wire.New(nc, wire.WithTimeout(time.Duration(t.Timeout)), wire.WithWho(messages.WhoCLI))
}

// mutateAll sends a mutation to t.Several and prints one line per light:
// what the light did last, or why it refused.
func (t *Term) mutateAll(ctx context.Context, nc *nats.Conn, verb string, body any) error {
	replies := t.client(nc).RequestAll(ctx, t.Several, verb, body)
	w := tabwriter.NewWriter(t.Stdout, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range replies {
		if r.Err != nil {
			failed++
			fmt.Fprintln(w, describe.LightFailed(r.Light, t.Explain(r.Err, time.Duration(t.Timeout))))
			continue
		}
		var outputs []messages.Envelope
		if rep, err := wire.As[messages.Reply](r); err == nil {
			outputs = rep.Outputs
		}
		fmt.Fprintln(w, describe.LightDid(r.Light, outputs))
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d lights refused %s", failed, len(replies), verb)
	}
	return nil
}

// Ls prints the running lights (and at a hub, those that do not answer).
func (t *Term) Ls(ctx context.Context) error {
	nc, err := t.Connect()
	if err != nil {
		return err
	}
	defer nc.Close()
	seen, absent, err := house.Overview(ctx, t.client(nc))
	if err != nil {
		return err
	}
	if len(seen) == 0 && len(absent) == 0 {
		return t.noLights(ctx, nc)
	}
	rows := make([]describe.LightRow, 0, len(seen)+len(absent))
	for _, l := range seen {
		if l.Err != nil {
			rows = append(rows, describe.LightRow{Light: l.Light, Err: t.Explain(l.Err, time.Duration(t.Timeout)).Error()})
			continue
		}
		rows = append(rows, describe.LightRow{Light: l.Light, State: l.Model.State, Color: l.Color, LastInput: l.LastInput, LastAt: l.LastAt,
			Sources: len(l.Model.Sources), Agent: l.Agent, Groups: l.Groups})
	}
	now := time.Now()
	for _, l := range absent {
		rows = append(rows, describe.LightRow{Light: l.Light, Absent: describe.Unreachable(l.Pi, l.Connected, l.Since, now)})
	}
	return describe.Lights(t.Stdout, rows, now)
}
