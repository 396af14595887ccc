package web

import (
	"net/http"
	"strconv"
	"time"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

// PreviewReply answers GET /api/v1/lights/{light}/states/{state}/preview:
// the state's frames, rendered without applying it (as `lumen preview`
// does), ms apart, one pixel each, before gamma and the brightness cap.
type PreviewReply struct {
	OK     bool               `json:"ok"`
	State  string             `json:"state"`
	MS     int                `json:"ms"`
	Frames [][]messages.Pixel `json:"frames"`
	Error  string             `json:"error,omitempty"` // an expression that fails, with the frames it left
}

// previewFrames is how many frames a preview has unless ?frames= says.
const previewFrames = 30

func (s *Server) preview(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("state")
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	frames := previewFrames
	if v := r.URL.Query().Get("frames"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil {
			writeError(w, http.StatusBadRequest, "frames="+v+" is not a number of frames")
			return
		}
		frames = n
	}
	g, err := s.wire.Light(light).Get(r.Context())
	if err != nil {
		s.refused(w, r, light, nil, err)
		return
	}
	for _, st := range g.States {
		if st.Name != name {
			continue
		}
		out, err := render.Preview(st, g.Functions, render.Options{Pixels: 1}, frames, 0)
		if err != nil && len(out) == 0 {
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
		rep := PreviewReply{OK: true, State: name, MS: int(render.PreviewPeriod(st) / time.Millisecond)}
		for _, f := range out {
			px := make([]messages.Pixel, len(f))
			for i, c := range f {
				px[i] = messages.Pixel(c)
			}
			rep.Frames = append(rep.Frames, px)
		}
		if err != nil {
			rep.Error = err.Error()
		}
		writeJSON(w, http.StatusOK, rep)
		return
	}
	writeError(w, http.StatusNotFound, "light "+light+" has no state "+strconv.Quote(name))
}
