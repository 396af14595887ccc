package source

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// Hook asks a light's manager to take a webhook request's body. It
// answers a *HookReply.
type Hook struct {
	Source      string
	ContentType string
	Body        []byte
	// Token is the token the request presented, empty when none.
	Token string
	// DaemonAuth tells whether the daemon has credentials, CredsOK
	// whether the request presented them (HTTP basic auth).
	DaemonAuth, CredsOK bool
}

// HookReply is the answer to a Hook: an HTTP status and, for an error, a
// sentence that says what to do.
type HookReply struct {
	Code   int
	Error  string
	Queued int // messages of the source waiting, this one included
}

// hook checks a webhook request against its source and queues its result.
// Everything that can never be stored (a refused token, a body that is no
// result or lacks a stored path) is refused here, to the sender, without
// an error event: it reached nothing. The manager answers for a source
// that does not exist or is no webhook.
func (c *child) hook(ctx actor.Context, h *Hook) *HookReply {
	if !datasource.Authorized(c.def, h.Token, h.DaemonAuth, h.CredsOK) {
		what := "the daemon's user and password (basic auth)"
		if c.def.TokenSHA256 != "" {
			what = "the source's token (Authorization: Bearer TOKEN, or X-Lumen-Token: TOKEN)"
		}
		return &HookReply{Code: http.StatusUnauthorized, Error: fmt.Sprintf("source %s needs %s", h.Source, what)}
	}
	result, err := datasource.HookResult(c.def, h.ContentType, h.Body)
	if err == nil {
		err = datasource.CheckResult(c.def, result)
	}
	if err != nil {
		// A message that can never be stored: a failed run, as a nats
		// source's would be.
		c.cfg.Meter.SourceRun(c.def.Name, true)
		code := http.StatusBadRequest
		if len(h.Body) > datasource.MaxPushBytes {
			code = http.StatusRequestEntityTooLarge
		}
		return &HookReply{Code: code, Error: sentence(err)}
	}
	if len(c.queue) >= maxQueue {
		return &HookReply{Code: http.StatusTooManyRequests, Error: fmt.Sprintf("source %s has %d messages waiting to be stored; send less often and retry", h.Source, maxQueue)}
	}
	c.queue = append(c.queue, queued{result: result})
	n := len(c.queue)
	if c.running {
		n++
	}
	c.pump(ctx)
	return &HookReply{Code: http.StatusAccepted, Queued: n}
}

// requester is the part of the actor system Hooks needs.
type requester interface {
	RequestFuture(pid *actor.PID, message any, timeout time.Duration) *actor.Future
}

// Hooks serves the webhooks of every light: POST /hooks/<light>/<source>
// with the message as its body (JSON, or text that becomes {"text":…}),
// at most 64 KiB. It answers 202 once the message is queued to be stored
// and fired, as a nats source's message would be; 400 for a body that is
// no result, 401 without the token or credentials the source needs, 404
// for an unknown light or source, 405 for another method, 413 for a body
// over 64 KiB, 429 when too many wait, 503 when the light's sources do
// not answer. Every reply is {"ok":…} JSON, like the NATS replies.
type Hooks struct {
	// Timeout bounds the wait for a light's manager (default 10 s).
	Timeout time.Duration

	root     requester
	user     string
	password string

	mu       sync.RWMutex
	managers map[string]hookRoute
}

type hookRoute struct {
	manager *actor.PID
	sync    func(context.Context) error // nil: none
}

// NewHooks returns the handler. user and password, when set, are the
// daemon's credentials, which a request to a source without a token
// must present.
func NewHooks(root requester, user, password string) *Hooks {
	return &Hooks{Timeout: 10 * time.Second, root: root, user: user, password: password, managers: map[string]hookRoute{}}
}

// Add routes the webhooks of light to its source manager. sync, when not
// nil, is called before each request is handed over, and returns once
// the manager's Config.Changes counts every change the light answered
// before the request came (wire.Changes.Sync): a POST right after
// create_source then finds the source.
func (h *Hooks) Add(light string, manager *actor.PID, sync func(context.Context) error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.managers[light] = hookRoute{manager: manager, sync: sync}
}

type hookBody struct {
	OK     bool   `json:"ok"`
	Code   int    `json:"code,omitempty"`
	Error  string `json:"error,omitempty"`
	Queued int    `json:"queued,omitempty"`
}

func writeHook(w http.ResponseWriter, code int, body hookBody) {
	body.OK = code < 300
	if !body.OK {
		body.Code = code
	}
	b, _ := json.Marshal(body)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(append(b, '\n'))
}

// ServeHTTP handles one webhook request.
func (h *Hooks) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	light, name, ok := datasource.ParseHookPath(r.URL.Path)
	if !ok {
		writeHook(w, http.StatusNotFound, hookBody{Error: "no such path; post to " + datasource.HookPath("LIGHT", "SOURCE")})
		return
	}
	h.mu.RLock()
	route := h.managers[light]
	h.mu.RUnlock()
	if route.manager == nil {
		writeHook(w, http.StatusNotFound, hookBody{Error: fmt.Sprintf("no light %s runs here", light)})
		return
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeHook(w, http.StatusMethodNotAllowed, hookBody{Error: "send the message with POST"})
		return
	}
	if r.ContentLength > datasource.MaxPushBytes {
		writeHook(w, http.StatusRequestEntityTooLarge, hookBody{Error: fmt.Sprintf("a body of %d bytes is larger than %d; send a smaller JSON object with only the values to store", r.ContentLength, datasource.MaxPushBytes)})
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, datasource.MaxPushBytes))
	if err != nil {
		if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
			writeHook(w, http.StatusRequestEntityTooLarge, hookBody{Error: fmt.Sprintf("the body is larger than %d bytes; send a smaller JSON object with only the values to store", datasource.MaxPushBytes)})
			return
		}
		writeHook(w, http.StatusBadRequest, hookBody{Error: "read the body: " + err.Error()})
		return
	}
	msg := &Hook{Source: name, ContentType: r.Header.Get("Content-Type"), Body: body, Token: token(r), DaemonAuth: h.user != ""}
	if u, p, ok := r.BasicAuth(); ok && h.user != "" {
		msg.CredsOK = equal(u, h.user) && equal(p, h.password)
	}
	if route.sync != nil {
		ctx, cancel := context.WithTimeout(r.Context(), h.Timeout)
		err := route.sync(ctx)
		cancel()
		if err != nil {
			writeHook(w, http.StatusServiceUnavailable, hookBody{Error: fmt.Sprintf("the sources of light %s did not answer (%v); retry", light, err)})
			return
		}
	}
	res, err := h.root.RequestFuture(route.manager, msg, h.Timeout).Result()
	rep, ok := res.(*HookReply)
	if err != nil || !ok {
		writeHook(w, http.StatusServiceUnavailable, hookBody{Error: fmt.Sprintf("the sources of light %s did not answer (%v); retry", light, err)})
		return
	}
	if rep.Code == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lumen"`)
	}
	writeHook(w, rep.Code, hookBody{Error: rep.Error, Queued: rep.Queued})
}

// token is the token a request presents: Authorization: Bearer TOKEN
// (the scheme in any case, RFC 7235), or X-Lumen-Token: TOKEN for senders
// that cannot set Authorization.
func token(r *http.Request) string {
	if t := r.Header.Get("X-Lumen-Token"); t != "" {
		return t
	}
	scheme, t, ok := strings.Cut(strings.TrimSpace(r.Header.Get("Authorization")), " ")
	if ok && strings.EqualFold(scheme, "Bearer") {
		return strings.TrimSpace(t)
	}
	return ""
}

func equal(a, b string) bool { return subtle.ConstantTimeCompare([]byte(a), []byte(b)) == 1 }
