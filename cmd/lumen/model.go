package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// The light's model, piece by piece: lumen states, rules, vars and the
// rule, var and schedule verbs over the wire's commands.

// newListing is a command that prints one table of the light's model.
func newListing(a *app, use, short string, print func(g messages.GetReply) error) *cobra.Command {
	cmd := &cobra.Command{
		Use:   use,
		Short: short,
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var g messages.GetReply
			if raw, err := a.Query(cmd.Context(), messages.VerbGet, nil, &g); raw || err != nil {
				return err
			}
			return print(g)
		},
	}
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newStates(a *app) *cobra.Command {
	return newListing(a, "states", "List the light's states (* marks the current one)", func(g messages.GetReply) error {
		return describe.States(a.Stdout, g)
	})
}

func newRules(a *app) *cobra.Command {
	return newListing(a, "rules", "List the light's rules: id, from, on, to, condition, action, priority, enabled", func(g messages.GetReply) error {
		if err := describe.Rules(a.Stdout, g.Rules); err != nil {
			return err
		}
		if n := len(g.Layers); n > 0 {
			// Their rules are tried first: say so where the rules are read.
			what := fmt.Sprintf("%d temporary layers", n)
			if n == 1 {
				what = "a temporary layer"
			}
			_, err := fmt.Fprintf(a.Stdout, "(and %s of rules, tried before these: lumen layers)\n", what)
			return err
		}
		return nil
	})
}

func newVars(a *app) *cobra.Command {
	return newListing(a, "vars", "List the light's variables and their values", func(g messages.GetReply) error {
		return describe.Vars(a.Stdout, g.Vars)
	})
}

// mutation is a subcommand that sends one mutation built from its
// arguments, to one light or (--light fleet, --group) to several.
func mutation(a *app, cmd *cobra.Command, verb string, body func(argv []string) (any, error)) *cobra.Command {
	cmd.RunE = func(cmd *cobra.Command, argv []string) error {
		b, err := body(argv)
		if err != nil {
			return err
		}
		return a.Mutate(cmd.Context(), verb, b)
	}
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newRule(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rule",
		Short: "Add, remove, enable and disable a light's rules ('lumen rules' lists them)",
	}
	var r messages.Rule
	var (
		disabled, noRestore bool
		fade                cli.Fade
		layer               messages.LayerSpec
		fires               int
		lasts               time.Duration
	)
	var add *cobra.Command
	add = mutation(a, &cobra.Command{
		Use:   "add FROM ON TO",
		Short: "Add a rule: in state FROM, transition ON goes to state TO",
		Long: `Add a rule. FROM is a state, * (any state) or prefix/* ; ON is the
transition (button_click, a timer's or a source's name); TO the state it goes
to. --if and --do are JavaScript: a condition, and an action run before the
state changes. Rules matching a transition are tried by priority, highest
first; the new rule gets the next id (r<N>) unless --id gives one.

With --fires, --for or --until the rule is added as a temporary layer (named
--layer, else layer<N>): it is tried before the light's own rules until the
layer ends by itself, after it fired N times (the next click it would match
then only ends the layer), after a duration, or after the first input after
which a condition holds. The light then returns to the state it had when the
layer began, unless --no-restore. 'lumen layers' lists the layers, 'lumen
layer rm NAME' ends one early.`,
		Example: `  lumen rule add off button_click red
  lumen rule add '*' button_double_click party --priority 10
  lumen rule add red button_click off --if "getData('n') > 2" --do "setData('n', 0)"
  lumen rule add '*' button_click red --fires 3 --layer next3     # the next 3 clicks red, then back
  lumen rule add '*' button_click party --for 2h                  # for two hours
  lumen rule add '*' button_click blue --until "getData('guests') === 0" --no-restore`,
		Args: args(cobra.ExactArgs(3)),
	}, messages.VerbAppendRules, func(argv []string) (any, error) {
		r.From, r.On, r.To, r.Enabled = argv[0], argv[1], argv[2], !disabled
		if ms := fade.Ms(); ms != nil {
			r.FadeMs = *ms
		}
		req := messages.RulesRequest{Rules: []messages.Rule{r}}
		spec := layer
		// A flag given is sent as given: --fires 0 is refused, not taken
		// for no layer (a permanent rule).
		if add.Flags().Changed("fires") {
			spec.Fires = &fires
		}
		if add.Flags().Changed("for") {
			if lasts < time.Millisecond {
				return nil, cli.Usage(fmt.Errorf("--for %s: a layer lasts from 1ms to about 31 years, e.g. --for 10m", lasts))
			}
			ms := lasts.Milliseconds()
			spec.Ms = &ms
		}
		if noRestore {
			no := false
			spec.Restore = &no
		}
		switch n := btoi(spec.Fires != nil) + btoi(spec.Ms != nil) + btoi(spec.Until != ""); {
		case n > 1:
			return nil, cli.Usage(errors.New("give one of --fires, --for and --until: how the layer ends"))
		case n == 0 && (spec.Name != "" || noRestore):
			return nil, cli.Usage(errors.New("--layer and --no-restore add the rule as a temporary layer: say how it ends with --fires, --for or --until"))
		case n == 1:
			req.Layer = &spec
		}
		return req, nil
	})
	// The light names a refused rule by its place in the request; the
	// command sends one rule and names it already.
	send := add.RunE
	add.RunE = func(cmd *cobra.Command, argv []string) error {
		err := send(cmd, argv)
		if err != nil && !errors.As(err, new(cli.UsageError)) {
			err = errors.New(strings.Replace(err.Error(), " (rules[0])", "", 1))
		}
		return err
	}
	f := add.Flags()
	f.StringVar(&layer.Name, "layer", "", "the temporary layer's name (with --fires, --for or --until; default layer<N>)")
	f.IntVar(&fires, "fires", 0, "add it as a layer that ends after its rule fired this many times")
	f.DurationVar(&lasts, "for", 0, "add it as a layer that ends after this long (10m, 2h)")
	f.StringVar(&layer.Until, "until", "", "add it as a layer that ends after the first input after which this JavaScript condition holds")
	f.BoolVar(&noRestore, "no-restore", false, "when the layer ends, stay in the state the light is in (default: return to the one it had when the layer began)")
	f.StringVar(&r.Condition, "if", "", "condition: a JavaScript expression; the rule fires only when it is true")
	f.StringVar(&r.Action, "do", "", "action: JavaScript run when the rule fires (setData, startTimer …)")
	f.IntVar(&r.Priority, "priority", 0, "higher is tried first")
	fade.Add(f)
	f.StringVar(&r.ID, "id", "", "the rule's id (default: the next r<N>)")
	f.BoolVar(&disabled, "disabled", false, "add it disabled ('lumen rule enable ID' turns it on)")
	var match messages.DeleteRulesRequest
	rm := mutation(a, &cobra.Command{
		Use:   "rm [ID…]",
		Short: "Remove rules by id, or every rule matching --from, --on and --to",
		Example: `  lumen rule rm r4 r7
  lumen rule rm --on button_double_click`,
	}, messages.VerbDeleteRules, func(argv []string) (any, error) {
		match.IDs = argv
		if len(argv) > 0 && (match.From != "" || match.On != "" || match.To != "") {
			return nil, cli.Usage(errors.New("give rule ids, or --from/--on/--to, not both"))
		}
		if len(argv) == 0 && match.From == "" && match.On == "" && match.To == "" {
			return nil, cli.Usage(errors.New("name the rules: ids ('lumen rules' lists them), or --from, --on, --to"))
		}
		return match, nil
	})
	rm.Flags().StringVar(&match.From, "from", "", "rules from this state")
	rm.Flags().StringVar(&match.On, "on", "", "rules on this transition")
	rm.Flags().StringVar(&match.To, "to", "", "rules to this state")
	cmd.AddCommand(add, rm, enableRules(a, true), enableRules(a, false))
	return cmd
}

func enableRules(a *app, on bool) *cobra.Command {
	use, short, verb := "disable ID…", "Disable rules (the light's own or a layer's): they stay, but are never tried", messages.VerbDisableRules
	if on {
		use, short, verb = "enable ID…", "Enable rules again", messages.VerbEnableRules
	}
	return mutation(a, &cobra.Command{Use: use, Short: short, Args: args(cobra.MinimumNArgs(1))},
		verb, func(argv []string) (any, error) {
			return messages.IDsRequest{IDs: argv}, nil
		})
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// newLayers is lumen layers, and newLayer lumen layer ls|rm: the light's
// temporary layers of rules.
func newLayers(a *app) *cobra.Command {
	return newListing(a, "layers", "List the light's temporary layers of rules: how each ends, the state it returns to, its rules", func(g messages.GetReply) error {
		if len(g.Layers) == 0 {
			_, err := fmt.Fprintf(a.Stdout, "light %s has no layers\n", a.Light)
			return err
		}
		return describe.Layers(a.Stdout, g.Layers, time.Now())
	})
}

func newLayer(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "layer",
		Short: "List and end a light's temporary layers of rules ('lumen rule add … --fires N' adds one)",
		Long: `A layer is rules added for a while: 'lumen rule add … --fires 3', '--for 2h'
or '--until COND'. While it lives its rules are tried before the light's own
(the newest layer first); when it ends the light removes it by itself and
returns to the state it had when the layer began (unless --no-restore).`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	ls := newLayers(a)
	ls.Use = "ls"
	rm := mutation(a, &cobra.Command{
		Use:     "rm NAME",
		Short:   "End a layer now (the light returns to the state it began in if the layer restores)",
		Example: `  lumen layer rm next3`,
		Args:    args(cobra.ExactArgs(1)),
	}, messages.VerbDeleteLayer, func(argv []string) (any, error) {
		return messages.NameRequest{Name: argv[0]}, nil
	})
	cmd.AddCommand(ls, rm)
	return cmd
}

func newVar(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "var",
		Short: "Set and unset a light's variables ('lumen vars' lists them)",
	}
	set := mutation(a, &cobra.Command{
		Use:   "set NAME VALUE",
		Short: "Set a variable: VALUE is JSON (3, true, {\"a\":1}), else taken as a string",
		Example: `  lumen var set threshold 12.5
  lumen var set mode evening          # the string "evening"
  lumen var set party '{"colors":["red","blue"]}'`,
		Args: args(cobra.ExactArgs(2)),
	}, messages.VerbSetVar, func(argv []string) (any, error) {
		v := json.RawMessage(argv[1])
		if !json.Valid(v) {
			v, _ = json.Marshal(argv[1])
		}
		return messages.InVarData{Name: argv[0], Value: v}, nil
	})
	unset := mutation(a, &cobra.Command{
		Use:   "unset NAME",
		Short: "Remove a variable (getData gives undefined)",
		Args:  args(cobra.ExactArgs(1)),
	}, messages.VerbSetVar, func(argv []string) (any, error) {
		return messages.InVarData{Name: argv[0], Unset: true}, nil
	})
	cmd.AddCommand(set, unset)
	return cmd
}

func newSchedule(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "schedule",
		Short: "Add, list and remove a light's schedules: transitions fired on a cron or by the sun",
	}
	var s messages.Schedule
	add := mutation(a, &cobra.Command{
		Use:   "add NAME (--cron SPEC | --sun EVENT [--offset D]) --fires TRANSITION",
		Short: "Add (or replace) a schedule",
		Long: `Add a schedule that fires a transition on a cron: five fields (minute hour
day month weekday) or a descriptor such as @hourly or @every 5m, at most once
a second, in --tz (an IANA zone, default the daemon's: its $TZ, else the zone
/etc/localtime links to, else UTC). Or by the sun: --sun sunrise, sunset,
dawn or dusk (civil twilight) every day, --offset before (-30m) or after (1h)
it, at most 12h, at the daemon's home (lumen up --home LAT,LON), computed
locally; a day the sun does not rise or set there (a polar day or night) is
skipped. A schedule whose time passed while the daemon was down fires once
when it is back, marked late.`,
		Example: `  lumen schedule add evening --cron "0 19 * * *" --tz Europe/Paris --fires evening
  lumen schedule add wake --sun sunrise --offset -30m --fires wake
  lumen rule add '*' evening red`,
		Args: args(cobra.ExactArgs(1)),
	}, messages.VerbCreateSchedule, func(argv []string) (any, error) {
		if (s.Cron == "") == (s.Sun == "") || s.Fires == "" {
			return nil, cli.Usage(errors.New("give --cron or --sun, and --fires"))
		}
		s.Name = argv[0]
		return s, nil
	})
	add.Flags().StringVar(&s.Cron, "cron", "", `when: "0 19 * * *", @hourly, @every 10m`)
	add.Flags().StringVar(&s.TZ, "tz", "", "IANA time zone of the cron, e.g. Europe/Paris (default the daemon's)")
	add.Flags().StringVar(&s.Sun, "sun", "", "instead of --cron: sunrise, sunset, dawn or dusk, at the daemon's --home")
	add.Flags().StringVar(&s.Offset, "offset", "", "with --sun: before (-30m) or after (1h15m) it, at most 12h")
	add.Flags().StringVar(&s.Fires, "fires", "", "the transition it fires")
	rm := mutation(a, &cobra.Command{
		Use:   "rm NAME",
		Short: "Remove a schedule",
		Args:  args(cobra.ExactArgs(1)),
	}, messages.VerbDeleteSchedule, func(argv []string) (any, error) {
		return messages.NameRequest{Name: argv[0]}, nil
	})
	ls := newListing(a, "ls", "List the light's schedules and their next tick", func(g messages.GetReply) error {
		if len(g.Schedules) == 0 {
			_, err := fmt.Fprintf(a.Stdout, "light %s has no schedules\n", a.Light)
			return err
		}
		return describe.Schedules(a.Stdout, g.Schedules, time.Now())
	})
	cmd.AddCommand(add, ls, rm)
	return cmd
}

// newStateAdd is lumen state add: create_state with one state.
func newStateAdd(a *app) *cobra.Command {
	var speed int
	var description string
	cmd := mutation(a, &cobra.Command{
		Use:   "add NAME R G B",
		Short: "Add a state, or change one: its color (0-255 or a JavaScript expression per channel)",
		Long: `Add a state named NAME whose color is R G B: each a number from 0 to 255,
or a JavaScript expression (frame, t, i, n, getData …) computed for every
frame, one frame each --speed milliseconds. A state of that name already
there is replaced.`,
		Example: `  lumen state add orange 255 140 0
  lumen state add breathe 0 0 "128 + 127 * Math.sin(frame / 10)" --speed 50 --description "slow blue breath"`,
		Args: args(cobra.ExactArgs(4)),
	}, messages.VerbCreateState, func(argv []string) (any, error) {
		s := messages.State{Name: argv[0], Description: description}
		for i, ch := range []*messages.Channel{&s.R, &s.G, &s.B} {
			c, err := messages.ParseChannel(argv[i+1])
			if err != nil {
				return nil, cli.Usage(fmt.Errorf("%s: %w", "RGB"[i:i+1], err))
			}
			*ch = c
		}
		if speed != 0 {
			s.Speed = &speed
		}
		return s, nil
	})
	cmd.Flags().IntVar(&speed, "speed", 0, "for a color that is an expression, the frame period in `MS` (default: static)")
	cmd.Flags().StringVar(&description, "description", "", "what the state is for, in a few words")
	return cmd
}

// newStateRm is lumen state rm: delete_state.
func newStateRm(a *app) *cobra.Command {
	return mutation(a, &cobra.Command{
		Use:     "rm NAME",
		Short:   "Remove a state (refused while a rule goes to it)",
		Example: `  lumen state rm orange`,
		Args:    args(cobra.ExactArgs(1)),
	}, messages.VerbDeleteState, func(argv []string) (any, error) {
		return messages.NameRequest{Name: argv[0]}, nil
	})
}
