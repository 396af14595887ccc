package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/nats/repair"
)

func newWhy(a *app) *cobra.Command {
	var file string
	cmd := &cobra.Command{
		Use:   "why [SEQ]",
		Short: "Explain why a light is in its state, or what it did at event SEQ",
		Long: `Explain the light's current state, or the event with stream sequence SEQ
(an input, or an output: then the input that caused it), by replaying its
journal; nothing is changed. It names the input (when, what, and who: button,
cli, http, nats, fleet, agent:<session>:<step>, source:<name>, timer:<name>,
schedule:<name>), the rule that fired with its condition's value, every
variable the rule read with the input that last set it, the rules that did not
fire and why (condition false, disabled, from another state, not tried after a
higher priority), failures and restarts in between, and one level further,
why the state before was what it was.

With -f FILE it explains from a journal slice ('lumen journal export'), on any
machine, with no daemon.`,
		Example: `  lumen why
  lumen why 1042 --json
  lumen why -f kitchen.slice`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error { return a.Why(cmd.Context(), argv, file) },
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "explain from this journal slice instead of the running light")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newJournal(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "journal",
		Short: "Export a light's journal for a bug report, or repair a damaged one",
		Args:  args(cobra.NoArgs),
	}
	var (
		since cli.Duration
		out   string
		data  string
	)
	export := &cobra.Command{
		Use:   "export -o FILE",
		Short: "Write a self-contained slice of a light's journal to a file",
		Long: `Write a light's journal, or its last --since, to FILE: the light's state
right before the slice (rebuilt by replay), then every input and recorded
output after it. 'lumen replay -f FILE --verify' and 'lumen why -f FILE' read
it on another machine, with no daemon. Secret values are not in it: the
journal holds only their names.`,
		Example: `  lumen journal export --light kitchen -o kitchen.slice
  lumen journal export --since 2h -o last-two-hours.slice`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.ExportJournal(cmd.Context(), out, data, time.Duration(since))
		},
	}
	f := export.Flags()
	f.StringVarP(&out, "output", "o", "", "the `FILE` to write")
	f.Var(&since, "since", "only the last `DURATION` (e.g. 2h); default: the whole journal")
	f.StringVar(&data, "data", "", "read this data directory directly instead of a running daemon")
	lightFlag(export, a)
	cmd.AddCommand(export, newJournalRepair(a))
	return cmd
}

func newJournalRepair(a *app) *cobra.Command {
	var data string
	cmd := &cobra.Command{
		Use:   "repair --data DIR",
		Short: "Repair a damaged journal in a stopped daemon's data directory",
		Long: `Check every event of the journal in DIR against its checksum, and repair
what is damaged (a disk or SD card that flipped a bit, a file cut short):

  * each damaged event is removed; every intact one is kept, with its
    sequence number;
  * a damaged stream description (meta.inf) is written afresh: the next
    'lumen up' sets its lights and budget again;
  * each light gets a 'gap' output naming the lost sequences, so that it
    starts, and 'lumen replay --verify' checks it, around them.

'lumen up' refuses to start on a damaged journal and names this command.
Lumen must be stopped: the repair refuses a directory a daemon holds. A
journal with nothing damaged is left as it is.`,
		Example: `  lumen journal repair --data ~/.local/share/lumen
  lumen up --data ~/.local/share/lumen`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if data == "" {
				return cli.Usage(errors.New("--data DIR is required: the data directory of the stopped daemon"))
			}
			res, err := repair.Repair(cmd.Context(), data, time.Now())
			if err != nil {
				return err
			}
			fmt.Fprintln(a.Stdout, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&data, "data", "", "the data `DIR` of the stopped daemon")
	return cmd
}

func newWhatIf(a *app) *cobra.Command {
	var (
		file    string
		since   cli.Duration
		fromSeq uint64
	)
	cmd := &cobra.Command{
		Use:   "whatif -f PROPOSED",
		Short: "Replay recorded inputs against a proposed configuration, changing nothing",
		Long: `Replay the light's recorded inputs of the last --since (default 24h), or
from --from-seq N, against the configuration in PROPOSED (YAML or JSON, as
'lumen apply' takes it; its vars and initial are ignored), starting from the
light's recorded state and variables right before. Clicks, data, set_var,
set_state, power, brightness and color inputs are replayed; the proposal's own
timers and schedules fire in virtual time. Nothing is journaled and nothing is sent anywhere.

It prints how many inputs were replayed, how many would leave the light in
another state than it was, and the first of those: time, input, recorded
state → proposed state.`,
		Example: `  lumen export > proposed.yaml && $EDITOR proposed.yaml
  lumen whatif -f proposed.yaml
  lumen whatif -f proposed.yaml --since 7d --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.WhatIf(cmd.Context(), file, time.Duration(since), fromSeq)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "the proposed configuration (.yaml, .yml or .json; - for stdin)")
	cmd.Flags().Var(&since, "since", "replay the inputs of the last `DURATION` (default 24h)")
	cmd.Flags().Uint64Var(&fromSeq, "from-seq", 0, "replay the inputs from stream sequence `N` on")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
