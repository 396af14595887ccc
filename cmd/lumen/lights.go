package main

import (
	"github.com/spf13/cobra"
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
		RunE: func(cmd *cobra.Command, _ []string) error { return a.Ls(cmd.Context()) },
	}
}
