package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// PreviewOpts are lumen preview's flags.
type PreviewOpts struct {
	Frames, Pixels, Cell int
	Seed                 uint64
	PNG                  string
}

// Preview renders state arg (a name or JSON) frame by frame, in the
// terminal or into a PNG.
func (t *Term) Preview(ctx context.Context, arg string, o PreviewOpts) error {
	st, fns, err := t.previewState(ctx, arg)
	if err != nil {
		return err
	}
	out, err := render.Preview(st, fns, render.Options{Pixels: o.Pixels}, o.Frames, o.Seed)
	if err != nil && len(out) == 0 {
		return Usage(err)
	}
	if err != nil {
		err = fmt.Errorf("state %s: %w (the light shows its error color)", st.Name, err)
	}
	if o.PNG != "" {
		var buf bytes.Buffer
		if err := render.PNG(&buf, out, o.Cell); err != nil {
			return err
		}
		if err := os.WriteFile(o.PNG, buf.Bytes(), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(t.Stdout, describe.PreviewWritten(st.Name, len(out), o.Pixels, o.PNG))
		return err
	}
	color := render.Terminal(t.Stdout)
	for i, f := range out {
		fmt.Fprintf(t.Stdout, "%4d %s\n", i, render.FrameLine(f, color))
	}
	return err
}

// previewState reads STATE: a JSON state (which needs no light, and so
// calls no custom function), or the name of one of the light's states,
// with the light's custom functions.
func (t *Term) previewState(ctx context.Context, arg string) (messages.State, []messages.Function, error) {
	if strings.HasPrefix(strings.TrimSpace(arg), "{") {
		var st messages.State
		if err := messages.Decode([]byte(arg), &st); err != nil {
			return st, nil, Usage(fmt.Errorf("state: %w", err))
		}
		if st.Name == "" {
			st.Name = "preview"
		}
		return st, nil, nil
	}
	g, err := t.Get(ctx)
	if err != nil {
		return messages.State{}, nil, err
	}
	var names []string
	for _, s := range g.States {
		if s.Name == arg {
			return s, g.Functions, nil
		}
		names = append(names, s.Name)
	}
	return messages.State{}, nil, fmt.Errorf("light %s has no state %q; it has %s", t.Light, arg, strings.Join(names, ", "))
}
