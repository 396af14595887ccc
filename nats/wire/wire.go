// Package wire is the one client of Lumen's wire contract, and the reply
// side of it: a command is a NATS request on lumen.<light>.cmd.<verb>
// with a JSON body, answered with JSON or with the micro error headers
// (Nats-Service-Error-Code, Nats-Service-Error) and the body
// {"ok":false,"code":N,"error":"…"}.
//
// Everything that talks to a light — the lumen CLI, the hardware, source
// and tool actors, the agent — sends through a Client; a refusal comes
// back as an *Error carrying the code and the light's sentence. The
// services answer through Respond and RespondError, so both ends of the
// contract live here.
package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// Error is a light's refusal of a command: the wire code (400 bad input,
// 404 unknown thing, 409 conflict, 413 too large, 500 internal, 503 the
// light is still starting, 507 storage full) and the sentence that says what to do.
type Error struct {
	Code int
	Msg  string
}

func (e *Error) Error() string { return e.Msg }

var (
	// ErrNoLight means nothing answers the light's verb: no such light
	// runs (NATS has no responders for it).
	ErrNoLight = errors.New("wire: no light answers")
	// ErrTimeout means the light did not answer in time.
	ErrTimeout = errors.New("wire: no answer in time")
)

// DefaultTimeout bounds a request whose context has no deadline.
const DefaultTimeout = 30 * time.Second

// Client sends commands to lights. It is safe for concurrent use.
type Client struct {
	nc      *nats.Conn
	timeout time.Duration
	who     string // the Lumen-Who header of its requests (WithWho)
}

// Option configures a Client.
type Option func(*Client)

// WithTimeout bounds each request whose context has no deadline (default
// DefaultTimeout).
func WithTimeout(d time.Duration) Option {
	return func(c *Client) {
		if d > 0 {
			c.timeout = d
		}
	}
}

// WithWho names the door the client's requests come through (a
// messages.Who* value): the light journals it as each input's by. A
// context made by AsWho overrides it for one request.
func WithWho(who string) Option {
	return func(c *Client) { c.who = who }
}

type whoKey struct{}

// AsWho returns a context whose requests name who as who asks, for a
// door whose every request is someone else (an agent's steps).
func AsWho(ctx context.Context, who string) context.Context {
	return context.WithValue(ctx, whoKey{}, who)
}

// New returns a client over nc.
func New(nc *nats.Conn, opts ...Option) *Client {
	c := &Client{nc: nc, timeout: DefaultTimeout}
	for _, o := range opts {
		o(c)
	}
	return c
}

// Conn is the client's connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Timeout is how long a request without a deadline waits.
func (c *Client) Timeout() time.Duration { return c.timeout }

// Request sends body to light's verb and returns the body of a success.
// body is sent as is when it is []byte or json.RawMessage, else encoded
// as JSON. A refusal is an *Error; no light is ErrNoLight, no answer in
// time ErrTimeout.
func (c *Client) Request(ctx context.Context, light, verb string, body any) ([]byte, error) {
	data, err := encode(body)
	if err != nil {
		return nil, fmt.Errorf("wire: %s: %w", verb, err)
	}
	return c.RequestMsg(ctx, light, verb, &nats.Msg{Data: data})
}

// Call is Request, decoding a success into out (nil: not decoded).
func (c *Client) Call(ctx context.Context, light, verb string, body, out any) error {
	b, err := c.Request(ctx, light, verb, body)
	if err != nil {
		return err
	}
	return decode(verb, b, out)
}

// RequestMsg sends a prepared request (raw body, headers) to light's
// verb, and returns the body of a success, as Request does.
func (c *Client) RequestMsg(ctx context.Context, light, verb string, m *nats.Msg) ([]byte, error) {
	m.Subject = subject.Cmd(light, verb)
	return c.requestOn(ctx, m)
}

// HouseRequest asks the house's hub for an everyday verb of light, a
// light of another Pi (subject.HouseCmd), and returns the body of a
// success, as Request does.
func (c *Client) HouseRequest(ctx context.Context, light, verb string, body []byte) ([]byte, error) {
	return c.requestOn(ctx, &nats.Msg{Subject: subject.HouseCmd(light, verb), Data: body})
}

// requestOn sends m on its subject, with who asks (the context's, else
// the client's), and returns the body of a success.
func (c *Client) requestOn(ctx context.Context, m *nats.Msg) ([]byte, error) {
	who, _ := ctx.Value(whoKey{}).(string)
	if who == "" {
		who = c.who
	}
	if who != "" && m.Header.Get(messages.HeaderWho) == "" {
		if m.Header == nil {
			m.Header = nats.Header{}
		}
		m.Header.Set(messages.HeaderWho, who)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	reply, err := c.nc.RequestMsgWithContext(ctx, m)
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return nil, fmt.Errorf("%w on %s", ErrNoLight, m.Subject)
	case errors.Is(err, context.DeadlineExceeded) || errors.Is(err, nats.ErrTimeout):
		return nil, fmt.Errorf("%w on %s", ErrTimeout, m.Subject)
	case err != nil:
		return nil, fmt.Errorf("wire: %s: %w", m.Subject, err)
	}
	if err := Refusal(reply); err != nil {
		return reply.Data, err
	}
	return reply.Data, nil
}

// Refusal returns the *Error a reply carries, or nil for a success: the
// micro error headers, or a body {"ok":false,…}.
func Refusal(reply *nats.Msg) error {
	if code := reply.Header.Get(micro.ErrorCodeHeader); code != "" {
		n, _ := strconv.Atoi(code)
		return &Error{Code: n, Msg: reply.Header.Get(micro.ErrorHeader)}
	}
	var status messages.ErrorReply
	if json.Unmarshal(reply.Data, &status) == nil && !status.OK && status.Error != "" {
		return &Error{Code: status.Code, Msg: status.Error}
	}
	return nil
}

// Retry says how CallRetry tries again.
type Retry struct {
	// Attempts is how many tries at most (0: until ctx ends).
	Attempts int
	// Each bounds one try (default 5 s).
	Each time.Duration
	// Logf, when set, is told once, at the fourth failed try, as who.
	Logf func(format string, args ...any)
	Who  string
}

// CallRetry is Call, tried again while the light does not answer or fails
// inside (a 500): at start-up it may not serve yet. A refusal of the
// request itself (4xx) is returned at once. Tries back off from 100 ms to
// 1 s.
func (c *Client) CallRetry(ctx context.Context, light, verb string, body, out any, r Retry) error {
	each := r.Each
	if each <= 0 {
		each = 5 * time.Second
	}
	var err error
	for attempt := 0; r.Attempts == 0 || attempt < r.Attempts; attempt++ {
		actx, cancel := context.WithTimeout(ctx, each)
		err = c.Call(actx, light, verb, body, out)
		cancel()
		var we *Error
		switch {
		case err == nil:
			return nil
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, nats.ErrConnectionClosed), errors.As(err, &we) && we.Code < 500:
			return err
		}
		if attempt == 3 && r.Logf != nil {
			r.Logf("%s: cannot read light %s's %s yet (%v); retrying", r.Who, light, verb, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Duration(min(attempt+1, 10)) * 100 * time.Millisecond):
		}
	}
	return fmt.Errorf("wire: light %s did not answer %s: %w", light, verb, err)
}

// Light is a client bound to one light.
type Light struct {
	c    *Client
	name string
}

// Light binds the client to light name.
func (c *Client) Light(name string) Light { return Light{c: c, name: name} }

// Name is the light's name.
func (l Light) Name() string { return l.name }

// Command sends one command and returns the body of a success, as
// Request does.
func (l Light) Command(ctx context.Context, verb string, body []byte) ([]byte, error) {
	return l.c.Request(ctx, l.name, verb, body)
}

func encode(body any) ([]byte, error) {
	switch b := body.(type) {
	case nil:
		return []byte(`{}`), nil
	case []byte:
		return b, nil
	case json.RawMessage:
		return b, nil
	}
	return json.Marshal(body)
}

func decode(verb string, b []byte, out any) error {
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("wire: %s: unexpected reply %.300s: %w", verb, b, err)
	}
	return nil
}

// Respond answers a request with v: an *Error or a *messages.ErrorReply
// becomes the documented micro error, anything else is sent as JSON.
func Respond(req micro.Request, v any) {
	switch r := v.(type) {
	case *Error:
		RespondError(req, r.Code, r.Msg)
	case *messages.ErrorReply:
		RespondError(req, r.Code, r.Error)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			RespondError(req, 500, "encode the reply: "+err.Error())
			return
		}
		_ = req.Respond(b)
	}
}

// RespondError answers with the documented error headers and body. It
// sets the headers itself rather than through micro's Error, which
// records the error for the endpoint's stats in a field the service
// reads when the handler returns: the actors answer later, from another
// goroutine, and the two raced.
func RespondError(req micro.Request, code int, msg string) {
	b, _ := json.Marshal(messages.ErrorReply{OK: false, Code: code, Error: msg})
	_ = req.Respond(b, micro.WithHeaders(micro.Headers{micro.ErrorHeader: {msg}, micro.ErrorCodeHeader: {strconv.Itoa(code)}}))
}

// ReplyError answers a request received without a micro service as
// RespondError does.
func ReplyError(m *nats.Msg, code int, msg string) error {
	b, _ := json.Marshal(messages.ErrorReply{OK: false, Code: code, Error: msg})
	r := nats.NewMsg(m.Reply)
	r.Header.Set(micro.ErrorCodeHeader, strconv.Itoa(code))
	r.Header.Set(micro.ErrorHeader, msg)
	r.Data = b
	return m.RespondMsg(r)
}

// Bounded answers a request whose body is longer than max bytes with a
// 413 that names the limit, and hands the others to h: a command is
// words, not a file, and what a light journals stays small.
func Bounded(verb string, max int, h micro.HandlerFunc) micro.HandlerFunc {
	return func(req micro.Request) {
		if n := len(req.Data()); n > max {
			RespondError(req, 413, fmt.Sprintf("%s: the request is %d bytes; a request is at most %d bytes", verb, n, max))
			return
		}
		h(req)
	}
}
