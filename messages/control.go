package messages

import (
	"strings"
	"time"
)

// Everyday control: power, brightness and any color. Off is the built-in
// state off; on returns to the state the light was in before it went off
// (LastOn of the model), else the light's OnState, else its first state.
// Brightness is a light-level dimmer applied to every state's colors
// before gamma and the hardware cap. A color is shown by the reserved
// state color, which set_color creates and recolors.

// Verbs of everyday control.
const (
	VerbPower         = "power"          // PowerRequest
	VerbToggle        = "toggle"         // {}
	VerbSetBrightness = "set_brightness" // BrightnessRequest
	VerbSetColor      = "set_color"      // ColorRequest
)

// Inputs of everyday control, lumen.<light>.evt.in.<type>.
const (
	InPower      = "power"      // InPowerData: switch on, off, or over
	InBrightness = "brightness" // InBrightnessData: set or step the dimmer
	InColor      = "color"      // InColorData: show a color
)

// OutBrightness, lumen.<light>.evt.out.brightness, reports the dimmer's
// change (OutBrightnessData). A color set_color shows is in its state
// output (OutStateData.Color).
const OutBrightness = "brightness"

// The dimmer's range, in percent; 0 is not a brightness but off.
const (
	MinBrightness = 1
	MaxBrightness = 100
)

// ColorState is the reserved state set_color shows; ColorStateDescription
// marks the one set_color made, so that a light's own state named color
// is never recolored by it.
const (
	ColorState            = "color"
	ColorStateDescription = "the color set by set_color"
)

// What a light shows when the daemon starts after an unclean stop, its
// configuration's power_on: restore (the default), off, or "state NAME".
const (
	PowerOnRestore = "restore"
	PowerOnOff     = "off"
	PowerOnState   = "state" // followed by a space and the state's name
)

// PowerOnTarget is the state a power_on asks for after an unclean stop:
// off, the state of "state NAME", or "" to stay as it was (restore).
func PowerOnTarget(powerOn string) string {
	if powerOn == PowerOnOff {
		return PowerOnOff
	}
	name, _ := strings.CutPrefix(powerOn, PowerOnState+" ")
	return name
}

// MaxFadeMs bounds a fade: a day.
const MaxFadeMs = 24 * 60 * 60 * 1000

// Fade is a fade in progress (or over): from the colors shown at Start
// into the light's state at its brightness, over Ms. From is the color it
// starts from, when the light knows it (a state of plain numbers before).
type Fade struct {
	Start time.Time `json:"start"`
	Ms    int       `json:"ms"`
	From  *Pixel    `json:"from,omitempty"`
}

// PowerRequest is the body of power: {"on":true} or {"on":false}; and of
// toggle, which takes only fade_ms.
type PowerRequest struct {
	On     *bool `json:"on,omitempty"`
	FadeMs *int  `json:"fade_ms,omitempty"`
}

// BrightnessRequest is the body of set_brightness: exactly one of
// {"percent":1..100} and {"delta":-99..99} (the result is clamped to
// 1–100).
type BrightnessRequest struct {
	Percent *int `json:"percent,omitempty"`
	Delta   *int `json:"delta,omitempty"`
	FadeMs  *int `json:"fade_ms,omitempty"`
}

// ColorRequest is the body of set_color: exactly one of {"r","g","b"}
// (0–255 each), {"hex":"#ffa500"}, {"name":"orange"} (a CSS color
// keyword, or warm white, soft white, cool white, daylight) and
// {"kelvin":1000..12000}.
type ColorRequest struct {
	R      *int   `json:"r,omitempty"`
	G      *int   `json:"g,omitempty"`
	B      *int   `json:"b,omitempty"`
	Hex    string `json:"hex,omitempty"`
	Name   string `json:"name,omitempty"`
	Kelvin *int   `json:"kelvin,omitempty"`
	FadeMs *int   `json:"fade_ms,omitempty"`
}

// InPowerData switches the light: {"on":true}, {"on":false}, or
// {"toggle":true} (on when it is off, else off).
type InPowerData struct {
	On     bool `json:"on"`
	Toggle bool `json:"toggle,omitempty"`
	FadeMs *int `json:"fade_ms,omitempty"`
}

// InBrightnessData sets the dimmer ({"percent":40}) or steps it
// ({"delta":-10}, clamped to 1–100). A light that is off turns on.
type InBrightnessData struct {
	Percent int  `json:"percent,omitempty"`
	Delta   int  `json:"delta,omitempty"`
	FadeMs  *int `json:"fade_ms,omitempty"`
}

// InColorData shows a color: the state color takes it and the light goes
// there (a light that is off turns on). The journal holds the numbers;
// As is how the color was asked for ("orange", "#ffa500", "2700K"), for
// people reading the journal.
type InColorData struct {
	R      uint8  `json:"r"`
	G      uint8  `json:"g"`
	B      uint8  `json:"b"`
	As     string `json:"as,omitempty"`
	FadeMs *int   `json:"fade_ms,omitempty"`
}

// OutBrightnessData reports the dimmer's new level.
type OutBrightnessData struct {
	Percent int `json:"percent"`
	From    int `json:"from"`
	// FadeMs is the fade to the new level, from the input's time, as a
	// state's (OutStateData.FadeMs).
	FadeMs *int `json:"fade_ms,omitempty"`
}

// ColorSet is the color set_color gave the state color, in the state
// output that goes there; Created when set_color made the state.
type ColorSet struct {
	R       uint8  `json:"r"`
	G       uint8  `json:"g"`
	B       uint8  `json:"b"`
	As      string `json:"as,omitempty"`
	Created bool   `json:"created,omitempty"`
}
