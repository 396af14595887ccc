package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
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
journal: its sequence, its time, who made it (cli, http, nats, fleet,
agent:<session>:<step>, rollback, local; unknown before this was
recorded) and what it changed (+ added, ~ changed, - removed). 'lumen get --seq N' and 'lumen export --seq N' show the light
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
SEQ2. Lines start with - (before only), + (after only) or a space.`,
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
			if len(seqs) == 2 {
				if from, err = a.configYAML(ctx, seqs[0]); err == nil {
					to, err = a.configYAML(ctx, seqs[1])
				}
			} else {
				from, to, err = a.changeYAML(ctx, seqs[0])
			}
			if err != nil {
				return err
			}
			for _, l := range diffLines(strings.Split(from, "\n"), strings.Split(to, "\n")) {
				fmt.Fprintln(a.stdout, l)
			}
			return nil
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
// one after the change before it in the history, or none.
func (a *app) changeYAML(ctx context.Context, seq uint64) (before, after string, err error) {
	b, err := a.request(ctx, messages.VerbHistory, struct{}{})
	if err != nil {
		return "", "", err
	}
	var h messages.HistoryReply
	if err := json.Unmarshal(b, &h); err != nil {
		return "", "", fmt.Errorf("unexpected reply: %s", b)
	}
	prev := uint64(0)
	for _, c := range h.Changes {
		if c.Seq == seq {
			if prev != 0 {
				if before, err = a.configYAML(ctx, prev); err != nil {
					return "", "", err
				}
			}
			after, err = a.configYAML(ctx, seq)
			return before, after, err
		}
		prev = c.Seq
	}
	return "", "", fmt.Errorf("input %d changed no configuration of light %s: 'lumen history' lists the changes, 'lumen diff %d %d' compares any two", seq, a.light, seq, seq)
}

// diffLines is the lines of a turned into b, by their longest common
// subsequence: "- " only in a, "+ " only in b, "  " in both.
func diffLines(a, b []string) []string {
	// lcs[i][j] is the longest common subsequence of a[i:] and b[j:].
	lcs := make([][]int, len(a)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(b)+1)
	}
	for i := len(a) - 1; i >= 0; i-- {
		for j := len(b) - 1; j >= 0; j-- {
			if a[i] == b[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out []string
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i] == b[j]:
			out = append(out, "  "+a[i])
			i, j = i+1, j+1
		case i < len(a) && (j == len(b) || lcs[i+1][j] >= lcs[i][j+1]):
			out = append(out, "- "+a[i])
			i++
		default:
			out = append(out, "+ "+b[j])
			j++
		}
	}
	return out
}
