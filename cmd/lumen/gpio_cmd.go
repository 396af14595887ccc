package main

import (
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

// gpioQuiet is how long `lumen gpio` keeps printing after the last event,
// and gpioWait how long it waits for the first: a source stores, then
// fires, each a round trip through the journal.
const (
	gpioQuiet = 400 * time.Millisecond
	gpioWait  = 2 * time.Second
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
			pin, err := strconv.Atoi(argv[0])
			if err != nil || pin < 0 || pin > datasource.MaxGPIOPin {
				return cli.UsageError{Err: fmt.Errorf("gpio %q: PIN is a BCM number from 0 to %d, e.g. 23", argv[0], datasource.MaxGPIOPin)}
			}
			levels := map[string][]int{"high": {1}, "low": {0}, "pulse": {1, 0}}[argv[1]]
			if levels == nil {
				return cli.UsageError{Err: fmt.Errorf("gpio %s %q: say high, low or pulse", argv[0], argv[1])}
			}
			nc, ch, err := a.WatchLight(cmd.Context())
			if err != nil {
				return err
			}
			defer nc.Close()
			changed := false
			for i, l := range levels {
				if i > 0 {
					time.Sleep(time.Duration(pulseFor))
				}
				r, err := a.Client(nc).Light(a.Light).GPIO(cmd.Context(), pin, l)
				if err := a.InWords(nc, messages.VerbGPIO, err, time.Duration(a.Timeout)); err != nil {
					return err
				}
				changed = changed || r.Changed
			}
			if !changed {
				fmt.Fprintf(a.Stderr, "BCM %d was already %s: no edge\n", pin, argv[1])
				return nil
			}
			// An edge no source wants (a falling edge of a rising source)
			// journals nothing, which is not an error.
			a.PrintEvents(cmd.Context(), ch, gpioWait, gpioQuiet, func(*nats.Msg) bool { return true })
			return nil
		},
	}
	cmd.Flags().Var(&pulseFor, "for", "how long pulse keeps the pin high")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
