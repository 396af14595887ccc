package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

func newSource(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "source",
		Short: "Add, list and delete a light's data sources",
		Long: `A data source feeds the light's variables and fires a transition, so that
rules only ever read variables. A poll source runs a tool every interval,
stores values read from its result (each variable v also keeps v_prev, its
previous value) and fires its transition. An internal source computes a value
from the light's own history (state_duration, transitions_today,
last_5_transitions). A nats source stores every message published on a NATS
subject and fires. Definitions are journaled with the light's
configuration; each run is journaled as one data input (the values it
stored), so a replay never calls the network.`,
		Example: `  lumen source add weather --tool get_weather --args '{"location":"Paris"}' \
      --interval 1h --store temperature=result.temp --fires weather_updated
  lumen source add dur --tracks state_duration --interval 30s --fires dur_updated
  lumen source add door --subject home.doorbell --store who=result.who --fires doorbell
  lumen source ls
  lumen source rm weather`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	var f cli.SourceFlags
	add := &cobra.Command{
		Use:   "add NAME [flags] | add -f FILE",
		Short: "Add (or replace) a data source",
		Long: `Add a data source named NAME from flags, or from a YAML or JSON file
(-f FILE, -f - for standard input) with the fields of create_source:
name, type, interval_ms, fetch {tool, args}, store {var: path}, fires,
tracks (internal), subject (nats). A source with the same name is refused
unless --replace.

The kind follows from the flags: --tool makes a poll source, --tracks an
internal one, --subject a nats one, --topic an mqtt one, --token a webhook
(or say --type, e.g. --type webhook without a token). A store path reads
the result: result.temp, result.list[0].name, result["odd key"].`,
		Example: `  # poll: run get_weather every hour, store result.temp, fire weather_updated
  lumen source add weather --tool get_weather --args '{"location":"Paris"}' \
      --interval 1h --store temperature=result.temp --fires weather_updated

  # internal: seconds in the current state, every 30 s, into variable dur
  lumen source add dur --tracks state_duration --interval 30s --store dur=result

  # push: every message on home.doorbell; {"who":"Ann"} sets who = "Ann"
  lumen source add door --subject home.doorbell --store who=result.who --fires doorbell

  # from a file (YAML or JSON), or standard input
  lumen source add -f weather.yaml
  echo '{"name":"dur","type":"internal","tracks":"state_duration"}' | lumen source add -f -`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error { return a.AddSource(cmd.Context(), cmd, argv, f) },
	}
	fl := add.Flags()
	fl.StringVarP(&f.File, "file", "f", "", "the definition (YAML or JSON; - for stdin) instead of flags")
	fl.BoolVar(&f.Replace, "replace", false, "replace the source of that name if there is one")
	fl.StringVar(&f.Parts.Type, "type", "", "poll, internal, nats, mqtt or webhook (default: from the other flags)")
	fl.Var(&f.Interval, "interval", "how often a poll or internal source runs, e.g. 1h, 30s (poll: at least 10s)")
	fl.StringVar(&f.Parts.Tool, "tool", "", "poll: the tool to run")
	fl.StringVar(&f.Parts.Args, "args", "", "poll: the tool's arguments, a JSON object")
	fl.StringArrayVar(&f.Parts.Store, "store", nil, "VAR=PATH: store the value at PATH of the result in variable VAR (repeatable)")
	fl.StringVar(&f.Parts.Fires, "fires", "", "the transition to fire after storing")
	fl.StringVar(&f.Parts.Tracks, "tracks", "", "internal: state_duration, time_in_state_ms, transitions_today or last_5_transitions")
	fl.StringVar(&f.Parts.Subject, "subject", "", "nats: the subject to listen on, e.g. home.doorbell (not under lumen.)")
	fl.StringVar(&f.Parts.Topic, "topic", "", "mqtt: the topic to listen on, e.g. home/doorbell (lumen up --mqtt)")
	fl.StringVar(&f.Parts.Token, "token", "", "webhook: a secret callers must send (Authorization: Bearer …); only its hash is kept")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the light's data sources",
		Example: `  lumen source ls
  lumen source ls --light kitchen --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error { return a.ListSources(cmd.Context()) },
	}
	var transition bool
	rm := &cobra.Command{
		Use:   "rm NAME",
		Short: "Delete a data source (its variables keep their last values), or with --transition a custom transition",
		Example: `  lumen source rm weather
  lumen source rm --transition too_warm   # its source and its predicate tool`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			verb := messages.VerbDeleteSource
			if transition {
				verb = messages.VerbDeleteTransition
			}
			return a.Mutate(cmd.Context(), verb, messages.NameRequest{Name: argv[0]})
		},
	}
	rm.Flags().BoolVar(&transition, "transition", false, "delete the custom transition NAME: its source and the tool that is its predicate")
	for _, c := range []*cobra.Command{add, ls, rm} {
		lightFlag(c, a)
		jsonFlag(c, a)
		cmd.AddCommand(c)
	}
	return cmd
}
