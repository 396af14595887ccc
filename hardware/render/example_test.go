package render_test

import (
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

// A three-pixel rainbow that turns 120° a second, on a strip dimmed to
// half, without gamma so that the numbers stay readable.
func Example() {
	r, err := render.New(render.Options{Pixels: 3, Gamma: 1, Brightness: 0.5})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer r.Close()
	speed := 1000
	rainbow := messages.State{
		Name:  "rainbow",
		R:     messages.Expr("hsv(i*120 + t*120, 1, 1)"),
		G:     messages.Expr("hsv(i*120 + t*120, 1, 1)"),
		B:     messages.Expr("hsv(i*120 + t*120, 1, 1)"),
		Speed: &speed,
	}
	start := time.Date(2025, 1, 1, 18, 0, 0, 0, time.UTC)
	if err := r.SetState(rainbow, start, 1, nil); err != nil {
		fmt.Println(err)
		return
	}
	for now := start; now.Sub(start) < 3*time.Second; {
		f := r.Frame(now)
		fmt.Println(f.N, f.Raw, f.Out)
		next, ok := r.Next(now)
		if !ok {
			break
		}
		now = next
	}
	// Output:
	// 0 [{255 0 0} {0 255 0} {0 0 255}] [{128 0 0} {0 128 0} {0 0 128}]
	// 1 [{0 255 0} {0 0 255} {255 0 0}] [{0 128 0} {0 0 128} {128 0 0}]
	// 2 [{0 0 255} {255 0 0} {0 255 0}] [{0 0 128} {128 0 0} {0 128 0}]
}
