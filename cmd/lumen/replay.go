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

	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

func newReplay(a *app) *cobra.Command {
	var (
		data, file   string
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

With -f FILE it reads a journal slice that 'lumen journal export' wrote, on
any machine, with no daemon. With --data DIR it reads a data directory directly (the daemon must be
stopped); otherwise it reads the journal of the running daemon at --server:
its stream LUMEN, or at a hub (lumen hub) the house stream LUMEN_HOUSE, where
each event keeps the sequence of the Pi's journal it was copied from, and only
the events of the Pi that runs the light count.`,
		Example: `  lumen replay --light demo --verify
  lumen replay --light kitchen --to-seq 1200
  lumen replay --light kitchen --data ~/.local/share/lumen --verify
  lumen replay -f kitchen.slice --verify`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			j, closeFn, err := a.events(ctx, data, file)
			if err != nil {
				return err
			}
			defer closeFn()
			r := past.Replay{Light: a.light, ToSeq: toSeq, Verify: verify, FromSnapshot: fromSnapshot,
				OnSnapshot: func(in uint64) { fmt.Fprintf(a.stdout, "from snapshot at input %d\n", in) },
				OnGap: func(g messages.OutGapData, in uint64) {
					fmt.Fprintf(a.stdout, "lost %s (%s): on from the snapshot at input %d\n", repair.Range{From: g.From, To: g.To}, g.Reason, in)
				}}
			if !quiet {
				r.OnApplied = func(ap *past.Applied) { fmt.Fprintln(a.stdout, ap.Line()) }
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
	f.StringVarP(&file, "file", "f", "", "read this journal slice ('lumen journal export' writes them) instead of a journal")
	f.Uint64Var(&toSeq, "to-seq", 0, "stop after the input with this stream sequence")
	f.BoolVar(&verify, "verify", false, "fail if any recomputed output differs from the recorded one")
	f.BoolVar(&fromSnapshot, "from-snapshot", false, "start from the light's latest snapshot instead of the first event")
	f.BoolVarP(&quiet, "quiet", "q", false, "print only the summary")
	lightFlag(cmd, a)
	return cmd
}

// events opens what a replay reads (a journal slice file, a stopped
// data dir, or the running daemon's journal) and settles a.light: the
// slice's light, --light, or the journal's only light.
func (a *app) events(ctx context.Context, data, file string) (past.Events, func(), error) {
	if file != "" {
		if data != "" {
			return nil, nil, usageError{errors.New("give -f FILE or --data DIR, not both")}
		}
		f, err := os.Open(file)
		if err != nil {
			return nil, nil, err
		}
		defer f.Close()
		s, err := journal.ReadSlice(f)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", file, err)
		}
		if a.light != "" && a.light != s.Light {
			return nil, nil, usageError{fmt.Errorf("%s holds light %s, not %s", file, s.Light, a.light)}
		}
		a.light = s.Light
		return s, func() {}, nil
	}
	js, closeFn, err := a.openJournal(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		closeFn()
		return nil, nil, err
	}
	if a.light = cmp.Or(a.light, os.Getenv("LUMEN_LIGHT")); a.light == "" {
		// The journal's only light, else say which there are.
		lights, err := j.Lights(ctx)
		if err == nil {
			switch len(lights) {
			case 0:
				err = errors.New("the journal has no light yet")
			case 1:
				a.light = lights[0]
			default:
				err = usageError{fmt.Errorf("the journal has lights %s: say which with --light NAME", strings.Join(lights, ", "))}
			}
		}
		if err != nil {
			closeFn()
			return nil, nil, err
		}
	}
	if a.light, err = subject.LightName(a.light); err != nil {
		closeFn()
		return nil, nil, usageError{fmt.Errorf("--light: %w", err)}
	}
	return j, closeFn, nil
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
	// A damaged journal would stall the read: say so, and what to do.
	if rep, err := repair.Check(data); err != nil {
		return nil, nil, err
	} else if rep.Damaged() {
		return nil, nil, errors.New(rep.String())
	}
	b, err := broker.Inspect(ctx, data)
	if err != nil {
		return nil, nil, err
	}
	return b.JetStream(), b.Shutdown, nil
}
