package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
)

func newGPIO(a *app) *cobra.Command {
	pulseFor := cli.Duration(200 * time.Millisecond)
	cmd := &cobra.Command{
		Use:   "gpio PIN high|low|pulse",
		Short: "Drive a simulated input pin (a PIR sensor, a contact)",
		Long: `Set the level of a simulated GPIO input pin of a light that runs without
GPIO, as a sensor wired to it would. The pin must be watched, that is named
by one of the light's gpio sources (lumen source add -f, or create_source
{"type":"gpio","pin":23,…}). The level goes through the same debounce as a
real pin's, and the source stores and fires it; gpio prints what the light
did. pulse is high, then low after --for.

Each level is a request on lumen.<light>.cmd.gpio {"pin":23,"level":1}; a
light on a Pi's real pins refuses it (409).`,
		Example: `  lumen gpio 23 high         # motion: the PIR's output rises
  lumen gpio 23 low
  lumen gpio 23 pulse --for 2s --light hall`,
		Args:      args(cobra.ExactArgs(2)),
		ValidArgs: []string{"high", "low", "pulse"},
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.GPIO(cmd.Context(), argv, time.Duration(pulseFor))
		},
	}
	cmd.Flags().Var(&pulseFor, "for", "how long pulse keeps the pin high")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
