package web

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

//go:embed static
var static embed.FS

//go:embed page.html
var pageHTML string

var pageTmpl = template.Must(template.New("page").Parse(pageHTML))

// staticFiles serves the page's script and style, embedded in the binary
// (no CDN: the page works on a Pi with no Internet).
func staticFiles() http.Handler {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree always has it
	}
	return http.StripPrefix("/static/", http.FileServerFS(sub))
}

// pageLight is a light as the page renders it: its LED, and whether its
// agent has a model (without one the page offers everyday commands only,
// and says how to configure one).
type pageLight struct {
	LightInfo
	Agent bool
}

// page is the page, rendered with every light's name, state and color
// already in it: useful before any script runs, and to tools that only
// read HTML. Its script then makes it live.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	lights, err := s.pageLights(ctx)
	if err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTmpl.Execute(w, struct{ Lights []pageLight }{lights}); err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
}

// pageLights asks every light for its LED and its agent at once (one
// round trip, not two, before the page's first byte).
func (s *Server) pageLights(ctx context.Context) ([]pageLight, error) {
	names, err := s.lightNames(ctx)
	if err != nil {
		return nil, err
	}
	var sessions []wire.Reply
	done := make(chan struct{})
	go func() {
		defer close(done)
		sessions = s.wire.RequestAll(ctx, names, messages.VerbSessions, nil)
	}()
	leds := s.lightsOf(ctx, names)
	<-done
	out := make([]pageLight, len(leds))
	for i, l := range leds {
		// A light whose agent did not answer keeps the full chat: the
		// page hides nothing on a guess.
		out[i] = pageLight{LightInfo: l, Agent: true}
		if a, err := wire.As[messages.SessionsReply](sessions[i]); err == nil {
			out[i].Agent = a.Agent
		}
	}
	return out, nil
}
