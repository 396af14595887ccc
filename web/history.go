package web

import "net/http"

// diff answers a configuration change as a diff (issue 35: history.go).
func (s *Server) diff(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "not yet")
}
