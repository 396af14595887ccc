package ha

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// Call is one everyday verb with its body, which a command becomes.
type Call struct {
	Verb string
	Body any
}

// command is Home Assistant's JSON schema command, as its light entity
// sends it to command_topic.
type command struct {
	State      string   `json:"state"`
	Brightness *float64 `json:"brightness"`
	Color      *struct {
		R, G, B *float64
	} `json:"color"`
	ColorTemp  *float64 `json:"color_temp"`
	Effect     *string  `json:"effect"`
	Transition *float64 `json:"transition"`
	// flash is not offered (no flash in discovery): ignored if sent.
}

// Command turns a command of Home Assistant into the verbs that carry it
// out, in order: a color or an effect first, then the brightness, else
// power. Each is a whole verb body. A command that says nothing to do,
// or cannot be done, is an error that names what is wrong: nothing is
// sent then.
func Command(payload []byte) ([]Call, error) {
	var c command
	dec := json.NewDecoder(bytes.NewReader(payload))
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("ha: the command is not JSON of the light's schema: %w", err)
	}
	var fade *int
	if c.Transition != nil {
		t := *c.Transition
		if t < 0 || math.IsNaN(t) || t*1000 > messages.MaxFadeMs {
			return nil, fmt.Errorf("ha: transition %v s is not 0 to %d s", t, messages.MaxFadeMs/1000)
		}
		ms := int(math.Round(t * 1000))
		fade = &ms
	}
	switch strings.ToUpper(c.State) {
	case "OFF":
		return []Call{{messages.VerbPower, messages.PowerRequest{On: ptr(false), FadeMs: fade}}}, nil
	case "ON", "":
	default:
		return nil, fmt.Errorf("ha: state %q is neither ON nor OFF", c.State)
	}
	var calls []Call
	ways := 0
	if c.Color != nil {
		ways++
		if c.Color.R == nil || c.Color.G == nil || c.Color.B == nil {
			return nil, fmt.Errorf("ha: a color needs r, g and b")
		}
		var rgb [3]int
		for i, v := range []float64{*c.Color.R, *c.Color.G, *c.Color.B} {
			if v < 0 || v > 255 || math.IsNaN(v) {
				return nil, fmt.Errorf("ha: color channel %v is not 0 to 255", v)
			}
			rgb[i] = int(math.Round(v))
		}
		calls = append(calls, Call{messages.VerbSetColor, messages.ColorRequest{R: &rgb[0], G: &rgb[1], B: &rgb[2], FadeMs: fade}})
	}
	if c.ColorTemp != nil {
		ways++
		k := int(math.Round(*c.ColorTemp))
		if k < MinKelvin || k > MaxKelvin {
			return nil, fmt.Errorf("ha: color_temp %v K is not %d to %d", *c.ColorTemp, MinKelvin, MaxKelvin)
		}
		calls = append(calls, Call{messages.VerbSetColor, messages.ColorRequest{Kelvin: &k, FadeMs: fade}})
	}
	if c.Effect != nil {
		ways++
		if *c.Effect == "" {
			return nil, fmt.Errorf("ha: an empty effect")
		}
		calls = append(calls, Call{messages.VerbSetState, messages.SetStateRequest{Name: *c.Effect, FadeMs: fade}})
	}
	if ways > 1 {
		return nil, fmt.Errorf("ha: give one of color, color_temp and effect")
	}
	if c.Brightness != nil {
		b := *c.Brightness
		if b < 0 || b > 255 || math.IsNaN(b) {
			return nil, fmt.Errorf("ha: brightness %v is not 0 to 255", b)
		}
		if b == 0 { // Home Assistant's brightness 0 is off
			return []Call{{messages.VerbPower, messages.PowerRequest{On: ptr(false), FadeMs: fade}}}, nil
		}
		calls = append(calls, Call{messages.VerbSetBrightness, messages.BrightnessRequest{Percent: ptr(Percent(b)), FadeMs: fade}})
	}
	if len(calls) == 0 {
		calls = []Call{{messages.VerbPower, messages.PowerRequest{On: ptr(true), FadeMs: fade}}}
	}
	return calls, nil
}

// Percent is Home Assistant's brightness (1–255) as Lumen's dimmer
// (1–100 percent), never 0 for a light that is on.
func Percent(b float64) int { return max(1, int(math.Round(b*100/255))) }

// Brightness is Lumen's dimmer (1–100) as Home Assistant's (1–255).
func Brightness(percent int) int { return max(1, int(math.Round(float64(percent)*255/100))) }

func ptr[T any](v T) *T { return &v }
