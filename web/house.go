package web

import (
	"context"
	"net/http"

	"github.com/lumen-home/lumen/messages"
)

// House is the house's directory, which the door of a hub has (lumen hub
// --http): every light of the house with its Pi, room, groups, whether
// it answers and its Pi's page.
type House interface {
	Lights(ctx context.Context) ([]messages.HouseLight, error)
}

// house answers GET /api/v1/house: the directory, as a Pi's
// lumen.sys.house.lights is answered. A Pi's door has no house.
func (s *Server) house(w http.ResponseWriter, r *http.Request) {
	if s.cfg.House == nil {
		writeError(w, http.StatusNotFound, "no house here: this is one daemon's door; the house's page and API are at its hub (lumen hub --http)")
		return
	}
	lights, err := s.cfg.House.Lights(r.Context())
	if err != nil {
		writeError(w, http.StatusServiceUnavailable, err.Error())
		return
	}
	writeJSON(w, http.StatusOK, messages.HouseLightsReply{OK: true, Lights: lights})
}
