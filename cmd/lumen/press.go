package main

import (
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
)

func newPress(a *app) *cobra.Command {
	var holdFor cli.Duration = cli.Duration(time.Second)
	cmd := &cobra.Command{
		Use:   "press [click|double|hold|release]",
		Short: "Press a light's simulated button",
		Long: `Press the simulated button of a light that runs without GPIO. The edges go
through debounce and gesture detection exactly like a real button's, so the
light sees button_click, button_double_click, or button_hold then
button_release, and its rules react. press prints what the light did.
While the agent waits for an approval the press decides it instead: hold
approves, click rejects.

A press interrupted (Ctrl-C) releases the button it pressed; release lets
go of a button left down (by a program that sent "down" and no "up").

The raw edges are requests on lumen.<light>.cmd.button {"edge":"down"|"up"};
a light with a real button refuses them.`,
		Example: `  lumen press               # a click
  lumen press double --light kitchen
  lumen press hold --for 2s
  lumen press release       # let go of a button left down`,
		Args:      args(cobra.MaximumNArgs(1)),
		ValidArgs: []string{"click", "double", "hold", "release"},
		RunE: func(cmd *cobra.Command, argv []string) error {
			return a.Press(cmd.Context(), argv, time.Duration(holdFor))
		},
	}
	cmd.Flags().Var(&holdFor, "for", "how long hold keeps the button down")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
