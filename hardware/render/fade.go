package render

import (
	"math"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// Fades: from the colors shown when a fade starts to the state's, in
// Oklab (Björn Ottosson's perceptual color space), where equal steps look
// equal: a sunrise from off brightens evenly, and red to blue passes
// through a purple of the same lightness, not a dark one.

// fadeTick spaces the frames of a fade: 30 a second.
const fadeTick = time.Second / 30

// Fade is a fade into the state shown: from From (Raw colors, one per
// pixel; nil: what was shown when it was set) starting at Start, over
// Duration.
type Fade struct {
	From     []hardware.RGB
	Start    time.Time
	Duration time.Duration
}

// SetFade replaces the fade into the state just set (SetState starts the
// default one, Options.FadeMs, from the colors shown): a fade of its own
// length, from given colors (a fade resumed after a restart), from a
// start that may be in the past. A Duration of 0 cuts.
func (r *Renderer) SetFade(f Fade) {
	r.fadeAt, r.fadeDur = f.Start, f.Duration
	switch {
	case f.Duration <= 0:
		r.from = nil
	case f.From != nil:
		r.from = append(r.from[:0], f.From...)
		for len(r.from) < r.opts.Pixels {
			r.from = append(r.from, hardware.RGB{})
		}
		r.from = r.from[:r.opts.Pixels]
	case r.shown != nil:
		r.from = append(r.from[:0], r.shown...)
	default:
		r.from = r.fill(r.from, hardware.RGB{}) // nothing shown yet: from dark
	}
}

// Fading is the fade that runs, from the colors it started from, to set
// again on a state set anew (SetFade); false when none runs.
func (r *Renderer) Fading() (Fade, bool) {
	if r.from == nil {
		return Fade{}, false
	}
	return Fade{From: append([]hardware.RGB(nil), r.from...), Start: r.fadeAt, Duration: r.fadeDur}, true
}

// fading is the fade's progress at now, 0 to 1, and whether it runs.
func (r *Renderer) fading(now time.Time) (float64, bool) {
	if r.from == nil {
		return 0, false
	}
	el := now.Sub(r.fadeAt)
	if el >= r.fadeDur {
		r.from = nil
		return 1, false
	}
	return float64(max(el, 0)) / float64(r.fadeDur), true
}

// fadeEnd is when the fade ends.
func (r *Renderer) fadeEnd() time.Time { return r.fadeAt.Add(r.fadeDur) }

// blend mixes a and b into dst, a at x=0 and b at x=1, in Oklab.
func blend(dst, a, b []hardware.RGB, x float64) []hardware.RGB {
	for i := range dst {
		p, q := oklab(a[i]), oklab(b[i])
		dst[i] = fromOklab(lab{p.l + (q.l-p.l)*x, p.a + (q.a-p.a)*x, p.b + (q.b-p.b)*x})
	}
	return dst
}

// lab is a color in Oklab: lightness l, and a, b.
type lab struct{ l, a, b float64 }

// oklab converts an sRGB color.
func oklab(c hardware.RGB) lab {
	r, g, b := linear(c.R), linear(c.G), linear(c.B)
	l := math.Cbrt(0.4122214708*r + 0.5363325363*g + 0.0514459929*b)
	m := math.Cbrt(0.2119034982*r + 0.6806995451*g + 0.1073969566*b)
	s := math.Cbrt(0.0883024619*r + 0.2817188376*g + 0.6299787005*b)
	return lab{
		l: 0.2104542553*l + 0.7936177850*m - 0.0040720468*s,
		a: 1.9779984951*l - 2.4285922050*m + 0.4505937099*s,
		b: 0.0259040371*l + 0.7827717662*m - 0.8086757660*s,
	}
}

// fromOklab converts back to sRGB, clamped to its gamut.
func fromOklab(c lab) hardware.RGB {
	l := c.l + 0.3963377774*c.a + 0.2158037573*c.b
	m := c.l - 0.1055613458*c.a - 0.0638541728*c.b
	s := c.l - 0.0894841775*c.a - 1.2914855480*c.b
	l, m, s = l*l*l, m*m*m, s*s*s
	return hardware.RGB{
		R: encode(4.0767416621*l - 3.3077115913*m + 0.2309699292*s),
		G: encode(-1.2684380046*l + 2.6097574011*m - 0.3413193965*s),
		B: encode(-0.0041960863*l - 0.7034186147*m + 1.7076147010*s),
	}
}

// linear is an sRGB channel as light, 0 to 1.
func linear(v uint8) float64 {
	x := float64(v) / 255
	if x <= 0.04045 {
		return x / 12.92
	}
	return math.Pow((x+0.055)/1.055, 2.4)
}

// encode is light, 0 to 1, as an sRGB channel.
func encode(x float64) uint8 {
	x = min(max(x, 0), 1)
	if x <= 0.0031308 {
		x *= 12.92
	} else {
		x = 1.055*math.Pow(x, 1/2.4) - 0.055
	}
	return uint8(math.Round(x * 255))
}
