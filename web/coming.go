package web

import "net/http"

// coming answers what is coming up for a light (issue 35: coming.go).
func (s *Server) coming(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "not yet")
}
