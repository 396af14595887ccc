package web

import (
	"errors"
	"fmt"
	"net/http"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// A light's configuration as a person edits it: the YAML of `lumen
// export`, read with GET and applied with PUT, like `lumen export` and
// `lumen apply -f`. A mistake is answered with the line it is at.

// ConfigError is a refusal of a configuration, with the line of the
// text it points at (0: none).
type ConfigError struct {
	OK    bool   `json:"ok"`
	Code  int    `json:"code"`
	Error string `json:"error"`
	Line  int    `json:"line,omitempty"`
}

func (s *Server) getConfig(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	g, err := s.wire.Light(light).Get(r.Context())
	if err != nil {
		s.refused(w, r, light, nil, err)
		return
	}
	out, err := messages.ToYAML(g.Config())
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/yaml; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	_, _ = w.Write(out)
}

// putConfig applies a YAML (or JSON) configuration; ?dry_run=1 checks
// it and says what would change; ?replace_all=1 lets it empty the light.
func (s *Server) putConfig(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	raw, ok := readBody(w, r, maxBody)
	if !ok {
		return
	}
	body, err := messages.ToJSON(raw, "")
	if err != nil {
		e := ConfigError{Code: http.StatusBadRequest, Error: err.Error()}
		var se *messages.SourceError
		if errors.As(err, &se) {
			e.Error, e.Line = se.Msg, se.Line
		}
		writeJSON(w, e.Code, e)
		return
	}
	for key, flag := range map[string]string{"dry_run": "dry_run", "confirm_empty": "replace_all"} {
		if v := r.URL.Query().Get(flag); v == "1" || v == "true" {
			body = messages.WithTrue(body, key)
		}
	}
	reply, err := s.wire.RequestMsg(r.Context(), light, messages.VerbApply, &nats.Msg{Data: body})
	if err != nil {
		s.refused(w, r, light, raw, err)
		return
	}
	writeRaw(w, http.StatusOK, reply)
}

// refused answers a failed request to light; a refusal that names a
// field of raw (rules[2].priority) gets the line of raw it is on.
func (s *Server) refused(w http.ResponseWriter, r *http.Request, light string, raw []byte, err error) {
	var refusal *wire.Error
	switch {
	case errors.As(err, &refusal):
		e := ConfigError{Code: wireStatus(refusal.Code), Error: refusal.Msg}
		if raw != nil {
			e.Line = messages.Line(raw, refusal.Msg)
		}
		writeJSON(w, e.Code, e)
	case errors.Is(err, wire.ErrNoLight):
		s.noLight(w, r, light)
	case errors.Is(err, wire.ErrTimeout):
		writeError(w, http.StatusGatewayTimeout, fmt.Sprintf("light %s did not answer in time", light))
	default:
		writeError(w, http.StatusInternalServerError, err.Error())
	}
}
