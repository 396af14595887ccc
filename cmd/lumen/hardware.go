package main

import (
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
)

// statusLine keeps one line of the terminal showing each light's color.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	order []string
	shown map[string]string
}

// newStatusLine returns nil unless w is a terminal.
func newStatusLine(w io.Writer, lights []string) *statusLine {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &statusLine{w: w, order: lights, shown: map[string]string{}}
}

func (s *statusLine) show(light, state string, raw []hardware.RGB) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown[light] = render.ANSI(raw) + " " + light + ": " + state
	line := "\r\x1b[K"
	for _, l := range s.order {
		if v, ok := s.shown[l]; ok {
			line += v + "   "
		}
	}
	fmt.Fprint(s.w, line)
}
