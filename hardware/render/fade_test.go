package render_test

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/messages"
)

// A long fade of its own: a 30-minute sunrise from off to warm. Another
// renderer that resumes it (a restart) from its start and colors shows,
// at each instant, what the first one shows; it ends on time, at the
// target; on the way it only brightens, and it asks for at most 30
// frames a second.
func TestLongFadeResumes(t *testing.T) {
	warm := rgb("warm", 255, 147, 41, nil)
	start := t0.Add(time.Hour)
	const d = 30 * time.Minute
	first := newRenderer(t, render.Options{Gamma: 1})
	if err := first.SetState(rgb("off", 0, 0, 0, nil), t0, 1, nil); err != nil {
		t.Fatal(err)
	}
	first.Frame(t0)
	if err := first.SetState(warm, start, 2, nil); err != nil {
		t.Fatal(err)
	}
	first.SetFade(render.Fade{Start: start, Duration: d})

	resumed := newRenderer(t, render.Options{Gamma: 1})
	if err := resumed.SetState(warm, start, 2, nil); err != nil {
		t.Fatal(err)
	}
	resumed.SetFade(render.Fade{From: []hardware.RGB{{}}, Start: start, Duration: d})

	resumed.Frame(start)
	if next, ok := resumed.Next(start.Add(d - time.Millisecond)); !ok || !next.Equal(start.Add(d)) {
		t.Errorf("Next just before the end: %v, %v; want the end", next, ok)
	}
	if next, ok := resumed.Next(start.Add(time.Minute)); !ok || next.Sub(start.Add(time.Minute)) < time.Second/30 {
		t.Errorf("Next during the fade: %v, %v; want 1/30 s on", next, ok)
	}
	if mid := first.Frame(start.Add(d / 2)).Out[0]; mid == (hardware.RGB{}) || mid == (hardware.RGB{R: 255, G: 147, B: 41}) {
		t.Errorf("halfway the fade shows %v", mid)
	}
	light := func(c hardware.RGB) int { return int(c.R) + int(c.G) + int(c.B) }
	prev := -1
	for at := start; !at.After(start.Add(d + time.Second)); at = at.Add(time.Minute) {
		a, b := first.Frame(at).Out[0], resumed.Frame(at).Out[0]
		if a != b {
			t.Fatalf("at +%v the resumed fade shows %v, the first %v", at.Sub(start), b, a)
		}
		if light(a) < prev {
			t.Fatalf("at +%v the sunrise darkens: %v", at.Sub(start), a)
		}
		prev = light(a)
	}
	if end := resumed.Frame(start.Add(d)).Out[0]; end != (hardware.RGB{R: 255, G: 147, B: 41}) {
		t.Errorf("at its end the fade shows %v, want the target", end)
	}
}

// A fade of 0 cuts; a fade set before any frame starts from dark.
func TestSetFadeCutsAndStartsDark(t *testing.T) {
	r := newRenderer(t, render.Options{Gamma: 1, FadeMs: 1000})
	if err := r.SetState(rgb("red", 255, 0, 0, nil), t0, 1, nil); err != nil {
		t.Fatal(err)
	}
	r.SetFade(render.Fade{Start: t0, Duration: time.Second})
	if c := r.Frame(t0).Out[0]; c != (hardware.RGB{}) {
		t.Errorf("a fade before any frame starts at %v, want dark", c)
	}
	if err := r.SetState(rgb("blue", 0, 0, 255, nil), t0.Add(time.Second), 2, nil); err != nil {
		t.Fatal(err)
	}
	r.SetFade(render.Fade{Start: t0.Add(time.Second)})
	if c := r.Frame(t0.Add(time.Second)).Out[0]; c != (hardware.RGB{B: 255}) {
		t.Errorf("a fade of 0 shows %v, want blue at once", c)
	}
	if _, ok := r.Next(t0.Add(time.Second)); ok {
		t.Error("a static state after a cut asks for another frame")
	}
}

// BenchmarkFade60 renders a fade on a 60-pixel strip, one op a frame, next
// to BenchmarkStatic60, the same strip static: %-of-core-at-30fps is what
// 30 such frames a second cost one core.
func BenchmarkFade60(b *testing.B) { benchFade(b, true) }

// BenchmarkStatic60 is BenchmarkFade60's baseline.
func BenchmarkStatic60(b *testing.B) { benchFade(b, false) }

func benchFade(b *testing.B, fade bool) {
	r, err := render.New(render.Options{Pixels: 60, Gamma: 2.2})
	if err != nil {
		b.Fatal(err)
	}
	defer r.Close()
	start := time.Unix(1_700_000_000, 0)
	if err := r.SetState(messages.State{Name: "warm", R: messages.Num(255), G: messages.Num(147), B: messages.Num(41)}, start, 1, nil); err != nil {
		b.Fatal(err)
	}
	if fade {
		r.SetFade(render.Fade{From: make([]hardware.RGB, 60), Start: start, Duration: time.Hour})
	}
	b.ReportAllocs()
	k := 0
	for b.Loop() {
		r.Frame(start.Add(time.Duration(k) * time.Second / 30))
		k++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)*30/1e9*100, "%-of-core-at-30fps")
}
