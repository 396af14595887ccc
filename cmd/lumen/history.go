package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

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
			h, err := call(cmd.Context(), a, messages.VerbHistory, wire.Light.History)
			if err != nil {
				return err
			}
			if a.jsonOut {
				return a.printValue(h)
			}
			if len(h.Changes) == 0 {
				fmt.Fprintf(a.stdout, "light %s has no configuration change in its journal\n", h.Light)
				return nil
			}
			w := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
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
				return usageError{fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", argv[0])}
			}
			return a.mutate(cmd.Context(), messages.VerbRollback, messages.RollbackRequest{Seq: seq})
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
					return usageError{fmt.Errorf("SEQ %q is not a sequence ('lumen history' lists them)", s)}
				}
				seqs = append(seqs, n)
			}
			ctx := cmd.Context()
			var from, to string
			var err error
			prev, last := uint64(0), seqs[len(seqs)-1]
			if len(seqs) == 2 {
				prev = seqs[0]
				if from, err = a.configYAML(ctx, prev); err == nil {
					to, err = a.configYAML(ctx, last)
				}
			} else {
				prev, from, to, err = a.changeYAML(ctx, last)
			}
			if err != nil {
				return err
			}
			fromLabel := fmt.Sprintf("light %s after input %d", a.light, prev)
			if prev == 0 {
				fromLabel = fmt.Sprintf("light %s before any configuration", a.light)
			}
			diff := describe.Diff(fromLabel, fmt.Sprintf("light %s after input %d", a.light, last), from, to)
			if diff == "" {
				diff = "no difference\n"
			}
			_, err = io.WriteString(a.stdout, diff)
			return err
		},
	}
	lightFlag(cmd, a)
	return cmd
}

// configYAML is the light's configuration right after input seq, as
// export prints it without the variables.
func (a *app) configYAML(ctx context.Context, seq uint64) (string, error) {
	g, err := a.getAt(ctx, messages.GetRequest{Seq: seq})
	if err != nil {
		return "", err
	}
	cfg := g.Config()
	cfg.Vars = nil
	b, err := messages.ToYAML(cfg)
	return string(b), err
}

// changeYAML is the configuration before and after change seq: the
// one after the change prev before it in the history, or none (prev 0).
func (a *app) changeYAML(ctx context.Context, seq uint64) (prev uint64, before, after string, err error) {
	h, err := call(ctx, a, messages.VerbHistory, wire.Light.History)
	if err != nil {
		return 0, "", "", err
	}
	for _, c := range h.Changes {
		if c.Seq == seq {
			if prev != 0 {
				if before, err = a.configYAML(ctx, prev); err != nil {
					return 0, "", "", err
				}
			}
			after, err = a.configYAML(ctx, seq)
			return prev, before, after, err
		}
		prev = c.Seq
	}
	return 0, "", "", fmt.Errorf("input %d changed no configuration of light %s: 'lumen history' lists the changes, 'lumen diff %d %d' compares any two", seq, a.light, seq, seq)
}
