package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Connect connects to --server.
func (t *Term) Connect() (*nats.Conn, error) {
	nc, err := nats.Connect(t.Server, nats.Name("lumen-cli"), nats.Timeout(5*time.Second))
	if err != nil {
		return nil, fmt.Errorf("cannot reach NATS at %s (%v); is 'lumen up' running? set --server or NATS_URL", t.where(), err)
	}
	return nc, nil
}

// Request sends one command to --light and returns the reply body, or an
// error in the user's words.
func (t *Term) Request(ctx context.Context, verb string, body any) ([]byte, error) {
	nc, err := t.Open(ctx)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	return t.requestOn(ctx, nc, verb, body)
}

// requestOn is Request over an open connection.
func (t *Term) requestOn(ctx context.Context, nc *nats.Conn, verb string, body any) ([]byte, error) {
	return t.requestWithin(ctx, nc, verb, body, time.Duration(t.Timeout))
}

// requestWithin is requestOn with its own timeout.
func (t *Term) requestWithin(ctx context.Context, nc *nats.Conn, verb string, body any, timeout time.Duration) ([]byte, error) {
	b, err := wire.New(nc, wire.WithTimeout(timeout), wire.WithWho(messages.WhoCLI)).Request(ctx, t.Light, verb, body)
	return b, t.inWords(nc, verb, err, timeout)
}

// Call sends one typed request (send, e.g. wire.Light.History) to
// --light, its refusal in the user's words as Request's.
func Call[T any](ctx context.Context, t *Term, verb string, send func(wire.Light, context.Context) (T, error)) (T, error) {
	nc, err := t.Open(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	defer nc.Close()
	v, err := send(t.client(nc).Light(t.Light), ctx)
	return v, t.inWords(nc, verb, err, time.Duration(t.Timeout))
}

// inWords puts the error of a request of verb to --light in the user's
// words.
func (t *Term) inWords(nc *nats.Conn, verb string, err error, timeout time.Duration) error {
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

// Explain puts a wire error in the user's words.
func (t *Term) Explain(err error, timeout time.Duration) error {
	var we *wire.Error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wire.ErrNoLight):
		return fmt.Errorf("no light named %q is running at %s; start it with 'lumen up --light %s'", t.Light, t.where(), t.Light)
	case errors.Is(err, wire.ErrTimeout):
		return fmt.Errorf("light %q did not answer within %s", t.Light, timeout)
	case errors.As(err, &we):
		return fmt.Errorf("%s (code %d)", we.Msg, we.Code)
	}
	return err
}

// printValue prints a typed reply as --json prints a reply.
func (t *Term) printValue(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return t.PrintJSON(b)
}

// PrintJSON prints a JSON reply indented.
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

// Mutate sends a mutation and prints its reply.
func (t *Term) Mutate(ctx context.Context, verb string, body any) error {
	nc, err := t.openFor(ctx, true)
	if err != nil {
		return err
	}
	defer nc.Close()
	if t.Several != nil {
		return t.mutateAll(ctx, nc, verb, body)
	}
	b, err := t.requestOn(ctx, nc, verb, body)
	if err != nil {
		return err
	}
	return t.printReply(b)
}

// Get fetches a light's model.
func (t *Term) Get(ctx context.Context) (g messages.GetReply, err error) {
	return t.getAt(ctx, messages.GetRequest{})
}

// getAt is get at a past seq or time (q), or now (q empty).
func (t *Term) getAt(ctx context.Context, q messages.GetRequest) (messages.GetReply, error) {
	return Call(ctx, t, messages.VerbGet, func(l wire.Light, ctx context.Context) (messages.GetReply, error) { return l.GetAt(ctx, q) })
}

// printReply prints a mutation's reply for a person.
func (t *Term) printReply(b []byte) error {
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
		fmt.Fprintln(t.Stdout, describe.Changed(*r.Changes))
	}
	return nil
}

// Query sends verb to --light and decodes the reply into out; with --json
// it prints the reply as is instead, and raw is true.
func (t *Term) Query(ctx context.Context, verb string, body, out any) (raw bool, err error) {
	b, err := t.Request(ctx, verb, body)
	if err != nil {
		return false, err
	}
	return t.decodeReply(b, out)
}

// decodeReply prints a reply as is with --json (raw is true), or decodes
// it into out.
func (t *Term) decodeReply(b []byte, out any) (raw bool, err error) {
	if t.JSON {
		return true, t.PrintJSON(b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		return false, fmt.Errorf("unexpected reply: %.300s", b)
	}
	return false, nil
}

// followAgent prints the session's tool calls as they happen, until stop.
func (t *Term) followAgent(nc *nats.Conn, session string) (stop func(), err error) {
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
func (t *Term) printWebhooks(hooks []messages.WebhookGiven) {
	for _, h := range hooks {
		fmt.Fprintln(t.Stdout, describe.Webhook(h.Source, h.URL, h.Token))
	}
}
