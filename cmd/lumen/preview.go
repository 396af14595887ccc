package main

import (
	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
)

func newPreview(a *app) *cobra.Command {
	var o cli.PreviewOpts
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
		RunE: func(cmd *cobra.Command, argv []string) error { return a.Preview(cmd.Context(), argv[0], o) },
	}
	f := cmd.Flags()
	f.IntVar(&o.Frames, "frames", 10, "how many frames to render")
	f.IntVar(&o.Pixels, "pixels", 1, "pixels per frame (a strip's length)")
	f.Uint64Var(&o.Seed, "seed", 1, "seed of random(), as the input's sequence seeds it on the light")
	f.StringVar(&o.PNG, "png", "", "write a PNG strip to this file instead of printing")
	f.IntVar(&o.Cell, "cell", 16, "size in image pixels of one LED pixel in the PNG")
	lightFlag(cmd, a)
	return cmd
}
