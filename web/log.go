package web

import "net/http"

// allLog and lightLog answer the event log in words (issue 35: log.go).
func (s *Server) allLog(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "not yet")
}

func (s *Server) lightLog(w http.ResponseWriter, r *http.Request) {
	writeError(w, http.StatusNotImplemented, "not yet")
}
