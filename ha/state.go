package ha

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/lumen-home/lumen/messages"
)

// State is the light's state as its light entity reads it from
// state_topic (schema json). Effect and Color are always sent, null when
// there is none: Home Assistant keeps an attribute a state leaves out.
type State struct {
	State      string  `json:"state"` // ON or OFF
	Brightness int     `json:"brightness,omitempty"`
	ColorMode  string  `json:"color_mode,omitempty"`
	Color      *RGB    `json:"color"`
	Effect     *string `json:"effect"`
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
// is null then, and the effect names it.
func StateOf(g messages.GetReply) State {
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
	}
	return s
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
