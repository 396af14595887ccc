package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/internal/cli"
	"github.com/lumen-home/lumen/messages"
)

func newPreview(a *app) *cobra.Command {
	var (
		frames, pixels, cell int
		seed                 uint64
		pngFile              string
	)
	cmd := &cobra.Command{
		Use:   "preview STATE",
		Short: "Render a state's animation without applying it",
		Long: `Render a state frame by frame without applying it to the light, so you (or
the agent) can see an effect before it runs. STATE is the name of one of the
light's states, or a state written as JSON.

Each frame prints as a row of colored blocks, one per pixel, in a terminal
with 24-bit color; --png writes a strip image instead (one row per frame,
one column per pixel). Frames are --speed ms apart for an animated state
and 100 ms apart for a static one. The colors are the state's own, before
gamma correction and the brightness cap.`,
		Example: `  lumen preview red
  lumen preview rainbow --frames 30 --pixels 60 --png rainbow.png
  lumen preview '{"name":"pulse","r":"sin(t*3)*127+128","g":0,"b":0,"speed":50}'`,
		Args: args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			st, fns, err := a.previewState(cmd.Context(), argv[0])
			if err != nil {
				return err
			}
			out, err := render.Preview(st, fns, render.Options{Pixels: pixels}, frames, seed)
			if err != nil && len(out) == 0 {
				return cli.UsageError{Err: err}
			}
			if err != nil {
				err = fmt.Errorf("state %s: %w (the light shows its error color)", st.Name, err)
			}
			if pngFile != "" {
				var buf bytes.Buffer
				if err := render.PNG(&buf, out, cell); err != nil {
					return err
				}
				if err := os.WriteFile(pngFile, buf.Bytes(), 0o644); err != nil {
					return err
				}
				fmt.Fprintf(a.Stdout, "%s: %d frames × %d pixels written to %s\n", st.Name, len(out), pixels, pngFile)
				return err
			}
			color := render.Terminal(a.Stdout)
			for i, f := range out {
				fmt.Fprintf(a.Stdout, "%4d %s\n", i, render.FrameLine(f, color))
			}
			return err
		},
	}
	f := cmd.Flags()
	f.IntVar(&frames, "frames", 10, "how many frames to render")
	f.IntVar(&pixels, "pixels", 1, "pixels per frame (a strip's length)")
	f.Uint64Var(&seed, "seed", 1, "seed of random(), as the input's sequence seeds it on the light")
	f.StringVar(&pngFile, "png", "", "write a PNG strip to this file instead of printing")
	f.IntVar(&cell, "cell", 16, "size in image pixels of one LED pixel in the PNG")
	lightFlag(cmd, a)
	return cmd
}

// previewState reads STATE: a JSON state (which needs no light, and so
// calls no custom function), or the name of one of the light's states,
// with the light's custom functions.
func (a *app) previewState(ctx context.Context, arg string) (messages.State, []messages.Function, error) {
	if strings.HasPrefix(strings.TrimSpace(arg), "{") {
		var st messages.State
		if err := messages.Decode([]byte(arg), &st); err != nil {
			return st, nil, cli.UsageError{Err: fmt.Errorf("state: %w", err)}
		}
		if st.Name == "" {
			st.Name = "preview"
		}
		return st, nil, nil
	}
	g, err := a.Get(ctx)
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
	return messages.State{}, nil, fmt.Errorf("light %s has no state %q; it has %s", a.Light, arg, strings.Join(names, ", "))
}
