package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

// newPower is lumen on and lumen off.
func newPower(a *app, on bool) *cobra.Command {
	var fade cli.Fade
	cmd := &cobra.Command{
		Use:   "off",
		Short: "Switch a light off (the built-in state off); lumen on brings back what it showed",
		Example: `  lumen off
  lumen off --light fleet      # every light of the house`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.Power(cmd.Context(), on, fade.Ms()) },
	}
	if on {
		cmd.Use, cmd.Short = "on", "Switch a light on: back to the state it was in before it went off"
		cmd.Long = `Switch a light on: back to the state it was in before it went off, else its
on_state (a key of its configuration: lumen export, lumen apply), else its
first state. A light that is already on stays as it is (changed: false).`
		cmd.Example = `  lumen on
  lumen on --group upstairs --fade 3s`
	}
	fade.Add(cmd.Flags())
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newToggle(a *app) *cobra.Command {
	var fade cli.Fade
	cmd := &cobra.Command{
		Use:     "toggle",
		Short:   "Switch a light on if it is off, else off",
		Example: `  lumen toggle --light hall`,
		Args:    args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.Mutate(cmd.Context(), messages.VerbToggle, messages.PowerRequest{FadeMs: fade.Ms()})
		},
	}
	fade.Add(cmd.Flags())
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newBrightness(a *app) *cobra.Command {
	var fade cli.Fade
	cmd := &cobra.Command{
		Use:   "brightness [PERCENT|+STEP|-STEP]",
		Short: "Show or set a light's brightness, 1 to 100 percent, for every state",
		Long: `Show the light's brightness, or set it: a dimmer applied to every state's
colors, animated ones too, before gamma and the hardware cap
(hardware.brightness in lumen.yaml). A step is kept within 1 to 100. Setting a
brightness on a light that is off switches it on; 0 is not a brightness: use
lumen off.`,
		Example: `  lumen brightness             # prints 100%
  lumen brightness 40
  lumen brightness +10
  lumen brightness -10 --light fleet`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error { return a.Brightness(cmd.Context(), args, fade.Ms()) },
	}
	fade.Add(cmd.Flags())
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newColor(a *app) *cobra.Command {
	var fade cli.Fade
	cmd := &cobra.Command{
		Use:   "color NAME|#HEX|KELVIN|R G B",
		Short: "Show any color: a name, a hex code, a temperature or r g b",
		Long: `Show a color, without writing a state first: the light goes to the state
color, which takes the color (made the first time; listed, exported and
applied like any state). Names are the CSS color names and warm white, soft
white, cool white and daylight, in any case; a temperature is 1000K to 12000K.
A light that is off switches on. A light with a state of its own named color
keeps it: rename that state to use lumen color.`,
		Example: `  lumen color orange
  lumen color warm white
  lumen color '#ffa500'
  lumen color 255 165 0
  lumen color 2700K --light fleet --fade 10s`,
		Args: args(cobra.RangeArgs(1, 3)),
		RunE: func(cmd *cobra.Command, args []string) error { return a.Color(cmd.Context(), args, fade.Ms()) },
	}
	fade.Add(cmd.Flags())
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
