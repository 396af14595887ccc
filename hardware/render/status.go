package render

import (
	"fmt"
	"io"
	"os"
	"strings"
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
	if !Terminal(w) {
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

// Terminal reports whether w is a terminal, where colors may be drawn
// with ANSI escapes; a pipe or a file gets none.
func Terminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// FrameLine is a frame for a person: colored blocks when color (a
// terminal), with the numbers of a lone pixel; else each pixel's
// numbers.
func FrameLine(f []hardware.RGB, color bool) string {
	var b strings.Builder
	if color {
		b.WriteString(ANSI(f))
	}
	if color && len(f) != 1 {
		return b.String()
	}
	for _, p := range f {
		fmt.Fprintf(&b, "  %3d %3d %3d", p.R, p.G, p.B)
	}
	return b.String()
}
