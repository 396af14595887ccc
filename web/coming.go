package web

import (
	"net/http"
	"time"

	"github.com/lumen-home/lumen/messages/describe"
)

// ComingReply answers GET /api/v1/lights/{light}/coming: what will
// happen to the light by itself, soonest first (describe.ComingUp), and
// the server's time it was read at, for the page's "in 4 min".
type ComingReply struct {
	OK    bool                `json:"ok"`
	Now   time.Time           `json:"now"`
	Items []describe.Upcoming `json:"items"`
}

// coming reads the light's get and says what is coming up: armed
// timers, schedules' next runs, the ends of temporary layers, data
// sources' next runs, a fade in progress.
func (s *Server) coming(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	g, err := s.wire.Light(light).Get(r.Context())
	if err != nil {
		s.refused(w, r, light, nil, err)
		return
	}
	now := time.Now()
	items := describe.ComingUp(g, now)
	if items == nil {
		items = []describe.Upcoming{}
	}
	writeJSON(w, http.StatusOK, ComingReply{OK: true, Now: now, Items: items})
}
