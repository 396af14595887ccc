package ha

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/color"
)

// State is the light's state as its light entity reads it from
// state_topic (schema json). Effect and Color are always sent, null when
// there is none: Home Assistant keeps an attribute a state leaves out.
type State struct {
	State      string `json:"state"` // ON or OFF
	Brightness int    `json:"brightness,omitempty"`
	ColorMode  string `json:"color_mode,omitempty"`
	Color      *RGB   `json:"color"`
	// ColorTemp is in kelvin (color_temp_kelvin), with color_mode
	// color_temp.
	ColorTemp int     `json:"color_temp,omitempty"`
	Effect    *string `json:"effect"`
}

// RGB is a color of the state payload.
type RGB struct {
	R int `json:"r"`
	G int `json:"g"`
	B int `json:"b"`
}

// StateOf is the light's state from its get reply: final values only
// (the state a fade goes to, never a frame on the way), so that a
// slider in Home Assistant does not jump back during a transition. An
// animated state (its channels are expressions) has no one color: color
// is null then, and the effect names it. A color that is a color
// temperature's (kelvin, the one Home Assistant last asked for, or a
// round hundred, as `lumen color 2700K` gives) is told as that
// temperature, so Home Assistant shows its temperature slider, not the
// wheel.
func StateOf(g messages.GetReply, kelvin int) State {
	if g.State == "off" {
		return State{State: "OFF"}
	}
	s := State{State: "ON", Brightness: Brightness(g.Brightness), ColorMode: "rgb"}
	for _, st := range g.States {
		if st.Name != g.State {
			continue
		}
		if !st.R.IsExpr() && !st.G.IsExpr() && !st.B.IsExpr() {
			s.Color = &RGB{channel(st.R.Num), channel(st.G.Num), channel(st.B.Num)}
		}
	}
	if g.State != "color" {
		name := g.State
		s.Effect = &name
	} else if k, ok := temperature(s.Color, kelvin); ok {
		s.ColorMode, s.ColorTemp, s.Color = "color_temp", k, nil
	}
	return s
}

// temperature is the color temperature whose color c is: kelvin when it
// gives c, else the first round hundred that does. Pure white (6600 K's
// color too) stays a color unless Home Assistant asked for it as a
// temperature: its wheel's centre is white.
func temperature(c *RGB, kelvin int) (int, bool) {
	if c == nil {
		return 0, false
	}
	is := func(k int) bool {
		t, err := color.Kelvin(k)
		return err == nil && int(t.R) == c.R && int(t.G) == c.G && int(t.B) == c.B
	}
	if kelvin != 0 && is(kelvin) {
		return kelvin, true
	}
	if *c == (RGB{255, 255, 255}) {
		return 0, false
	}
	for k := MinKelvin; k <= MaxKelvin; k += 100 {
		if is(k) {
			return k, true
		}
	}
	return 0, false
}

func channel(v float64) int { return int(math.Round(math.Max(0, math.Min(255, v)))) }

// Payload is the state's JSON.
func (s State) Payload() []byte {
	b, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("ha: a state always encodes: %v", err))
	}
	return b
}
