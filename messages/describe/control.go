package describe

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// Everyday control in words: power, the dimmer, the state color.

// controlInput renders an input of everyday control, or false for
// another input.
func controlInput(env messages.Envelope) (string, bool) {
	switch env.Type {
	case messages.InPower:
		var d messages.InPowerData
		if json.Unmarshal(env.Data, &d) == nil {
			switch {
			case d.Toggle:
				return "toggle the power", true
			case d.On:
				return "switch on", true
			}
			return "switch off", true
		}
	case messages.InBrightness:
		var d messages.InBrightnessData
		if json.Unmarshal(env.Data, &d) == nil {
			switch {
			case d.Delta > 0:
				return fmt.Sprintf("brighten by %d%%", d.Delta), true
			case d.Delta < 0:
				return fmt.Sprintf("dim by %d%%", -d.Delta), true
			}
			return fmt.Sprintf("set brightness to %d%%", d.Percent), true
		}
	case messages.InColor:
		var d messages.InColorData
		if json.Unmarshal(env.Data, &d) == nil {
			return "show color " + colorWords(d.R, d.G, d.B, d.As), true
		}
	}
	return "", false
}

// controlOutput renders an output of everyday control, or false for
// another output.
func controlOutput(env messages.Envelope, cause string) (string, bool) {
	switch env.Type {
	case messages.OutBrightness:
		var d messages.OutBrightnessData
		if json.Unmarshal(env.Data, &d) == nil {
			return fmt.Sprintf("brightness %d%% → %d%%%s%s", d.From, d.Percent, fading(d.FadeMs), cause), true
		}
	}
	return "", false
}

// colorSet says the color set_color gave the state color: " color
// orange (#ffa500), created", or "".
func colorSet(c *messages.ColorSet) string {
	if c == nil {
		return ""
	}
	s := " color " + colorWords(c.R, c.G, c.B, c.As)
	if c.Created {
		s += ", created"
	}
	return s
}

// fading says how long a change fades, " fading 30m0s", or "".
func fading(ms *int) string {
	if ms == nil || *ms <= 0 {
		return ""
	}
	return " fading " + (time.Duration(*ms) * time.Millisecond).String()
}

// colorWords names a color as it was asked for, with its hex code:
// "orange (#ffa500)", or "#ffa500".
func colorWords(r, g, b uint8, as string) string {
	hex := color.RGB{R: r, G: g, B: b}.Hex()
	if as == "" || as == hex {
		return hex
	}
	return as + " (" + hex + ")"
}
