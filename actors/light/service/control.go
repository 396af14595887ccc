package service

// Everyday control's verbs: power, toggle, set_brightness, set_color.
// Everything a request says is checked here, so a bad one journals
// nothing; the light checks what depends on its state.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// fadeMs checks a request's fade_ms.
func fadeMs(ms *int) error {
	if ms != nil && (*ms < 0 || *ms > messages.MaxFadeMs) {
		return bad(`"fade_ms" %d is out of range: give 0 (a cut) to %d (a day)`, *ms, messages.MaxFadeMs)
	}
	return nil
}

func decodePower(b []byte, _ checks) (any, error) {
	r, err := body[messages.PowerRequest](b, `send {"on":true} or {"on":false}, with "fade_ms" if it fades`)
	switch {
	case err != nil:
		return nil, err
	case r.On == nil:
		return nil, bad(`"on" is required: {"on":true} switches the light on, {"on":false} off`)
	}
	if err := fadeMs(r.FadeMs); err != nil {
		return nil, err
	}
	return command(messages.InPower, messages.InPowerData{On: *r.On, FadeMs: r.FadeMs})
}

func decodeToggle(b []byte, _ checks) (any, error) {
	r, err := body[struct {
		FadeMs *int `json:"fade_ms,omitempty"`
	}](b, messages.VerbToggle+` takes {}, or {"fade_ms":N}`)
	if err != nil {
		return nil, err
	}
	if err := fadeMs(r.FadeMs); err != nil {
		return nil, err
	}
	return command(messages.InPower, messages.InPowerData{Toggle: true, FadeMs: r.FadeMs})
}

func decodeSetBrightness(b []byte, _ checks) (any, error) {
	r, err := body[messages.BrightnessRequest](b, `send {"percent":40} (1 to 100) or {"delta":-10}`)
	lo, hi := messages.MinBrightness, messages.MaxBrightness
	if err == nil {
		err = fadeMs(r.FadeMs)
	}
	switch {
	case err != nil:
		return nil, err
	case r.Percent != nil && r.Delta != nil:
		return nil, bad(`give "percent" or "delta", not both`)
	case r.Percent == nil && r.Delta == nil:
		return nil, bad(`"percent" (%d to %d) or "delta" (-%d to %d) is required, e.g. {"percent":40}`, lo, hi, hi-1, hi-1)
	case r.Percent != nil && *r.Percent == 0:
		return nil, bad(`"percent" 0 is off, not a brightness: use power {"on":false} (lumen off), or give %d to %d`, lo, hi)
	case r.Percent != nil && (*r.Percent < lo || *r.Percent > hi):
		return nil, bad(`"percent" %d is out of range: give %d to %d`, *r.Percent, lo, hi)
	case r.Delta != nil && *r.Delta == 0:
		return nil, bad(`"delta" 0 changes nothing: give -%d to %d, not 0`, hi-1, hi-1)
	case r.Delta != nil && (*r.Delta <= -hi || *r.Delta >= hi):
		return nil, bad(`"delta" %d is out of range: give -%d to %d (the result is kept within %d to %d)`, *r.Delta, hi-1, hi-1, lo, hi)
	case r.Percent != nil:
		return command(messages.InBrightness, messages.InBrightnessData{Percent: *r.Percent, FadeMs: r.FadeMs})
	}
	return command(messages.InBrightness, messages.InBrightnessData{Delta: *r.Delta, FadeMs: r.FadeMs})
}

// colorHint is how set_color takes a color.
const colorHint = `send exactly one of {"r":255,"g":165,"b":0}, {"hex":"#ffa500"}, {"name":"orange"} or {"kelvin":2700}`

func decodeSetColor(b []byte, _ checks) (any, error) {
	r, err := body[messages.ColorRequest](b, colorHint)
	if err == nil {
		err = fadeMs(r.FadeMs)
	}
	if err != nil {
		return nil, err
	}
	var ways []string
	rgb := r.R != nil || r.G != nil || r.B != nil
	for _, w := range []struct {
		name string
		set  bool
	}{{`"r","g","b"`, rgb}, {`"hex"`, r.Hex != ""}, {`"name"`, r.Name != ""}, {`"kelvin"`, r.Kelvin != nil}} {
		if w.set {
			ways = append(ways, w.name)
		}
	}
	switch len(ways) {
	case 0:
		return nil, bad("a color is required: %s", colorHint)
	case 1:
	default:
		return nil, bad("the color is given %d ways (%s): %s", len(ways), strings.Join(ways, ", "), colorHint)
	}
	var c color.RGB
	var as string
	switch {
	case rgb:
		c, err = channels(r)
	case r.Hex != "":
		c, err = color.Hex(r.Hex)
		as = strings.ToLower(r.Hex)
		if err != nil {
			err = fmt.Errorf(`"hex" %s is no color: give #rrggbb or #rgb, like #ffa500`, messages.Clip(r.Hex))
		}
	case r.Name != "":
		var ok bool
		if c, ok = color.Named(r.Name); !ok {
			return nil, unknownColor(r.Name)
		}
		as = strings.ToLower(strings.Join(strings.Fields(r.Name), " "))
	default:
		c, err = color.Kelvin(*r.Kelvin)
		as = fmt.Sprintf("%dK", *r.Kelvin)
		if errors.Is(err, color.ErrOutOfRange) {
			err = fmt.Errorf(`"kelvin" %d is out of range: give %d to %d (2700 is a warm lamp, 6500 daylight)`, *r.Kelvin, color.MinKelvin, color.MaxKelvin)
		}
	}
	if err != nil {
		return nil, bad("%v", err)
	}
	return command(messages.InColor, messages.InColorData{R: c.R, G: c.G, B: c.B, As: as, FadeMs: r.FadeMs})
}

// channels reads {"r","g","b"}: all three, each 0 to 255.
func channels(r messages.ColorRequest) (color.RGB, error) {
	var out [3]uint8
	for i, ch := range []struct {
		name string
		v    *int
	}{{"r", r.R}, {"g", r.G}, {"b", r.B}} {
		switch {
		case ch.v == nil:
			return color.RGB{}, fmt.Errorf(`"%s" is missing: give "r", "g" and "b", each 0 to 255`, ch.name)
		case *ch.v < 0 || *ch.v > 255:
			return color.RGB{}, fmt.Errorf(`"%s" %d is out of range: give 0 to 255`, ch.name, *ch.v)
		}
		out[i] = uint8(*ch.v)
	}
	return color.RGB{R: out[0], G: out[1], B: out[2]}, nil
}

// unknownColor is the 400 for a name that is no color, with the nearest
// names.
func unknownColor(name string) error {
	msg := fmt.Sprintf(`"name" %s is no color I know`, messages.Clip(name))
	if near := color.Nearest(name, 3); len(near) > 0 {
		msg += "; did you mean " + strings.Join(near, ", ") + "?"
	}
	return bad("%s (CSS color names, warm white, soft white, cool white, daylight; or hex, kelvin, r g b)", msg)
}
