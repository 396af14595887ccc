package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/nats/house"
)

// Which light a command is for: --light, else $LUMEN_LIGHT, else the only
// light running. --light fleet and --group G send a mutation to several.

func lightFlag(cmd *cobra.Command, a *app) {
	cmd.Flags().StringVarP(&a.Light, "light", "l", "", "the light to talk to (default $LUMEN_LIGHT, else the only light running)")
}

// fanoutFlags lets a mutation go to several lights: --light fleet, or
// --group G.
func fanoutFlags(cmd *cobra.Command, a *app) {
	cmd.Flags().StringVarP(&a.Light, "light", "l", "", "the light to talk to (default $LUMEN_LIGHT, else the only light running); fleet: every light")
	cmd.Flags().StringVar(&a.Group, "group", "", "send it to every light of this group (lumen up --group G=L1,L2)")
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
			nc, err := a.Connect()
			if err != nil {
				return err
			}
			defer nc.Close()
			seen, absent, err := house.Overview(ctx, a.Client(nc))
			if err != nil {
				return err
			}
			if len(seen) == 0 && len(absent) == 0 {
				return a.NoLights(ctx, nc)
			}
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "LIGHT\tSTATE\tCOLOR\tLAST INPUT\tSOURCES\tAGENT\tGROUPS")
			for _, l := range seen {
				if l.Err != nil {
					fmt.Fprintf(w, "%s\t(%v)\n", l.Light, a.Explain(l.Err, time.Duration(a.Timeout)))
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
				fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\n", l.Light, l.Model.State, cli.Dash(l.Color), last, len(l.Model.Sources), agent, cli.Dash(strings.Join(l.Groups, ",")))
			}
			for _, l := range absent {
				fmt.Fprintf(w, "%s\t%s\n", l.Light, cli.Unreachable(l))
			}
			return w.Flush()
		},
	}
}
