package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
)

func newReplay(a *app) *cobra.Command {
	var o cli.ReplayOpts
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
		RunE: func(cmd *cobra.Command, _ []string) error { return a.Replay(cmd.Context(), o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.Data, "data", "", "read this data directory directly instead of a running daemon")
	f.StringVarP(&o.File, "file", "f", "", "read this journal slice ('lumen journal export' writes them) instead of a journal")
	f.Uint64Var(&o.ToSeq, "to-seq", 0, "stop after the input with this stream sequence")
	f.BoolVar(&o.Verify, "verify", false, "fail if any recomputed output differs from the recorded one")
	f.BoolVar(&o.FromSnapshot, "from-snapshot", false, "start from the light's latest snapshot instead of the first event")
	f.BoolVarP(&o.Quiet, "quiet", "q", false, "print only the summary")
	lightFlag(cmd, a)
	return cmd
}
