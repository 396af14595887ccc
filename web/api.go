package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// LightInfo is one light in GET /api/v1/lights.
type LightInfo struct {
	Light string         `json:"light"`
	State string         `json:"state"`
	Color messages.Pixel `json:"color"` // the color of the LED's first pixel, before gamma and the brightness cap
}

// LightsReply answers GET /api/v1/lights.
type LightsReply struct {
	OK     bool        `json:"ok"`
	Lights []LightInfo `json:"lights"`
}

// listLights finds every light that answers and asks each what its LED
// shows.
func (s *Server) listLights(ctx context.Context) ([]LightInfo, error) {
	names, err := s.lightNames(ctx)
	if err != nil {
		return nil, err
	}
	return s.lightsOf(ctx, names), nil
}

// lightsOf asks each of names what its LED shows.
func (s *Server) lightsOf(ctx context.Context, names []string) []LightInfo {
	out := make([]LightInfo, 0, len(names))
	for _, r := range s.wire.RequestAll(ctx, names, messages.VerbLED, nil) {
		info := LightInfo{Light: r.Light}
		if led, err := wire.As[messages.LEDReply](r); err == nil {
			info.State = led.State
			if len(led.Raw) > 0 {
				info.Color = led.Raw[0]
			}
		}
		out = append(out, info)
	}
	return out
}

// lightNames are the configured lights, or those that answer discovery.
func (s *Server) lightNames(ctx context.Context) ([]string, error) {
	if s.cfg.Lights != nil {
		return s.cfg.Lights, nil
	}
	running, err := s.wire.Discover(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(running))
	for i, r := range running {
		names[i] = r.Light
	}
	return names, nil
}

func (s *Server) lights(w http.ResponseWriter, r *http.Request) {
	ls, err := s.listLights(r.Context())
	if err != nil {
		writeError(w, http.StatusInternalServerError, "find the lights: "+err.Error())
		return
	}
	writeJSON(w, http.StatusOK, LightsReply{OK: true, Lights: ls})
}

// command sends the body to the light's verb and answers exactly what
// the light replied, with its wire code as the HTTP status.
func (s *Server) command(w http.ResponseWriter, r *http.Request) {
	verb := r.PathValue("verb")
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	if subject.ValidLight(verb) != nil { // one token: no other subject is reachable
		writeError(w, http.StatusNotFound, fmt.Sprintf("unknown command %q; a light takes %s", verb, strings.Join(messages.Verbs(), ", ")))
		return
	}
	limit := int64(maxBody)
	if verb == messages.VerbTalk {
		limit = maxAudio
	}
	body, ok := readBody(w, r, limit)
	if !ok {
		return
	}
	m := &nats.Msg{Data: body, Header: nats.Header{}}
	// Who asks: the caller's Lumen-Who when it is one, else http (the
	// client's own).
	if v := messages.CleanWho(r.Header.Get(messages.HeaderWho)); v != "" {
		m.Header.Set(messages.HeaderWho, v)
	}
	if verb == messages.VerbTalk {
		if v := r.Header.Get(messages.HeaderSession); v != "" {
			m.Header.Set(messages.HeaderSession, v)
		}
	} else if len(body) == 0 {
		// Bodies are JSON whatever the Content-Type; none is {}.
		m.Data = []byte("{}")
	}
	within := answerWithin
	if v, _ := messages.LookupVerb(verb); v.Slow {
		// The agent thinks, a replay reads the journal: past the server's
		// write deadline, extended for this answer.
		within = slowAnswerWithin
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(within + 5*time.Second))
	}
	ctx, cancel := context.WithTimeout(r.Context(), within)
	defer cancel()
	reply, err := s.wire.RequestMsg(ctx, light, verb, m)
	var refusal *wire.Error
	switch {
	case err == nil:
		writeRaw(w, http.StatusOK, reply)
	case errors.As(err, &refusal):
		code := wireStatus(refusal.Code)
		if len(reply) == 0 || !json.Valid(reply) {
			writeError(w, code, refusal.Msg)
			return
		}
		writeRaw(w, code, reply)
	case errors.Is(err, wire.ErrNoLight):
		s.noLight(w, r, light)
	case errors.Is(err, wire.ErrTimeout):
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("light %s did not answer %s in time", light, verb))
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}

// wireStatus is a refusal's wire code as an HTTP status: 500 for one that
// is no error status.
func wireStatus(code int) int {
	if code < 400 || code > 599 {
		return http.StatusInternalServerError
	}
	return code
}

// answerWithin bounds a request to a light below the server's write
// deadline (30 s), so that a light that does not answer gets a 504, not
// a closed connection.
const answerWithin = 25 * time.Second

// slowAnswerWithin bounds a slow verb's request (messages.Verb.Slow).
const slowAnswerWithin = 3 * time.Minute

// readBody reads a request's body of at most limit bytes; past it, or
// when it cannot be read, it answers the error and returns false.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("the body is larger than %d bytes", limit))
		return nil, false
	case err != nil:
		writeError(w, http.StatusBadRequest, "read the body: "+err.Error())
		return nil, false
	}
	return body, true
}

// noLight answers 404 for a light that does not run, naming those that do.
func (s *Server) noLight(w http.ResponseWriter, r *http.Request, light string) {
	s.noLightBecause(w, r, fmt.Sprintf("no light named %q runs here", light))
}

// pathLight is the light the request's path names, as a person may type
// it (Kitchen is kitchen: subject.LightName); a name no light can have is
// answered 404, with the name to use when there is one.
func (s *Server) pathLight(w http.ResponseWriter, r *http.Request) (string, bool) {
	light, err := subject.LightName(r.PathValue("light"))
	if err != nil {
		s.noLightBecause(w, r, err.Error())
		return "", false
	}
	return light, true
}

// noLightBecause answers 404 with msg and the lights that do run.
func (s *Server) noLightBecause(w http.ResponseWriter, r *http.Request, msg string) {
	ctx, cancel := context.WithTimeout(r.Context(), 3*time.Second)
	defer cancel()
	names, _ := s.lightNames(ctx)
	names = slices.Clone(names)
	if len(names) > 0 {
		slices.Sort(names)
		msg += "; the lights are " + strings.Join(names, ", ")
	}
	writeError(w, http.StatusNotFound, msg)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		code, b = http.StatusInternalServerError, []byte(`{"ok":false,"code":500,"error":"encode the reply"}`)
	}
	writeRaw(w, code, b)
}

func writeRaw(w http.ResponseWriter, code int, b []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_, _ = w.Write(b)
	_, _ = w.Write([]byte("\n"))
}

// writeError answers the wire's error body with code as the status.
func writeError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, messages.ErrorReply{Code: code, Error: msg})
}
