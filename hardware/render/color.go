package render

import (
	"math"

	"github.com/lumen-home/lumen/hardware"
)

// Correct applies gamma and brightness to one color, the way Out is made
// from Raw: each channel becomes round(255 · (v/255)^gamma · brightness).
// LEDs are linear in duty while eyes are not, so without gamma dim colors
// look washed out; the brightness cap keeps a strip within its power
// budget. A gamma that is not positive is taken as 1 (none), brightness
// is clamped to 0..1.
func Correct(c hardware.RGB, gamma, brightness float64) hardware.RGB {
	if !(gamma > 0) || math.IsInf(gamma, 0) {
		gamma = 1
	}
	brightness = clampFloat(brightness, 0, 1)
	return hardware.RGB{
		R: correct(c.R, gamma, brightness),
		G: correct(c.G, gamma, brightness),
		B: correct(c.B, gamma, brightness),
	}
}

func correct(v uint8, gamma, brightness float64) uint8 {
	f := float64(v) / 255
	if gamma != 1 {
		f = math.Pow(f, gamma)
	}
	return uint8(math.Round(255 * f * brightness))
}

// Duty is the PWM duty (0..cycle) for an already corrected channel value:
// linear v·cycle/255, rounded, so that 255 is fully on and 0 fully off.
// The correction is done once, by Correct, so that the PWM LED and a
// WS2812 strip show the same Out values.
func Duty(v uint8, cycle uint32) uint32 {
	return uint32((uint64(v)*uint64(cycle) + 127) / 255)
}

// lut is Correct for one (gamma, brightness), one channel value at a time.
type lut [256]uint8

func newLUT(gamma, brightness float64) *lut {
	var l lut
	for v := range l {
		l[v] = Correct(hardware.RGB{R: uint8(v)}, gamma, brightness).R
	}
	return &l
}

func (l *lut) apply(c hardware.RGB) hardware.RGB {
	return hardware.RGB{R: l[c.R], G: l[c.G], B: l[c.B]}
}

// channel turns a computed value into a channel: rounded and clamped to
// 0..255 (NaN is the caller's to reject).
func channel(v float64) uint8 {
	switch {
	case v >= 255:
		return 255
	case v > 0:
		return uint8(math.Round(v))
	}
	return 0
}

func clampFloat(v, lo, hi float64) float64 {
	switch {
	case v < lo:
		return lo
	case v > hi:
		return hi
	}
	return v
}

// hsv converts a hue in degrees (any real; it wraps), a saturation and a
// value in 0..1 (clamped) to r, g, b in 0..255, unrounded so that an
// expression can still scale them. NaN in gives NaN out, which the
// channel then reports.
func hsv(h, s, v float64) (r, g, b float64) {
	if math.IsNaN(h) || math.IsNaN(s) || math.IsNaN(v) || math.IsInf(h, 0) {
		nan := math.NaN()
		return nan, nan, nan
	}
	h = math.Mod(h, 360)
	if h < 0 {
		h += 360
	}
	s, v = clampFloat(s, 0, 1), clampFloat(v, 0, 1)
	c := v * s
	hp := h / 60
	x := c * (1 - math.Abs(math.Mod(hp, 2)-1))
	var r1, g1, b1 float64
	switch int(hp) {
	case 0:
		r1, g1 = c, x
	case 1:
		r1, g1 = x, c
	case 2:
		g1, b1 = c, x
	case 3:
		g1, b1 = x, c
	case 4:
		r1, b1 = x, c
	default: // 5, and 6 when h rounds up to 360
		r1, b1 = c, x
	}
	m := v - c
	return (r1 + m) * 255, (g1 + m) * 255, (b1 + m) * 255
}
