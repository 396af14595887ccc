package main

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
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Which light a command is for: --light, else $LUMEN_LIGHT, else the only
// light running. --light fleet and --group G send a mutation to several.

// fleet is --light's name for every running light.
const fleet = "fleet"

func lightFlag(cmd *cobra.Command, a *app) {
	cmd.Flags().StringVarP(&a.light, "light", "l", "", "the light to talk to (default $LUMEN_LIGHT, else the only light running)")
}

// fanoutFlags lets a mutation go to several lights: --light fleet, or
// --group G.
func fanoutFlags(cmd *cobra.Command, a *app) {
	cmd.Flags().StringVarP(&a.light, "light", "l", "", "the light to talk to (default $LUMEN_LIGHT, else the only light running); fleet: every light")
	cmd.Flags().StringVar(&a.group, "group", "", "send it to every light of this group (lumen up --group G=L1,L2)")
}

// open connects and settles which light the command is for.
func (a *app) open(ctx context.Context) (*nats.Conn, error) {
	return a.openFor(ctx, false)
}

// openFor is open for a command that may go to several lights (many):
// then --light fleet and --group set a.several.
func (a *app) openFor(ctx context.Context, many bool) (*nats.Conn, error) {
	if !many && (a.light == fleet || a.group != "") {
		return nil, usageError{errors.New("this command answers for one light: give --light NAME ('lumen ls' lists them)")}
	}
	nc, err := a.connect()
	if err != nil {
		return nil, err
	}
	if err := a.pick(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// pick settles a.light, or a.several for --light fleet and --group.
func (a *app) pick(ctx context.Context, nc *nats.Conn) error {
	if a.light == "" && a.group == "" {
		a.light = os.Getenv("LUMEN_LIGHT")
	}
	if strings.EqualFold(a.light, fleet) {
		a.light = fleet
	}
	if a.light != "" && a.light != fleet && a.group == "" {
		name, err := subject.LightName(a.light)
		if err != nil {
			return usageError{fmt.Errorf("--light: %w", err)}
		}
		a.light = name
		return nil
	}
	running, err := a.client(nc).Discover(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(running))
	for _, r := range running {
		if a.group == "" || slices.Contains(r.Groups, a.group) {
			names = append(names, r.Light)
		}
	}
	switch {
	case a.group != "" && a.light != "":
		return usageError{errors.New("give --light or --group, not both")}
	case len(running) == 0:
		return a.noLights(ctx, nc)
	case len(names) == 0:
		return fmt.Errorf("no running light is in group %q; the lights are %s ('lumen ls' shows their groups)", a.group, lightNames(running))
	case a.light == "" && a.group == "" && len(names) > 1:
		return usageError{fmt.Errorf("%d lights are running (%s): say which with --light NAME (or $LUMEN_LIGHT), or --light fleet for all", len(names), strings.Join(names, ", "))}
	case a.light == "" && a.group == "":
		a.light = names[0]
	default:
		a.several = names
	}
	return nil
}

// noLights says why no light runs at --server: a hub whose Pis are away,
// or no lumen up.
func (a *app) noLights(ctx context.Context, nc *nats.Conn) error {
	js, _ := jetstream.New(nc) // nil: the sentence for a daemon
	return house.NoLights(ctx, js, a.server)
}

// where is --server as a person may see it: without its password.
func (a *app) where() string { return redact.URLs(a.server) }

func lightNames(running []wire.Running) string {
	names := make([]string, len(running))
	for i, r := range running {
		names[i] = r.Light
	}
	return strings.Join(names, ", ")
}

// noSuchLight puts the lights that do run into the error for one that
// does not.
func (a *app) noSuchLight(nc *nats.Conn) error {
	msg := fmt.Sprintf("no light named %q is running at %s", a.light, a.where())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if running, err := a.client(nc).Discover(ctx); err == nil && len(running) > 0 {
		return fmt.Errorf("%s; the running lights are %s", msg, lightNames(running))
	}
	return fmt.Errorf("%s; start it with 'lumen up --light %s'", msg, a.light)
}

func (a *app) client(nc *nats.Conn) *wire.Client {
	return wire.New(nc, wire.WithTimeout(time.Duration(a.timeout)), wire.WithWho(messages.WhoCLI))
}

// mutateAll sends a mutation to a.several and prints one line per light:
// what the light did last, or why it refused.
func (a *app) mutateAll(ctx context.Context, nc *nats.Conn, verb string, body any) error {
	replies := a.client(nc).RequestAll(ctx, a.several, verb, body)
	w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range replies {
		if r.Err != nil {
			failed++
			fmt.Fprintf(w, "%s\terror: %v\n", r.Light, a.explain(r.Err, time.Duration(a.timeout)))
			continue
		}
		line := "done"
		if rep, err := wire.As[messages.Reply](r); err == nil && len(rep.Outputs) > 0 {
			var d describe.Events
			for _, o := range rep.Outputs {
				line = d.Output(o)
			}
		}
		fmt.Fprintf(w, "%s\t%s\n", r.Light, line)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d lights refused %s", failed, len(replies), verb)
	}
	return nil
}

func newLs(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "ls",
		Short: "List the running lights: state, color, last input, sources, agent; at a hub, also the lights that do not answer",
		Example: `  lumen ls
  lumen ls --server nats://pi.local:4222`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			nc, err := a.connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			seen, absent, err := house.Overview(ctx, a.client(nc))
			if err != nil {
				return err
			}
			if len(seen) == 0 && len(absent) == 0 {
				return a.noLights(ctx, nc)
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "LIGHT\tSTATE\tCOLOR\tLAST INPUT\tSOURCES\tAGENT\tGROUPS")
			for _, l := range seen {
				if l.Err != nil {
					fmt.Fprintf(w, "%s\t(%v)\n", l.Light, a.explain(l.Err, time.Duration(a.timeout)))
					continue
				}
				last := "-"
				if l.LastInput != "" {
					last = fmt.Sprintf("%s, %s ago", l.LastInput, time.Since(l.LastAt).Round(time.Second))
				}
				agent := "-"
				if l.Agent != nil {
					agent = map[bool]string{true: "on", false: "off"}[*l.Agent]
				}
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", l.Light, l.Model.State, dash(l.Color), last, len(l.Model.Sources), agent, dash(strings.Join(l.Groups, ",")))
			}
			for _, l := range absent {
				fmt.Fprintf(w, "%s\t%s\n", l.Light, unreachable(l))
			}
			return w.Flush()
		},
	}
}

// unreachable says why a light of the house does not answer.
func unreachable(l house.Absent) string {
	if l.Connected {
		return fmt.Sprintf("unreachable: not running on its Pi %s, which is connected", l.Pi)
	}
	return fmt.Sprintf("unreachable: its Pi %s is disconnected since %s", l.Pi, ago(l.Since))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
