package machine

import "github.com/lumen-home/lumen/messages"

// Demo returns the demo light's configuration: a click cycles off → red →
// green → blue → red …, and holding the button from any state turns the
// light off.
func Demo() messages.ApplyRequest {
	state := func(name string, r, g, b float64, desc string) messages.State {
		return messages.State{Name: name, R: messages.Num(r), G: messages.Num(g), B: messages.Num(b), Description: desc}
	}
	rule := func(from, on, to string, priority int) messages.Rule {
		return messages.Rule{From: from, On: on, To: to, Priority: priority, Enabled: true}
	}
	return messages.ApplyRequest{
		States: []messages.State{
			state("red", 255, 0, 0, "plain red"),
			state("green", 0, 255, 0, "plain green"),
			state("blue", 0, 0, 255, "plain blue"),
		},
		Rules: []messages.Rule{
			rule("off", "button_click", "red", 0),
			rule("red", "button_click", "green", 0),
			rule("green", "button_click", "blue", 0),
			rule("blue", "button_click", "red", 0),
			rule("*", "button_hold", "off", 100),
		},
	}
}
