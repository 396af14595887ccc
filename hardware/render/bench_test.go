package render_test

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

// BenchmarkAnimation60x60 renders a 60-pixel strip animated at 60 fps:
// one op is one frame, and %-of-core-at-60fps is what 60 such frames a
// second cost one core. Its expressions run on the fast path.
func BenchmarkAnimation60x60(b *testing.B) { benchAnimation(b, false) }

// BenchmarkAnimation60x60JS is the same animation in JavaScript (goja),
// as every expression ran before the fast path.
func BenchmarkAnimation60x60JS(b *testing.B) { benchAnimation(b, true) }

func benchAnimation(b *testing.B, jsOnly bool) {
	r, err := render.New(render.Options{Pixels: 60, Gamma: 2.2, Brightness: 0.8})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	if jsOnly {
		render.UseJavaScriptOnly(r)
	}
	speed := 16
	st := messages.State{
		Name:  "wave",
		R:     messages.Expr("sin(t*2+i*0.3)*127+128"),
		G:     messages.Expr("hsv(t*60+i*6,1,1)"),
		B:     messages.Expr("random()*50"),
		Speed: &speed,
	}
	t0 := time.Unix(1_700_000_000, 0)
	if err := r.SetState(st, t0, 42, nil); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		f := r.Frame(t0.Add(time.Duration(k) * 16 * time.Millisecond))
		if f.Err != nil {
			b.Fatal(f.Err)
		}
		k++
	}
	perFrame := float64(b.Elapsed().Nanoseconds()) / float64(b.N)
	b.ReportMetric(perFrame*60/1e9*100, "%-of-core-at-60fps")
}
