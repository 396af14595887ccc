package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

// pressQuiet is how long press keeps printing after the last event.
const pressQuiet = 400 * time.Millisecond

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
			kind := "click"
			if len(argv) == 1 {
				kind = argv[0]
			}
			if kind == "release" {
				return a.Release(cmd.Context())
			}
			plan, want, err := gesture.Presses(kind, time.Duration(holdFor))
			if err != nil {
				return cli.UsageError{Err: err}
			}
			nc, ch, err := a.WatchLight(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			if kind == "double" {
				// Nothing reacts to a double click in this state: the
				// light decides each click on its release, so a double
				// press is two clicks.
				var led messages.LEDReply
				if b, err := a.RequestOn(cmd.Context(), nc, messages.VerbLED, struct{}{}); err == nil && json.Unmarshal(b, &led) == nil && !led.ClickWaits {
					fmt.Fprintln(a.Stderr, "lumen: no rule reacts to button_double_click in this state: the light takes two quick presses as two clicks")
					want = 2
				}
			}
			switch err := gesture.Play(cmd.Context(), plan, gesture.PressGap, a.Edge(nc)); {
			case err == gesture.ErrInterrupted:
				return errors.New("interrupted: the button is released")
			case errors.Is(err, gesture.ErrInterrupted):
				// The release failed too: say how to let go.
				return fmt.Errorf("%w; 'lumen press release' lets go of the button", err)
			case err != nil:
				return err
			}
			// A click is decided on its release, or when the double-click
			// window closes if a rule reacts to a double click.
			seen := 0
			a.PrintEvents(cmd.Context(), ch, 3*time.Second, pressQuiet, func(m *nats.Msg) bool {
				one, all := messages.ButtonGesture(m.Data)
				if one {
					seen++
				}
				if all {
					seen = want
				}
				return seen >= want
			})
			if seen < want && cmd.Context().Err() == nil {
				return fmt.Errorf("the light journaled %d of the %d gestures expected; is its button simulated (lumen up without GPIO)?", seen, want)
			}
			return nil
		},
	}
	cmd.Flags().Var(&holdFor, "for", "how long hold keeps the button down")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
