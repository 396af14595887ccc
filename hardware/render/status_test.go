package render_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
)

func TestStatusLine(t *testing.T) {
	if s := render.NewStatus(&bytes.Buffer{}, []string{"a"}); s != nil {
		t.Fatal("a status line on something that is not a terminal")
	}
	var nilLine *render.Status
	nilLine.Show("a", "red", []hardware.RGB{{R: 255}}) // no terminal: a no-op

	var buf bytes.Buffer
	s := render.NewStatusOn(&buf, []string{"kitchen", "hall"})
	s.Show("hall", "blue", []hardware.RGB{{B: 255}})
	s.Show("kitchen", "red", []hardware.RGB{{R: 255}})
	lines := strings.Split(buf.String(), "\r\x1b[K")
	last := lines[len(lines)-1]
	k, h := strings.Index(last, "kitchen: red"), strings.Index(last, "hall: blue")
	if k < 0 || h < 0 || k > h {
		t.Fatalf("status line %q: want kitchen then hall", last)
	}
	if !strings.Contains(last, "\x1b[48;2;255;0;0m") || !strings.Contains(last, "\x1b[48;2;0;0;255m") {
		t.Fatalf("status line %q has no colored blocks", last)
	}
}

func TestFrameLine(t *testing.T) {
	red := []hardware.RGB{{R: 255}}
	two := []hardware.RGB{{R: 255}, {B: 7}}
	for _, tt := range []struct {
		f     []hardware.RGB
		color bool
		want  string
	}{
		{red, false, "  255   0   0"},
		{two, false, "  255   0   0    0   0   7"},
		{red, true, render.ANSI(red) + "  255   0   0"},
		{two, true, render.ANSI(two)},
	} {
		if got := render.FrameLine(tt.f, tt.color); got != tt.want {
			t.Errorf("FrameLine(%v, %v) = %q, want %q", tt.f, tt.color, got, tt.want)
		}
	}
	if render.Terminal(&bytes.Buffer{}) {
		t.Error("a buffer is no terminal")
	}
}
