package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/redact"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

func (t *Term) Connect() (*nats.Conn, error) {
	nc, err := nats.Connect(t.Server, nats.Name("lumen-cli"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("cannot reach NATS at %s (%v); is 'lumen up' running? set --server or NATS_URL", t.Where(), err)
	}
	return nc, nil
}

// request sends one command to --light and returns the reply body, or an
// error in the user's words.
func (t *Term) Request(ctx context.Context, verb string, body any) ([]byte, error) {
	nc, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	return t.RequestOn(ctx, nc, verb, body)
}

// requestOn is request over an open connection.
func (t *Term) RequestOn(ctx context.Context, nc *nats.Conn, verb string, body any) ([]byte, error) {
	return t.RequestWithin(ctx, nc, verb, body, time.Duration(t.Timeout))
}

// requestWithin is requestOn with its own timeout.
func (t *Term) RequestWithin(ctx context.Context, nc *nats.Conn, verb string, body any, timeout time.Duration) ([]byte, error) {
	b, err := wire.New(nc, wire.WithTimeout(timeout), wire.WithWho(messages.WhoCLI)).Request(ctx, t.Light, verb, body)
	return b, t.InWords(nc, verb, err, timeout)
}

// call sends one typed request (send, e.g. wire.Light.History) to
// --light, its refusal in the user's words as request's.
func Call[T any](ctx context.Context, t *Term, verb string, send func(wire.Light, context.Context) (T, error)) (T, error) {
	nc, err := t.Open(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer nc.Close()
	v, err := send(t.Client(nc).Light(t.Light), ctx)
	return v, t.InWords(nc, verb, err, time.Duration(t.Timeout))
}

// inWords puts the error of a request of verb to --light in the user's
// words.
func (t *Term) InWords(nc *nats.Conn, verb string, err error, timeout time.Duration) error {
	if errors.Is(err, wire.ErrNoLight) {
		return t.noSuchLight(nc)
	}
	if we := (*wire.Error)(nil); errors.As(err, &we) {
		// The user ran a command, not a verb: drop the verb the light
		// names its refusal with, and name commands as they type them.
		err = &wire.Error{Code: we.Code, Msg: inCLIWords(strings.TrimPrefix(we.Msg, verb+": "))}
	}
	return t.Explain(err, timeout)
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
func (t *Term) Explain(err error, timeout time.Duration) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrNoLight):
		return fmt.Errorf("no light named %q is running at %s; start it with 'lumen up --light %s'", t.Light, t.Where(), t.Light)
	case errors.Is(err, wire.ErrTimeout):
		return fmt.Errorf("light %q did not answer within %s", t.Light, timeout)
	case errors.As(err, &we):
		return fmt.Errorf("%s (code %d)", we.Msg, we.Code)
	}
	return err
}

// printValue prints a typed reply as --json prints a reply.
func (t *Term) PrintValue(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.PrintJSON(b)
}

func (t *Term) PrintJSON(b []byte) error {
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		_, err = t.Stdout.Write(b)
		return err
	}
	out.WriteByte('\n')
	_, err := t.Stdout.Write(out.Bytes())
	return err
}

// mutate sends a mutation and prints its reply.
func (t *Term) Mutate(ctx context.Context, verb string, body any) error {
	nc, err := t.OpenFor(ctx, true)
	if err != nil {
		return err
	}
	defer nc.Close()
	if t.Several != nil {
		return t.mutateAll(ctx, nc, verb, body)
	}
	b, err := t.RequestOn(ctx, nc, verb, body)
	if err != nil {
		return err
	}
	return t.PrintReply(b)
}

// get fetches a light's model.
func (t *Term) Get(ctx context.Context) (g messages.GetReply, err error) {
	return t.GetAt(ctx, messages.GetRequest{})
}

// getAt is get at a past seq or time (q), or now (q empty).
func (t *Term) GetAt(ctx context.Context, q messages.GetRequest) (messages.GetReply, error) {
	return Call(ctx, t, messages.VerbGet, func(l wire.Light, ctx context.Context) (messages.GetReply, error) { return l.GetAt(ctx, q) })
}

// printReply prints a mutation's reply for a person.
func (t *Term) PrintReply(b []byte) error {
	if t.JSON {
		return t.PrintJSON(b)
	}
	var r messages.Reply
	if err := json.Unmarshal(b, &r); err != nil {
		return fmt.Errorf("unexpected reply: %s", b)
	}
	var d describe.Events
	for _, o := range r.Outputs {
		fmt.Fprintln(t.Stdout, d.Output(o))
	}
	if r.Changes != nil {
		fmt.Fprintf(t.Stdout, "changed: %s\n", r.Changes)
	}
	return nil
}

// request is the get request the flags ask for.
func (p *Past) Request() (messages.GetRequest, error) {
	q := messages.GetRequest{Seq: p.seq}
	if p.at == "" {
		return q, nil
	}
	if p.seq != 0 {
		return q, UsageError{Err: errors.New("give --seq or --at, not both")}
	}
	at, err := parseWhen(p.at, time.Now())
	if err != nil {
		return q, UsageError{Err: fmt.Errorf("--at: %w", err)}
	}
	q.At = &at
	return q, nil
}

// fleet is --light's name for every running light.
const fleet = "fleet"

// open connects and settles which light the command is for.
func (t *Term) Open(ctx context.Context) (*nats.Conn, error) {
	return t.OpenFor(ctx, false)
}

// openFor is open for a command that may go to several lights (many):
// then --light fleet and --group set t.Several.
func (t *Term) OpenFor(ctx context.Context, many bool) (*nats.Conn, error) {
	if !many && (t.Light == fleet || t.Group != "") {
		return nil, UsageError{Err: errors.New("this command answers for one light: give --light NAME ('lumen ls' lists them)")}
	}
	nc, err := t.Connect()
	if err != nil {
		return nil, err
	}
	if err := t.pick(ctx, nc); err != nil {
		nc.Close()
		return nil, err
	}
	return nc, nil
}

// pick settles t.Light, or t.Several for --light fleet and --group.
func (t *Term) pick(ctx context.Context, nc *nats.Conn) error {
	if t.Light == "" && t.Group == "" {
		t.Light = os.Getenv("LUMEN_LIGHT")
	}
	if strings.EqualFold(t.Light, fleet) {
		t.Light = fleet
	}
	if t.Light != "" && t.Light != fleet && t.Group == "" {
		name, err := subject.LightName(t.Light)
		if err != nil {
			return UsageError{Err: fmt.Errorf("--light: %w", err)}
		}
		t.Light = name
		return nil
	}
	running, err := t.Client(nc).Discover(ctx)
	if err != nil {
		return err
	}
	names := make([]string, 0, len(running))
	for _, r := range running {
		if t.Group == "" || slices.Contains(r.Groups, t.Group) {
			names = append(names, r.Light)
		}
	}
	switch {
	case t.Group != "" && t.Light != "":
		return UsageError{Err: errors.New("give --light or --group, not both")}
	case len(running) == 0:
		return t.NoLights(ctx, nc)
	case len(names) == 0:
		return fmt.Errorf("no running light is in group %q; the lights are %s ('lumen ls' shows their groups)", t.Group, lightNames(running))
	case t.Light == "" && t.Group == "" && len(names) > 1:
		return UsageError{Err: fmt.Errorf("%d lights are running (%s): say which with --light NAME (or $LUMEN_LIGHT), or --light fleet for all", len(names), strings.Join(names, ", "))}
	case t.Light == "" && t.Group == "":
		t.Light = names[0]
	default:
		t.Several = names
	}
	return nil
}

// noLights says why no light runs at --server: a hub whose Pis are away,
// or no lumen up.
func (t *Term) NoLights(ctx context.Context, nc *nats.Conn) error {
	js, _ := jetstream.New(nc) // nil: the sentence for a daemon
	return house.NoLights(ctx, js, t.Server)
}

// where is --server as a person may see it: without its password.
func (t *Term) Where() string { return redact.URLs(t.Server) }

func lightNames(running []wire.Running) string {
	names := make([]string, len(running))
	for i, r := range running {
		names[i] = r.Light
	}
	return strings.Join(names, ", ")
}

// noSuchLight puts the lights that do run into the error for one that
// does not.
func (t *Term) noSuchLight(nc *nats.Conn) error {
	msg := fmt.Sprintf("no light named %q is running at %s", t.Light, t.Where())
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if running, err := t.Client(nc).Discover(ctx); err == nil && len(running) > 0 {
		return fmt.Errorf("%s; the running lights are %s", msg, lightNames(running))
	}
	return fmt.Errorf("%s; start it with 'lumen up --light %s'", msg, t.Light)
}

func (t *Term) Client(nc *nats.Conn) *wire.Client {
	return wire.New(nc, wire.WithTimeout(time.Duration(t.Timeout)), wire.WithWho(messages.WhoCLI))
}

// mutateAll sends a mutation to t.Several and prints one line per light:
// what the light did last, or why it refused.
func (t *Term) mutateAll(ctx context.Context, nc *nats.Conn, verb string, body any) error {
	replies := t.Client(nc).RequestAll(ctx, t.Several, verb, body)
	w := tabwriter.NewWriter(t.Stdout, 0, 4, 2, ' ', 0)
	failed := 0
	for _, r := range replies {
		if r.Err != nil {
			failed++
			fmt.Fprintf(w, "%s\terror: %v\n", r.Light, t.Explain(r.Err, time.Duration(t.Timeout)))
			continue
		}
		line := "done"
		if rep, err := wire.As[messages.Reply](r); err == nil && len(rep.Outputs) > 0 {
			var d describe.Events
			for _, o := range rep.Outputs {
				line = d.Output(o)
			}
		}
		fmt.Fprintf(w, "%s\t%s\n", r.Light, line)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d lights refused %s", failed, len(replies), verb)
	}
	return nil
}

// unreachable says why a light of the house does not answer.
func Unreachable(l house.Absent) string {
	if l.Connected {
		return fmt.Sprintf("unreachable: not running on its Pi %s, which is connected", l.Pi)
	}
	return fmt.Sprintf("unreachable: its Pi %s is disconnected since %s", l.Pi, Ago(l.Since))
}

func Dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// query sends verb to --light and decodes the reply into out; with --json
// it prints the reply as is instead, and raw is true.
func (t *Term) Query(ctx context.Context, verb string, body, out any) (raw bool, err error) {
	b, err := t.Request(ctx, verb, body)
	if err != nil {
		return false, err
	}
	return t.DecodeReply(b, out)
}

// decodeReply prints a reply as is with --json (raw is true), or decodes
// it into out.
func (t *Term) DecodeReply(b []byte, out any) (raw bool, err error) {
	if t.JSON {
		return true, t.PrintJSON(b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return false, fmt.Errorf("unexpected reply: %.300s", b)
	}
	return false, nil
}

// followAgent prints the session's tool calls as they happen, until stop.
func (t *Term) FollowAgent(nc *nats.Conn, session string) (stop func(), err error) {
	sub, err := nc.Subscribe(subject.Out(t.Light, messages.OutAgent), func(m *nats.Msg) {
		if line := describe.AgentStep(m.Data, session); line != "" {
			fmt.Fprintln(t.Stdout, line)
		}
	})
	if err != nil {
		return nil, err
	}
	return func() { _ = sub.Unsubscribe() }, nil
}

// printWebhooks tells the person about the webhook sources the agent made:
// their tokens are shown this once, and kept nowhere.
func (t *Term) PrintWebhooks(hooks []messages.WebhookGiven) {
	for _, h := range hooks {
		url := h.URL
		if url == "" {
			url = "(no HTTP: start lumen up with --http HOST:PORT) /hooks/LIGHT/" + h.Source
		}
		fmt.Fprintf(t.Stdout, "webhook %s: POST %s with the header Authorization: Bearer %s\n", h.Source, url, h.Token)
		fmt.Fprintln(t.Stdout, "  (the token is shown this once and kept only as a hash: save it now)")
	}
}
