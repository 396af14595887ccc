package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
)

func newReplay(a *app) *cobra.Command {
	var (
		data         string
		toSeq        uint64
		verify       bool
		fromSnapshot bool
		quiet        bool
	)
	cmd := &cobra.Command{
		Use:   "replay --light NAME",
		Short: "Rebuild a light from its journal, with no side effects, and check it",
		Long: `Replay a light's journal from the start (or its snapshot) through the state
machine: no LED, no network, no model is touched. Each applied input is printed
with the transition it caused. With --verify every recomputed output must equal
the recorded one byte for byte; the first difference is named by its stream
sequence and the command fails.

With --data DIR it reads a data directory directly (the daemon must be
stopped); otherwise it reads the journal of the running daemon at --server:
its stream LUMEN, or at a hub (lumen hub) the house stream LUMEN_HOUSE, where
each event keeps the sequence of the Pi's journal it was copied from, and only
the events of the Pi that runs the light count.`,
		Example: `  lumen replay --light demo --verify
  lumen replay --light kitchen --to-seq 1200
  lumen replay --light kitchen --data ~/.local/share/lumen --verify`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			js, closeFn, err := a.openJournal(ctx, data)
			if err != nil {
				return err
			}
			defer closeFn()
			j, err := house.OpenJournal(ctx, js)
			if err != nil {
				return err
			}
			if a.light = cmp.Or(a.light, os.Getenv("LUMEN_LIGHT")); a.light == "" {
				// The journal's only light, else say which there are.
				lights, err := j.Lights(ctx)
				if err != nil {
					return err
				}
				switch len(lights) {
				case 0:
					return errors.New("the journal has no light yet")
				case 1:
				default:
					return usageError{fmt.Errorf("the journal has lights %s: say which with --light NAME", strings.Join(lights, ", "))}
				}
				a.light = lights[0]
			}
			if err := subject.ValidLight(a.light); err != nil {
				return usageError{fmt.Errorf("--light: %w", err)}
			}
			r := light.Replay{Light: a.light, ToSeq: toSeq, Verify: verify, FromSnapshot: fromSnapshot,
				OnSnapshot: func(in uint64) { fmt.Fprintf(a.stdout, "from snapshot at input %d\n", in) }}
			if !quiet {
				r.OnApplied = func(ap *light.Applied) { fmt.Fprintln(a.stdout, ap.Line()) }
			}
			sum, err := r.Run(ctx, j)
			fmt.Fprintf(a.stdout, "%s: %s\n", a.light, sum)
			if err != nil {
				return err
			}
			if verify {
				fmt.Fprintln(a.stdout, "verify: every recorded output matches")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&data, "data", "", "read this data directory directly instead of a running daemon")
	f.Uint64Var(&toSeq, "to-seq", 0, "stop after the input with this stream sequence")
	f.BoolVar(&verify, "verify", false, "fail if any recomputed output differs from the recorded one")
	f.BoolVar(&fromSnapshot, "from-snapshot", false, "start from the light's latest snapshot instead of the first event")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only the summary")
	lightFlag(cmd, a)
	return cmd
}

// openJournal connects to the running daemon, or opens a stopped data dir
// with a private embedded server.
func (a *app) openJournal(ctx context.Context, data string) (jetstream.JetStream, func(), error) {
	if data == "" {
		nc, err := a.connect()
		if err != nil {
			return nil, nil, err
		}
		js, err := jetstream.New(nc)
		if err != nil {
			nc.Close()
			return nil, nil, err
		}
		return js, nc.Close, nil
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	return b.JetStream(), b.Shutdown, nil
}
