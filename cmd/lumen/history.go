package main

import (
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/messages"
)

func newHistory(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "history",
		Short: "List every change of a light's configuration: seq, time, what changed",
		Long: `List every input that changed the light's configuration (states, rules,
schedules, tools, data sources, initial), oldest first, read back from the
journal: its sequence, its time and what it changed (+ added, ~ changed,
- removed). 'lumen get --seq N' and 'lumen export --seq N' show the light
right after one; 'lumen rollback N' goes back to it.`,
		Example: `  lumen history --light kitchen
  lumen rollback 120`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			b, err := a.request(cmd.Context(), messages.VerbHistory, struct{}{})
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printJSON(b)
			}
			var h messages.HistoryReply
			if err := json.Unmarshal(b, &h); err != nil {
				return fmt.Errorf("unexpected reply: %s", b)
			}
			if len(h.Changes) == 0 {
				fmt.Fprintf(a.stdout, "light %s has no configuration change in its journal\n", h.Light)
				return nil
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(w, "SEQ\tTIME\tCHANGES")
			for _, c := range h.Changes {
				fmt.Fprintf(w, "%d\t%s\t%s\n", c.Seq, c.Time.Local().Format("2006-01-02 15:04:05"), c.Summary)
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
as they are.`,
		Example: `  lumen history
  lumen rollback 120`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			seq, err := strconv.ParseUint(argv[0], 10, 64)
			if err != nil || seq == 0 {
				return usageError{fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", argv[0])}
			}
			return a.mutate(cmd.Context(), messages.VerbRollback, messages.RollbackRequest{Seq: seq})
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
