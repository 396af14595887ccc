package main

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

func jsonFlag(cmd *cobra.Command, a *app) {
	cmd.Flags().BoolVar(&a.JSON, "json", false, "print the raw JSON reply")
}

func newFire(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "fire TRANSITION",
		Short: "Fire a transition on a light, as if its button or a timer did",
		Long: `Fire a transition. The light's rules decide what happens; the reply lists
every event it caused (state change, variables, timers, rule errors).`,
		Example: `  lumen fire button_click
  lumen fire weather_updated --light kitchen
  lumen fire button_hold --json`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.Mutate(cmd.Context(), messages.VerbFire, messages.FireRequest{Transition: args[0]})
		},
	}
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newState(a *app) *cobra.Command {
	var fade cli.Fade
	cmd := &cobra.Command{
		Use:   "state [NAME]",
		Short: "Show the current state, or go to state NAME at once; add and remove states",
		Example: `  lumen state            # prints the current state
  lumen state red        # go to red now, without a rule
  lumen state red --fade 30m
  lumen state add orange 255 140 0
  lumen state rm orange`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				g, err := a.Get(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintln(a.Stdout, g.State)
				return nil
			}
			return a.Mutate(cmd.Context(), messages.VerbSetState, messages.SetStateRequest{Name: args[0], FadeMs: fade.Ms()})
		},
	}
	fade.Add(cmd.Flags())
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	cmd.AddCommand(newStateAdd(a), newStateRm(a))
	return cmd
}

func newGet(a *app) *cobra.Command {
	var past cli.Past
	cmd := &cobra.Command{
		Use:   "get",
		Short: "Print a light's whole model: state, states, rules, variables, timers, schedules",
		Long: `Print a light's whole model as JSON: its state, states, rules, variables,
timers, schedules, tools and data sources. With --seq or --at, the model as it
was then, rebuilt from the journal with no side effects.`,
		Example: `  lumen get --light kitchen
  lumen get --seq 120          # right after input 120 (an output's seq names its input)
  lumen get --at 08:00         # at 8 this morning; also 2026-11-25T08:00:00Z or 90m (ago)
  lumen get --at 21:14:40      # HH:MM[:SS], local time: today, or yesterday if still to come`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			q, err := past.Request()
			if err != nil {
				return err
			}
			b, err := a.Request(cmd.Context(), messages.VerbGet, q)
			if err != nil {
				return err
			}
			return a.PrintJSON(b)
		},
	}
	past.Add(cmd)
	lightFlag(cmd, a)
	return cmd
}

func newApply(a *app) *cobra.Command {
	var file, state string
	var replaceAll, dryRun bool
	cmd := &cobra.Command{
		Use:   "apply -f FILE",
		Short: "Replace a light's whole configuration from a YAML or JSON file",
		Long: `Replace the light's states, rules, schedules, tools and data sources (and
variables, if given) with the file's, validated as a whole: on any error
nothing changes. The file has the shape of 'lumen export': states, rules,
vars, initial, schedules, tools, sources. Use -f - for standard input. A file
with no states and no rules (an empty one) is refused, since it would empty
the light: --replace-all empties it on purpose. A rule written without an id
keeps the id of the same rule already there.

Applying keeps the light in the state it is in: --state NAME moves it to
NAME; initial is where it goes only when the file removes its state.

It prints what changed (+ added, ~ changed, - removed); --dry-run checks the
file and prints what would change, and changes nothing.

Limits: at most 1,000 states and 5,000 rules; names of at most 64
printable characters without spaces; expressions of at most 4 KiB; a
variable's value at most 64 KiB; the file at most 1 MiB. A mistake is
reported at the file's line.`,
		Example: `  lumen export > demo.yaml && $EDITOR demo.yaml && lumen apply -f demo.yaml --dry-run
  lumen apply -f demo.yaml
  lumen apply -f demo.yaml --state red`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.Apply(cmd.Context(), file, state, replaceAll, dryRun)
		},
	}
	cmd.Flags().StringVarP(&file, "file", "f", "", "configuration file (.yaml, .yml or .json; - for stdin)")
	cmd.Flags().BoolVar(&replaceAll, "replace-all", false, "apply even a configuration with no states and no rules, which empties the light")
	cmd.Flags().BoolVar(&dryRun, "dry-run", false, "check the file and print what would change, without applying it")
	cmd.Flags().StringVar(&state, "state", "", "the state the light goes to once the file is applied (default: it stays in its state)")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newExport(a *app) *cobra.Command {
	var format string
	var past cli.Past
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print a light's configuration in the form 'lumen apply' takes",
		Example: `  lumen export > kitchen.yaml
  lumen export --format json --light hall`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.Export(cmd.Context(), format, past) },
	}
	cmd.Flags().StringVar(&format, "format", "yaml", "yaml or json")
	past.Add(cmd)
	lightFlag(cmd, a)
	return cmd
}

func newTail(a *app) *cobra.Command {
	var since cli.Duration
	var fromSeq uint64
	cmd := &cobra.Command{
		Use:   "tail",
		Short: "Follow a light's events live, one line each",
		Long: `Follow the events of a light as they happen: inputs (what was asked) and
outputs (what it did), live as they are published. --light '*' follows every
light running when it starts: at a hub (lumen hub), every light of every Pi.

With --since or --from-seq it first prints the history from the journal
(LUMEN, or at a hub LUMEN_HOUSE), then goes on live, nothing missed between.`,
		Example: `  lumen tail
  lumen tail --light '*' --json
  lumen tail --since 1h
  lumen tail --from-seq 120`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.Tail(cmd.Context(), time.Duration(since), fromSeq)
		},
	}
	cmd.Flags().Var(&since, "since", "first print the events of the last `DURATION` (e.g. 1h, 30m)")
	cmd.Flags().Uint64Var(&fromSeq, "from-seq", 0, "first print the events from stream sequence `N` on")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}
