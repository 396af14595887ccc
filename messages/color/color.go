// Package color reads the colors a person or a model names: the CSS
// color keywords and four lamp whites, hex codes, color temperatures and
// plain r g b. The set_color request, the lumen color command and the
// local language understanding all read this one table, so a name means
// the same everywhere.
package color

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// RGB is a color as the LEDs take it.
type RGB struct{ R, G, B uint8 }

// Hex is the color as CSS writes it, lowercase: "#ffa500".
func (c RGB) Hex() string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// The color temperatures Kelvin accepts: the curve it uses is fitted to
// this range and says nothing reliable outside it.
const (
	MinKelvin = 1000
	MaxKelvin = 12000
)

// ErrOutOfRange is wrapped by every error for a number outside its range:
// a kelvin, or a channel of r g b.
var ErrOutOfRange = errors.New("out of range")

// UnknownError is the error for a name that is no color. Suggestions are
// the nearest names, for a reply's "did you mean", so a server or CLI
// need not parse them back out of the sentence.
type UnknownError struct {
	Name        string
	Suggestions []string
}

func (e *UnknownError) Error() string {
	if len(e.Suggestions) == 0 {
		return fmt.Sprintf("color: no color named %q", e.Name)
	}
	return fmt.Sprintf("color: no color named %q: did you mean %s?", e.Name, strings.Join(e.Suggestions, ", "))
}

// table is the names, built once: the CSS keywords as they are, the
// whites computed by Kelvin.
type table struct {
	byKey map[string]RGB // normalised name -> color
	names []string       // canonical names, sorted
	keys  []string       // keys[i] is names[i] normalised
}

var names = sync.OnceValue(func() table {
	t := table{byKey: make(map[string]RGB, len(css)+len(whites))}
	for name, c := range css {
		t.byKey[name] = c
		t.names = append(t.names, name)
	}
	for _, w := range whites {
		c, err := Kelvin(w.kelvin)
		if err != nil {
			panic(err) // the whites are constants inside the range
		}
		t.byKey[normalise(w.name)] = c
		t.names = append(t.names, w.name)
	}
	slices.Sort(t.names)
	for _, n := range t.names {
		t.keys = append(t.keys, normalise(n))
	}
	return t
})

// normalise lowercases a name and drops what people type between its
// words, so "Light Sea-Green" finds lightseagreen.
func normalise(name string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case ' ', '\t', '-', '_':
			return -1
		}
		return r
	}, strings.ToLower(name))
}

// Named is the color of a CSS keyword or of "warm white", "soft white",
// "cool white" or "daylight", in any case, with or without spaces,
// hyphens or underscores between the words.
func Named(name string) (RGB, bool) {
	c, ok := names().byKey[normalise(name)]
	return c, ok
}

// Names is every canonical name, sorted: the CSS keywords as CSS spells
// them and the whites with their space. The slice is the caller's.
func Names() []string { return slices.Clone(names().names) }

// Nearest is the n names closest to an unknown name, closest first, for a
// "did you mean". Names the typed text begins, then names containing it
// (or contained in it), rank before the rest, so a name cut short
// ("purpl", "lightblu") suggests its completions; within each rank the
// fewest edits win. It always gives n names (fewer only if n exceeds the
// table), however far the nearest is.
func Nearest(name string, n int) []string {
	if n <= 0 {
		return nil
	}
	q := []rune(normalise(name))
	qs := string(q)
	t := names()
	type scored struct {
		name       string
		rank, dist int
	}
	all := make([]scored, len(t.names))
	for i, key := range t.keys {
		rank := 2
		switch {
		case qs != "" && strings.HasPrefix(key, qs):
			rank = 0
		case qs != "" && (strings.Contains(key, qs) || strings.Contains(qs, key)):
			rank = 1
		}
		all[i] = scored{t.names[i], rank, distance(q, []rune(key))}
	}
	slices.SortStableFunc(all, func(a, b scored) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), cmp.Compare(a.dist, b.dist))
	})
	out := make([]string, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		out = append(out, s.name)
	}
	return out
}

// distance is the optimal string alignment distance: insertions,
// deletions, substitutions and swaps of neighbours each cost one, so the
// common typo "pruple" is one edit from purple.
func distance(a, b []rune) int {
	// Three rows suffice: a swap looks two rows back.
	prev2 := make([]int, len(b)+1)
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(b)]
}

// Kelvin is the color of a black body at k kelvin, from 1000 (candle
// orange) to 12000 (blue sky), by Tanner Helland's curve fit of the
// blackbody colors: close enough for a lamp, and cheap. 6500 K is near
// white.
func Kelvin(k int) (RGB, error) {
	if k < MinKelvin || k > MaxKelvin {
		return RGB{}, fmt.Errorf("color: kelvin %d is %w: give %d to %d", k, ErrOutOfRange, MinKelvin, MaxKelvin)
	}
	t := float64(k) / 100
	var r, g, b float64
	if t <= 66 {
		r = 255
		g = 99.4708025861*math.Log(t) - 161.1195681661
	} else {
		r = 329.698727446 * math.Pow(t-60, -0.1332047592)
		g = 288.1221695283 * math.Pow(t-60, -0.0755148492)
	}
	switch {
	case t >= 66:
		b = 255
	case t <= 19:
		b = 0
	default:
		b = 138.5177312231*math.Log(t-10) - 305.0447927307
	}
	return RGB{channel(r), channel(g), channel(b)}, nil
}

// channel rounds a fitted value into 0..255: the fit overshoots at the
// ends of its range.
func channel(v float64) uint8 { return uint8(math.Round(min(max(v, 0), 255))) }

// Hex reads "#ffa500", "ffa500" or the short "#fa0", in any case.
func Hex(s string) (RGB, error) {
	h := strings.TrimPrefix(strings.TrimSpace(s), "#")
	if len(h) == 3 {
		h = string([]byte{h[0], h[0], h[1], h[1], h[2], h[2]})
	}
	v, err := strconv.ParseUint(h, 16, 32)
	if len(h) != 6 || err != nil {
		return RGB{}, fmt.Errorf("color: %q is no hex color: give #rrggbb or #rgb, like #ffa500 or #fa0", s)
	}
	return RGB{uint8(v >> 16), uint8(v >> 8), uint8(v)}, nil
}

// Parse reads a color as the lumen color command takes it: a name (its
// words as one argument or several: "warm white" or warm white), a hex
// with or without "#", a temperature like "2700K", or three numbers
// 0 to 255 for red, green and blue.
func Parse(args ...string) (RGB, error) {
	fields := strings.FieldsFunc(strings.Join(args, " "), func(r rune) bool {
		return r == ' ' || r == '\t' || r == ','
	})
	switch {
	case len(fields) == 0:
		return RGB{}, errors.New(`color: no color given: give a name, a hex, a temperature or r g b, like orange, #ffa500, 2700K or 255 165 0`)
	case len(fields) == 3 && slices.ContainsFunc(fields, isNumber):
		return parseRGB(fields)
	case len(fields) == 2 && isNumber(fields[0]) && strings.EqualFold(fields[1], "k"):
		fields = []string{fields[0] + "K"} // "2700 K"
	case len(fields) > 1 && !slices.ContainsFunc(fields, func(f string) bool { return !isNumber(f) }):
		return RGB{}, fmt.Errorf("color: %d numbers are no color: give three, red green blue, each 0 to 255, like 255 165 0", len(fields))
	}
	s := strings.Join(fields, " ")
	if c, ok := Named(s); ok {
		return c, nil
	}
	if len(fields) == 1 {
		if num, ok := strings.CutSuffix(strings.ToLower(s), "k"); ok && isNumber(num) {
			k, err := strconv.Atoi(num)
			if err != nil {
				return RGB{}, fmt.Errorf("color: kelvin %s is %w: give %d to %d", num, ErrOutOfRange, MinKelvin, MaxKelvin)
			}
			return Kelvin(k)
		}
		if isNumber(s) {
			return RGB{}, fmt.Errorf("color: a bare number %s is no color: write %sK for a temperature, or three numbers for r g b", s, s)
		}
		if strings.HasPrefix(s, "#") || isHex(s) {
			return Hex(s)
		}
	}
	return RGB{}, &UnknownError{Name: s, Suggestions: Nearest(s, 3)}
}

// parseRGB reads three channels, each 0 to 255.
func parseRGB(fields []string) (RGB, error) {
	var c [3]uint8
	for i, f := range fields {
		v, err := strconv.Atoi(f)
		if err != nil || v < 0 || v > 255 {
			which := [...]string{"red", "green", "blue"}[i]
			if err == nil || errors.Is(err, strconv.ErrRange) {
				return RGB{}, fmt.Errorf("color: %s %s is %w: give 0 to 255", which, f, ErrOutOfRange)
			}
			return RGB{}, fmt.Errorf("color: %s %q is not a number: give three numbers 0 to 255, like 255 165 0", which, f)
		}
		c[i] = uint8(v)
	}
	return RGB{c[0], c[1], c[2]}, nil
}

// isNumber reports whether s is digits, with an optional sign so "-1"
// gets the out-of-range error rather than "no color named".
func isNumber(s string) bool {
	s = strings.TrimPrefix(strings.TrimPrefix(s, "-"), "+")
	return s != "" && strings.Trim(s, "0123456789") == ""
}

// isHex reports whether s could be a hex color without its "#".
func isHex(s string) bool {
	return (len(s) == 3 || len(s) == 6) && strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
}
