package web

import (
	"context"
	"embed"
	"html/template"
	"io/fs"
	"net/http"
	"time"
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

// page is the page, rendered with every light's name, state and color
// already in it: useful before any script runs, and to tools that only
// read HTML. Its script then makes it live.
func (s *Server) page(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	lights, err := s.listLights(ctx)
	if err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	if err := pageTmpl.Execute(w, struct{ Lights []LightInfo }{lights}); err != nil {
		s.cfg.Logf("http: page: %v", err)
	}
}
