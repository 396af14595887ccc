package main

import (
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

func newHistory(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List every change of a light's configuration: seq, time, what changed",
		Long: `List every input that changed the light's configuration (states, rules,
schedules, tools, data sources, initial), oldest first, read back from the
journal: its sequence, its time, who made it (cli, http, nats, fleet,
agent:<session>:<step>, rollback, local; unknown before this was
recorded) and what it changed (+ added, ~ changed, - removed). 'lumen get --seq N' and 'lumen export --seq N' show the light
right after one; 'lumen rollback N' goes back to it.`,
		Example: `  lumen history --light kitchen
  lumen rollback 120`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			h, err := cli.Call(cmd.Context(), a.Term, messages.VerbHistory, wire.Light.History)
			if err != nil {
				return err
			}
			if a.JSON {
				return a.PrintValue(h)
			}
			if len(h.Changes) == 0 {
				fmt.Fprintf(a.Stdout, "light %s has no configuration change in its journal\n", h.Light)
				return nil
			}
			w := tabwriter.NewWriter(a.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SEQ\tTIME\tBY\tCHANGES")
			for _, c := range h.Changes {
				fmt.Fprintf(w, "%d\t%s\t%s\t%s\n", c.Seq, c.Time.Local().Format("2006-01-02 15:04:05"), c.By, c.Summary)
			}
			return w.Flush()
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newRollback(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rollback SEQ",
		Short: "Make a light's configuration what it was right after input SEQ",
		Long: `Make the light's configuration (states, rules, schedules, tools, data
sources, initial) what it was right after input SEQ ('lumen history' lists
them), as one new input validated as a whole like 'lumen apply': the
rollback is itself in the history, and can be rolled back. Variables stay
as they are, and so does the light's state, unless that configuration lacks
it: then the light takes its initial state.`,
		Example: `  lumen history
  lumen rollback 120`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			seq, err := strconv.ParseUint(argv[0], 10, 64)
			if err != nil || seq == 0 {
				return cli.UsageError{Err: fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", argv[0])}
			}
			return a.Mutate(cmd.Context(), messages.VerbRollback, messages.RollbackRequest{Seq: seq})
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newDiff(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "diff SEQ [SEQ2]",
		Short: "Show a configuration change as a YAML diff",
		Long: `Show what configuration change SEQ ('lumen history' lists them) did, as a
diff of the YAML 'lumen export' prints, from the configuration before it to
the one after; with SEQ2, from the configuration after SEQ to the one after
SEQ2. It is a unified diff (as diff -u): each hunk, after its @@ line, shows
the lines that changed, starting with - (before only) or + (after only), and
three unchanged lines around them, starting with a space.`,
		Example: `  lumen history
  lumen diff 120
  lumen diff 120 180`,
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var seqs []uint64
			for _, s := range argv {
				n, err := strconv.ParseUint(s, 10, 64)
				if err != nil || n == 0 {
					return cli.UsageError{Err: fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", s)}
				}
				seqs = append(seqs, n)
			}
			ctx := cmd.Context()
			var from, to string
			var err error
			prev, last := uint64(0), seqs[len(seqs)-1]
			if len(seqs) == 2 {
				prev = seqs[0]
				if from, err = a.ConfigYAML(ctx, prev); err == nil {
					to, err = a.ConfigYAML(ctx, last)
				}
			} else {
				prev, from, to, err = a.ChangeYAML(ctx, last)
			}
			if err != nil {
				return err
			}
			fromLabel := fmt.Sprintf("light %s after input %d", a.Light, prev)
			if prev == 0 {
				fromLabel = fmt.Sprintf("light %s before any configuration", a.Light)
			}
			diff := describe.Diff(fromLabel, fmt.Sprintf("light %s after input %d", a.Light, last), from, to)
			if diff == "" {
				diff = "no difference\n"
			}
			_, err = io.WriteString(a.Stdout, diff)
			return err
		},
	}
	lightFlag(cmd, a)
	return cmd
}
