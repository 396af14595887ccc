package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/wire"
)

// sourceFlags are the flags of `lumen source add` that build a definition
// without a file.
type sourceFlags struct {
	file     string
	interval durationFlag
	parts    datasource.Parts
	replace  bool
}

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
	var f sourceFlags
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
		RunE: func(cmd *cobra.Command, argv []string) error {
			body, err := f.definition(cmd, argv, a)
			if err != nil {
				return err
			}
			if !f.replace {
				if err := a.noSource(cmd.Context(), body); err != nil {
					return err
				}
			}
			return a.mutate(cmd.Context(), messages.VerbCreateSource, body)
		},
	}
	fl := add.Flags()
	fl.StringVarP(&f.file, "file", "f", "", "the definition (YAML or JSON; - for stdin) instead of flags")
	fl.BoolVar(&f.replace, "replace", false, "replace the source of that name if there is one")
	fl.StringVar(&f.parts.Type, "type", "", "poll, internal, nats, mqtt or webhook (default: from the other flags)")
	fl.Var(&f.interval, "interval", "how often a poll or internal source runs, e.g. 1h, 30s (poll: at least 10s)")
	fl.StringVar(&f.parts.Tool, "tool", "", "poll: the tool to run")
	fl.StringVar(&f.parts.Args, "args", "", "poll: the tool's arguments, a JSON object")
	fl.StringArrayVar(&f.parts.Store, "store", nil, "VAR=PATH: store the value at PATH of the result in variable VAR (repeatable)")
	fl.StringVar(&f.parts.Fires, "fires", "", "the transition to fire after storing")
	fl.StringVar(&f.parts.Tracks, "tracks", "", "internal: state_duration, time_in_state_ms, transitions_today or last_5_transitions")
	fl.StringVar(&f.parts.Subject, "subject", "", "nats: the subject to listen on, e.g. home.doorbell (not under lumen.)")
	fl.StringVar(&f.parts.Topic, "topic", "", "mqtt: the topic to listen on, e.g. home/doorbell (lumen up --mqtt)")
	fl.StringVar(&f.parts.Token, "token", "", "webhook: a secret callers must send (Authorization: Bearer …); only its hash is kept")

	ls := &cobra.Command{
		Use:   "ls",
		Short: "List the light's data sources",
		Example: `  lumen source ls
  lumen source ls --light kitchen --json`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var r messages.SourcesReply
			if raw, err := a.query(cmd.Context(), messages.VerbListSources, nil, &r); raw || err != nil {
				return err
			}
			if len(r.Sources) == 0 {
				fmt.Fprintf(a.stdout, "light %s has no data sources\n", a.light)
			}
			now := time.Now()
			for _, raw := range r.Sources {
				fmt.Fprintln(a.stdout, describe.Source(raw, r, now))
			}
			return nil
		},
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
			return a.mutate(cmd.Context(), verb, messages.NameRequest{Name: argv[0]})
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

// definition returns the body of create_source: the file's, or one built
// from the flags. The light validates it; only how the command was called
// is checked here.
func (f *sourceFlags) definition(cmd *cobra.Command, argv []string, a *app) ([]byte, error) {
	if f.file != "" {
		var set []string
		for _, name := range []string{"type", "interval", "tool", "args", "store", "fires", "tracks", "subject", "topic", "token"} {
			if cmd.Flags().Changed(name) {
				set = append(set, "--"+name)
			}
		}
		if len(set) > 0 || len(argv) > 0 {
			return nil, usageError{fmt.Errorf("-f FILE gives the whole definition; drop %s", strings.Join(append(argv, set...), " "))}
		}
		_, body, err := a.readFile(f.file)
		if errors.As(err, new(badFile)) {
			return nil, usageError{err}
		}
		return body, err
	}
	if len(argv) == 0 {
		return nil, usageError{errors.New("name the source (lumen source add NAME --tool … --interval … --store VAR=PATH), or give -f FILE")}
	}
	f.parts.Name = argv[0]
	f.parts.Interval = time.Duration(f.interval)
	body, err := f.parts.JSON()
	if err != nil {
		return nil, usageError{err}
	}
	return body, nil
}

// noSource refuses to add a source whose name the light has already:
// replacing one is said with --replace.
func (a *app) noSource(ctx context.Context, body []byte) error {
	var d struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(body, &d) != nil || d.Name == "" {
		return nil // the light says what is wrong with it
	}
	r, err := call(ctx, a, messages.VerbListSources, wire.Light.Sources)
	if err != nil {
		return err
	}
	for _, raw := range r.Sources {
		var s struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &s) == nil && s.Name == d.Name {
			return fmt.Errorf("light %s has a source named %s already: add --replace to replace it, or 'lumen source rm %s' first", a.light, d.Name, d.Name)
		}
	}
	return nil
}
