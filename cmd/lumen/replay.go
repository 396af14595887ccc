package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/light/past"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/repair"
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
			j, closeFn, err := a.Events(ctx, data, file)
			if err != nil {
				return err
			}
			defer closeFn()
			r := past.Replay{Light: a.Light, ToSeq: toSeq, Verify: verify, FromSnapshot: fromSnapshot,
				OnSnapshot: func(in uint64) { fmt.Fprintf(a.Stdout, "from snapshot at input %d\n", in) },
				OnGap: func(g messages.OutGapData, in uint64) {
					fmt.Fprintf(a.Stdout, "lost %s (%s): on from the snapshot at input %d\n", repair.Range{From: g.From, To: g.To}, g.Reason, in)
				}}
			if !quiet {
				r.OnApplied = func(ap *past.Applied) { fmt.Fprintln(a.Stdout, ap.Line()) }
			}
			sum, err := r.Run(ctx, j)
			fmt.Fprintf(a.Stdout, "%s: %s\n", a.Light, sum)
			if err != nil {
				return err
			}
			if verify {
				fmt.Fprintln(a.Stdout, "verify: every recorded output matches")
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
