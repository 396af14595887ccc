package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

const defaultTimeout = 30 * time.Second

// durationFlag is a time.Duration flag that also accepts plain seconds.
type durationFlag time.Duration

func (d *durationFlag) String() string { return time.Duration(*d).String() }
func (d *durationFlag) Type() string   { return "duration" }
func (d *durationFlag) Set(s string) error {
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		*d = durationFlag(time.Duration(n * float64(time.Second)))
		return nil
	}
	if days, ok := strings.CutSuffix(s, "d"); ok {
		if n, err := strconv.ParseFloat(days, 64); err == nil {
			*d = durationFlag(time.Duration(n * float64(24*time.Hour)))
			return nil
		}
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("a duration like 10s, 500ms, 2h or 7d")
	}
	*d = durationFlag(v)
	return nil
}

func jsonFlag(cmd *cobra.Command, a *app) {
	cmd.Flags().BoolVar(&a.jsonOut, "json", false, "print the raw JSON reply")
}

func (a *app) connect() (*nats.Conn, error) {
	nc, err := nats.Connect(a.server, nats.Name("lumen-cli"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("cannot reach NATS at %s (%v); is 'lumen up' running? set --server or NATS_URL", a.where(), err)
	}
	return nc, nil
}

// request sends one command to --light and returns the reply body, or an
// error in the user's words.
func (a *app) request(ctx context.Context, verb string, body any) ([]byte, error) {
	nc, err := a.open(ctx)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	return a.requestOn(ctx, nc, verb, body)
}

// requestOn is request over an open connection.
func (a *app) requestOn(ctx context.Context, nc *nats.Conn, verb string, body any) ([]byte, error) {
	return a.requestWithin(ctx, nc, verb, body, time.Duration(a.timeout))
}

// requestWithin is requestOn with its own timeout.
func (a *app) requestWithin(ctx context.Context, nc *nats.Conn, verb string, body any, timeout time.Duration) ([]byte, error) {
	b, err := wire.New(nc, wire.WithTimeout(timeout), wire.WithWho(messages.WhoCLI)).Request(ctx, a.light, verb, body)
	return b, a.inWords(nc, verb, err, timeout)
}

// call sends one typed request (send, e.g. wire.Light.History) to
// --light, its refusal in the user's words as request's.
func call[T any](ctx context.Context, a *app, verb string, send func(wire.Light, context.Context) (T, error)) (T, error) {
	nc, err := a.open(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer nc.Close()
	v, err := send(a.client(nc).Light(a.light), ctx)
	return v, a.inWords(nc, verb, err, time.Duration(a.timeout))
}

// inWords puts the error of a request of verb to --light in the user's
// words.
func (a *app) inWords(nc *nats.Conn, verb string, err error, timeout time.Duration) error {
	if errors.Is(err, wire.ErrNoLight) {
		return a.noSuchLight(nc)
	}
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		// The user ran a command, not a verb: drop the verb the light
		// names its refusal with, and name commands as they type them.
		err = &wire.Error{Code: we.Code, Msg: inCLIWords(strings.TrimPrefix(we.Msg, verb+": "))}
	}
	return a.explain(err, timeout)
}

// cliWords are the CLI commands of the wire's verbs (messages.Verb.CLI),
// for the light's sentences that name a verb.
func cliWords() *strings.Replacer {
	var pairs []string
	for _, v := range messages.VerbTable() {
		if v.CLI != "" {
			pairs = append(pairs, v.Name, "'"+v.CLI+"'")
		}
	}
	return strings.NewReplacer(pairs...)
}

// inCLIWords names the verbs in a light's sentence (alone, or between
// parentheses) as the CLI commands a person types.
func inCLIWords(msg string) string {
	words := cliWords()
	return verbWord.ReplaceAllStringFunc(msg, func(w string) string { return words.Replace(w) })
}

// verbWord matches a whole word that may be a verb, not part of a field
// or a name (set_var_x, "vars_op").
var verbWord = regexp.MustCompile(`(?:^|[\s(])[a-z]+_[a-z_]+(?:$|[\s).,;:])`)

// explain puts a wire error in the user's words.
func (a *app) explain(err error, timeout time.Duration) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrNoLight):
		return fmt.Errorf("no light named %q is running at %s; start it with 'lumen up --light %s'", a.light, a.where(), a.light)
	case errors.Is(err, wire.ErrTimeout):
		return fmt.Errorf("light %q did not answer within %s", a.light, timeout)
	case errors.As(err, &we):
		return fmt.Errorf("%s (code %d)", we.Msg, we.Code)
	}
	return err
}

// printValue prints a typed reply as --json prints a reply.
func (a *app) printValue(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return a.printJSON(b)
}

func (a *app) printJSON(b []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		_, err = a.stdout.Write(b)
		return err
	}
	out.WriteByte('\n')
	_, err := a.stdout.Write(out.Bytes())
	return err
}

// mutate sends a mutation and prints its reply.
func (a *app) mutate(ctx context.Context, verb string, body any) error {
	nc, err := a.openFor(ctx, true)
	if err != nil {
		return err
	}
	defer nc.Close()
	if a.several != nil {
		return a.mutateAll(ctx, nc, verb, body)
	}
	b, err := a.requestOn(ctx, nc, verb, body)
	if err != nil {
		return err
	}
	return a.printReply(b)
}

// get fetches a light's model.
func (a *app) get(ctx context.Context) (g messages.GetReply, err error) {
	return a.getAt(ctx, messages.GetRequest{})
}

// getAt is get at a past seq or time (q), or now (q empty).
func (a *app) getAt(ctx context.Context, q messages.GetRequest) (messages.GetReply, error) {
	return call(ctx, a, messages.VerbGet, func(l wire.Light, ctx context.Context) (messages.GetReply, error) { return l.GetAt(ctx, q) })
}

// printReply prints a mutation's reply for a person.
func (a *app) printReply(b []byte) error {
	if a.jsonOut {
		return a.printJSON(b)
	}
	var r messages.Reply
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("unexpected reply: %s", b)
	}
	var d describe.Events
	for _, o := range r.Outputs {
		fmt.Fprintln(a.stdout, d.Output(o))
	}
	if r.Changes != nil {
		fmt.Fprintf(a.stdout, "changed: %s\n", r.Changes)
	}
	return nil
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
			return a.mutate(cmd.Context(), messages.VerbFire, messages.FireRequest{Transition: args[0]})
		},
	}
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

func newState(a *app) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "state [NAME]",
		Short: "Show the current state, or go to state NAME at once; add and remove states",
		Example: `  lumen state            # prints the current state
  lumen state red        # go to red now, without a rule
  lumen state add orange 255 140 0
  lumen state rm orange`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				g, err := a.get(cmd.Context())
				if err != nil {
					return err
				}
				fmt.Fprintln(a.stdout, g.State)
				return nil
			}
			return a.mutate(cmd.Context(), messages.VerbSetState, messages.SetStateRequest{Name: args[0]})
		},
	}
	fanoutFlags(cmd, a)
	jsonFlag(cmd, a)
	cmd.AddCommand(newStateAdd(a), newStateRm(a))
	return cmd
}

func newGet(a *app) *cobra.Command {
	var past pastFlags
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
			q, err := past.request()
			if err != nil {
				return err
			}
			b, err := a.request(cmd.Context(), messages.VerbGet, q)
			if err != nil {
				return err
			}
			return a.printJSON(b)
		},
	}
	past.add(cmd)
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
			if file == "" {
				return usageError{errors.New("apply needs -f FILE")}
			}
			raw, body, err := a.readFile(file)
			if err != nil {
				return err
			}
			if replaceAll {
				body = messages.WithTrue(body, "confirm_empty")
			}
			if state != "" {
				body = messages.WithField(body, "state", state)
			}
			if !dryRun {
				return blame(file, raw, a.mutate(cmd.Context(), messages.VerbApply, body))
			}
			var r messages.DryRunReply
			if printed, err := a.query(cmd.Context(), messages.VerbApply, messages.WithTrue(body, "dry_run"), &r); printed || err != nil {
				return blame(file, raw, err)
			}
			fmt.Fprintf(a.stdout, "dry run, nothing applied: %s\n", r.Changes)
			return nil
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

// badFile is a file that cannot be read as YAML or JSON.
type badFile struct{ error }

// readFile reads a YAML or JSON file (- for standard input) and returns
// it as written and as JSON; a file that is neither is a badFile.
func (a *app) readFile(file string) (raw, body []byte, err error) {
	if file == "-" {
		raw, err = io.ReadAll(a.stdin)
	} else {
		raw, err = os.ReadFile(file)
	}
	if err != nil {
		return nil, nil, err
	}
	body, err = messages.ToJSON(raw, strings.ToLower(filepath.Ext(file)))
	var se *messages.SourceError
	if errors.As(err, &se) {
		return nil, nil, badFile{fmt.Errorf("%s:%d: %s", fileName(file), se.Line, se.Msg)}
	} else if err != nil {
		return nil, nil, badFile{fmt.Errorf("%s: %w", fileName(file), err)}
	}
	return raw, body, nil
}

// blame points a refusal that names a field (rules[2].priority, state
// "red") at the file's line, and a syntax error at its column.
func blame(file string, raw []byte, err error) error {
	if err == nil {
		return nil
	}
	switch p := messages.Locate(raw, err.Error()); {
	case p.Col > 0:
		return fmt.Errorf("%s:%d:%d: %w", fileName(file), p.Line, p.Col, err)
	case p.Line > 0:
		return fmt.Errorf("%s:%d: %w", fileName(file), p.Line, err)
	}
	return err
}

// fileName names a file in a message; - is standard input.
func fileName(file string) string {
	if file == "-" {
		return "<stdin>"
	}
	return file
}

func newExport(a *app) *cobra.Command {
	var format string
	var past pastFlags
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Print a light's configuration in the form 'lumen apply' takes",
		Example: `  lumen export > kitchen.yaml
  lumen export --format json --light hall`,
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if format != "yaml" && format != "json" {
				return usageError{fmt.Errorf("--format must be yaml or json")}
			}
			q, err := past.request()
			if err != nil {
				return err
			}
			g, err := a.getAt(cmd.Context(), q)
			if err != nil {
				return err
			}
			if format == "json" {
				out, err := json.MarshalIndent(g.Config(), "", "  ")
				if err != nil {
					return err
				}
				_, err = fmt.Fprintf(a.stdout, "%s\n", out)
				return err
			}
			out, err := messages.ToYAML(g.Config())
			if err != nil {
				return err
			}
			_, err = a.stdout.Write(out)
			return err
		},
	}
	cmd.Flags().StringVar(&format, "format", "yaml", "yaml or json")
	past.add(cmd)
	lightFlag(cmd, a)
	return cmd
}

func newTail(a *app) *cobra.Command {
	var since durationFlag
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
			if since != 0 && fromSeq != 0 {
				return usageError{errors.New("give --since or --from-seq, not both")}
			}
			if since != 0 || fromSeq != 0 {
				return a.tailHistory(cmd.Context(), time.Duration(since), fromSeq)
			}
			var nc *nats.Conn
			var ch chan *nats.Msg
			var err error
			filter := subject.AllEvents
			if a.light == "*" {
				nc, ch, err = a.watchAll(cmd.Context())
			} else {
				nc, ch, err = a.watchLight(cmd.Context())
				filter = subject.Events(a.light)
			}
			if err != nil {
				return err
			}
			defer nc.Close()
			fmt.Fprintf(a.stderr, "lumen: following %s on %s (Ctrl-C to stop)\n", filter, a.where())
			a.printEvents(cmd.Context(), ch, 0, 0, func(*nats.Msg) bool { return false })
			return nil
		},
	}
	cmd.Flags().Var(&since, "since", "first print the events of the last `DURATION` (e.g. 1h, 30m)")
	cmd.Flags().Uint64Var(&fromSeq, "from-seq", 0, "first print the events from stream sequence `N` on")
	lightFlag(cmd, a)
	jsonFlag(cmd, a)
	return cmd
}

// tailHistory prints the journal's events of --light from fromSeq, or
// those of the last since, then follows it live.
func (a *app) tailHistory(ctx context.Context, since time.Duration, fromSeq uint64) error {
	if since < 0 {
		return usageError{errors.New("--since must be a duration into the past, e.g. 1h")}
	}
	var nc *nats.Conn
	var err error
	filter := subject.AllEvents
	if a.light == "*" {
		nc, err = a.connect()
	} else if nc, err = a.open(ctx); err == nil {
		filter = subject.Events(a.light)
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		return err
	}
	var after time.Time
	if since > 0 {
		after = time.Now().Add(-since)
		if fromSeq, err = j.SeqAt(ctx, filter, after); err != nil {
			return err
		}
	}
	fmt.Fprintf(a.stderr, "lumen: %s from sequence %d, then live, on %s (Ctrl-C to stop)\n", filter, max(fromSeq, 1), a.where())
	var events describe.Events
	err = j.Follow(ctx, filter, fromSeq, func(m journal.Msg) error {
		if m.Time.Before(after) {
			return nil
		}
		if a.jsonOut {
			fmt.Fprintf(a.stdout, "%s\n", m.Data)
		} else {
			fmt.Fprintln(a.stdout, events.Event(m.Subject, m.Data))
		}
		return nil
	}, nil)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// watchLight connects and subscribes to the events of --light before a
// command acts, so that none of what follows is missed.
func (a *app) watchLight(ctx context.Context) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := a.open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return a.subscribe(nc, subject.Events(a.light))
}

// watchAll follows every running light: one subscription each, since a
// Pi of a house sends the hub only what names its own lights.
func (a *app) watchAll(ctx context.Context) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := a.connect()
	if err != nil {
		return nil, nil, err
	}
	running, err := a.client(nc).Discover(ctx)
	if err != nil || len(running) == 0 {
		nc.Close()
		return a.watch(subject.AllEvents)
	}
	ch := make(chan *nats.Msg, 1024)
	for _, r := range running {
		if _, err := nc.ChanSubscribe(subject.Events(r.Light), ch); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	return nc, ch, nc.Flush()
}

// watch connects and subscribes to the events matching filter. Closing
// the connection ends the subscription.
func (a *app) watch(filter string) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := a.connect()
	if err != nil {
		return nil, nil, err
	}
	return a.subscribe(nc, filter)
}

func (a *app) subscribe(nc *nats.Conn, filter string) (*nats.Conn, chan *nats.Msg, error) {
	ch := make(chan *nats.Msg, 1024)
	if _, err := nc.ChanSubscribe(filter, ch); err != nil {
		nc.Close()
		return nil, nil, err
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, ch, nil
}

// pastFlags are --seq and --at: a light as it was.
type pastFlags struct {
	seq uint64
	at  string
}

func (p *pastFlags) add(cmd *cobra.Command) {
	cmd.Flags().Uint64Var(&p.seq, "seq", 0, "as it was right after input `N` (an output's seq names its input)")
	cmd.Flags().StringVar(&p.at, "at", "", "as it was at `TIME`: 2026-11-25T08:00:00Z, HH:MM[:SS] (local time, today or yesterday if still to come) or 90m (ago)")
}

// request is the get request the flags ask for.
func (p *pastFlags) request() (messages.GetRequest, error) {
	q := messages.GetRequest{Seq: p.seq}
	if p.at == "" {
		return q, nil
	}
	if p.seq != 0 {
		return q, usageError{errors.New("give --seq or --at, not both")}
	}
	at, err := parseWhen(p.at, time.Now())
	if err != nil {
		return q, usageError{fmt.Errorf("--at: %w", err)}
	}
	q.At = &at
	return q, nil
}

// parseWhen reads a time: RFC 3339, HH:MM[:SS] in local time (today, or
// yesterday when that time is still to come today: the past is asked
// for), or a duration ago.
func parseWhen(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"15:04", "15:04:05"} {
		t, err := time.ParseInLocation(layout, s, now.Location())
		if err != nil {
			continue
		}
		y, m, d := now.Date()
		at := time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
		if at.After(now) {
			at = time.Date(y, m, d-1, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), now.Location())
		}
		return at, nil
	}
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("%q is no time: write 2026-11-25T08:00:00Z, HH:MM[:SS] in local time (21:14:40: today's, or yesterday's if still to come) or 90m (ago)", s)
}
