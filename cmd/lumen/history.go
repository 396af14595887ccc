package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

func newHistory(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List every change of a light's configuration: seq, time, what changed",
		Long: `List every input that changed the light's configuration (states, rules,
schedules, tools, data sources, initial), oldest first, read back from the
journal: its sequence, its time, who made it (cli, http, nats, fleet,
agent:<session>:<step>, rollback:<who>, local; unknown before this was
recorded) and what it changed (+ added, ~ changed, - removed). 'lumen get --seq N' and 'lumen export --seq N' show the light
right after one; 'lumen rollback N' goes back to it.`,
		Example: `  lumen history --light kitchen
  lumen rollback 120`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.History(cmd.Context()) },
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
				return cli.Usage(fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", argv[0]))
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
		RunE: func(cmd *cobra.Command, argv []string) error { return a.Diff(cmd.Context(), argv) },
	}
	lightFlag(cmd, a)
	return cmd
}
