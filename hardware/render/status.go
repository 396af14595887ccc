package render

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/lumen-home/lumen/hardware"
)

// Status keeps one line of a terminal showing each light's LED, as the
// simulator's display (lumen up on a terminal).
type Status struct {
	mu    sync.Mutex
	w     io.Writer
	order []string
	shown map[string]string
}

// NewStatus returns the status line of lights on w; nil, which shows
// nothing, unless w is a terminal.
func NewStatus(w io.Writer, lights []string) *Status {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &Status{w: w, order: lights, shown: map[string]string{}}
}

// Show shows light in state with its raw first frame.
func (s *Status) Show(light, state string, raw []hardware.RGB) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown[light] = ANSI(raw) + " " + light + ": " + state
	line := "\r\x1b[K"
	for _, l := range s.order {
		if v, ok := s.shown[l]; ok {
			line += v + "   "
		}
	}
	fmt.Fprint(s.w, line)
}
