package eval

import (
	"slices"
	"strings"
)

// classes are the names a case may give a color: what a person would
// call the LED's color. warm is orange, yellow, or a white with more red
// than blue.
var classes = []string{"off", "white", "warm", "red", "orange", "yellow", "green", "cyan", "blue", "purple"}

func knownClass(c string) bool { return slices.Contains(classes, c) }

// Class names the color r, g, b (0-255, before gamma): off when it is
// dark, white when it is pale, else its hue's name.
func Class(r, g, b uint8) string {
	mx, mn := max(r, g, b), min(r, g, b)
	if mx < 24 {
		return "off"
	}
	if float64(mx-mn)/float64(mx) < 0.2 {
		return "white"
	}
	switch h := hue(float64(r), float64(g), float64(b)); {
	case h < 15 || h >= 330:
		return "red"
	case h < 45:
		return "orange"
	case h < 70:
		return "yellow"
	case h < 160:
		return "green"
	case h < 200:
		return "cyan"
	case h < 260:
		return "blue"
	default:
		return "purple"
	}
}

// hue is the color's hue in degrees, 0-360.
func hue(r, g, b float64) float64 {
	mx, mn := max(r, g, b), min(r, g, b)
	var h float64
	switch mx {
	case r:
		h = (g - b) / (mx - mn)
	case g:
		h = 2 + (b-r)/(mx-mn)
	default:
		h = 4 + (r-g)/(mx-mn)
	}
	h *= 60
	if h < 0 {
		h += 360
	}
	return h
}

// Matches reports whether r, g, b is one of want's classes (a|b…).
func Matches(want string, r, g, b uint8) bool {
	got := Class(r, g, b)
	for _, w := range strings.Split(want, "|") {
		switch {
		case w == got:
			return true
		case w == "warm" && (got == "orange" || got == "yellow" || got == "white" && int(r) > int(b)+20):
			return true
		}
	}
	return false
}
