package render

import (
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/messages"
)

// maxPreviewFrames bounds Preview, whose frames are all kept in memory.
const maxPreviewFrames = 10_000

// maxImagePixels bounds the image PNG draws.
const maxImagePixels = 1 << 26

// previewStatic is the period between the frames of a static state.
const previewStatic = 100 * time.Millisecond

// Preview renders frames (each Pixels wide) of st without any device, so
// that a person or the agent can see a state before using it: frame k is
// at k·period after entering the state (period = Speed ms, or 100ms for a
// static state), with no variables; its expressions may call fns, the
// light's custom functions. It returns Raw colors. An expression
// that fails gives its error together with the frames, ErrorColor where
// it failed; only invalid options or a bad frame count give no frames.
func Preview(st messages.State, fns []messages.Function, opts Options, frames int, seed uint64) ([][]hardware.RGB, error) {
	if frames < 0 || frames > maxPreviewFrames {
		return nil, fmt.Errorf("render: preview of %d frames; give 0 to %d", frames, maxPreviewFrames)
	}
	opts.FadeMs = 0
	r, err := New(opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	if err := r.SetFunctions(fns); err != nil {
		return nil, err
	}
	at := time.Unix(0, 0).UTC()
	err = r.SetState(st, at, seed, nil)
	period := PreviewPeriod(st)
	out := make([][]hardware.RGB, frames)
	for k := range out {
		f := r.Frame(at.Add(time.Duration(k) * period))
		if f.Err != nil && err == nil {
			err = f.Err
		}
		out[k] = f.Raw
	}
	return out, err
}

// PreviewPeriod is the time between a preview's frames: the state's
// speed, or 100 ms for a static state.
func PreviewPeriod(st messages.State) time.Duration {
	if st.Speed != nil && *st.Speed > 0 {
		return time.Duration(*st.Speed) * time.Millisecond
	}
	return previewStatic
}

// PNG writes frames as an image: one row of cells per frame, one column
// per pixel, each cell cell×cell pixels, so a preview can be looked at or
// attached to a message. A frame shorter than the longest leaves its
// missing cells transparent.
func PNG(w io.Writer, frames [][]hardware.RGB, cell int) error {
	width := 0
	for _, f := range frames {
		width = max(width, len(f))
	}
	switch {
	case cell < 1:
		return fmt.Errorf("render: cell size is %d; give a positive number of image pixels", cell)
	case width == 0:
		return errors.New("render: no pixels to draw; give at least one frame with pixels")
	case int64(width)*int64(len(frames))*int64(cell)*int64(cell) > maxImagePixels:
		return fmt.Errorf("render: a %d×%d image of %d-pixel cells is too large; draw fewer frames or smaller cells", width, len(frames), cell)
	}
	img := image.NewNRGBA(image.Rect(0, 0, width*cell, len(frames)*cell))
	for y, f := range frames {
		for x, c := range f {
			col := color.NRGBA{R: c.R, G: c.G, B: c.B, A: 255}
			for dy := range cell {
				for dx := range cell {
					img.SetNRGBA(x*cell+dx, y*cell+dy, col)
				}
			}
		}
	}
	if err := png.Encode(w, img); err != nil {
		return fmt.Errorf("render: writing the image: %w", err)
	}
	return nil
}

// ANSI renders one frame as a row of 24-bit-color blocks, two spaces per
// pixel, for a terminal.
func ANSI(frame []hardware.RGB) string {
	var b strings.Builder
	b.Grow(len(frame) * 24)
	for _, c := range frame {
		b.WriteString("\x1b[48;2;")
		b.WriteString(strconv.Itoa(int(c.R)))
		b.WriteByte(';')
		b.WriteString(strconv.Itoa(int(c.G)))
		b.WriteByte(';')
		b.WriteString(strconv.Itoa(int(c.B)))
		b.WriteString("m  \x1b[0m")
	}
	return b.String()
}
