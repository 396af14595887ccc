package agent

import (
	"encoding/json"
	"fmt"

	"github.com/lumen-home/lumen/messages"
)

// Everyday control's tools: power, toggle, setBrightness, setColor. Each
// sends its arguments to the light's verb as they are.

// colorArgs is how setColor takes a color, as set_color does.
const colorArgs = `{"type":"object","description":"give exactly one way: name, hex, kelvin, or r, g and b","properties":{` +
	`"name":{"type":"string","description":"a CSS color name (orange, teal, hotpink …) or warm white, soft white, cool white, daylight"},` +
	`"hex":{"type":"string","description":"e.g. #ffa500"},` +
	`"kelvin":{"type":"integer","description":"a white by color temperature, 1000 (candle) to 12000 (blue sky); 2700 is a warm lamp"},` +
	`"r":{"type":"integer"},"g":{"type":"integer"},"b":{"type":"integer"},` + fadeSchema + `,` + lightSchema + `}}`

// controlTools are the rows of everyday control in the tool table.
func controlTools() []tool {
	return []tool{
		{Spec: Spec{ToolPower, "Switch the light on (back to the state it was in before it went off) or off (the state off).",
			`{"type":"object","properties":{"on":{"type":"boolean"},` + fadeSchema + `,` + lightSchema + `},"required":["on"]}`, messages.TierAutonomous},
			direct: true, idempotent: true, verb: messages.VerbPower, confirm: confirmPower},
		{Spec: Spec{ToolToggle, "Switch the light on if it is off, else off.", `{"type":"object","properties":{` + fadeSchema + `,` + lightSchema + `}}`, messages.TierAutonomous},
			direct: true, verb: messages.VerbToggle, confirm: confirmPower},
		{Spec: Spec{ToolSetBrightness, "Set the light's brightness for every state: percent 1-100, or a step delta -99..99 (\"brighter\": 20, \"a bit dimmer\": -10). A light that is off switches on; to switch off use power.",
			`{"type":"object","properties":{"percent":{"type":"integer"},"delta":{"type":"integer"},` + fadeSchema + `,` + lightSchema + `}}`, messages.TierAutonomous},
			direct: true, verb: messages.VerbSetBrightness, confirm: confirmSetBrightness},
		{Spec: Spec{ToolSetColor, "Show a color now, without making a state: the light goes to its state color, which takes it. A light that is off switches on.",
			colorArgs, messages.TierAutonomous},
			direct: true, idempotent: true, verb: messages.VerbSetColor, confirm: confirmSetColor},
	}
}

func confirmPower(c messages.ToolStep) string {
	var r struct{ State string }
	_ = json.Unmarshal(c.Result, &r)
	if r.State == "off" {
		return "The light is off."
	}
	return fmt.Sprintf("The light is on, %s.", r.State)
}

func confirmSetBrightness(c messages.ToolStep) string {
	var a messages.BrightnessRequest
	_ = json.Unmarshal(c.Args, &a)
	switch {
	case a.Percent != nil:
		return fmt.Sprintf("The brightness is %d%% now.", *a.Percent)
	case a.Delta != nil && *a.Delta < 0:
		return "I dimmed the light."
	}
	return "I made the light brighter."
}

func confirmSetColor(c messages.ToolStep) string {
	var a messages.ColorRequest
	_ = json.Unmarshal(c.Args, &a)
	switch {
	case a.Name != "":
		return fmt.Sprintf("The light is %s now.", a.Name)
	case a.Kelvin != nil:
		return fmt.Sprintf("The light is a %d kelvin white now.", *a.Kelvin)
	}
	return "The light shows that color now."
}
