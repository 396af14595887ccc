package machine

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/messages"
)

// Everyday control: power, the dimmer and the state color. Off is the
// built-in state off; the state before it (lastOn, set by setState
// whichever way the light went off) is where power on returns.

// inputTypes are the inputs Apply takes, as its error lists them.
var inputTypes = []string{
	messages.InFired, messages.InState, messages.InVar, messages.InConfig, messages.InTimer, messages.InSchedule,
	messages.InData, messages.InUpgrade, messages.InIntent, messages.InLayer, messages.InPower, messages.InBrightness,
	messages.InColor,
}

// initControl gives expressions the dimmer: brightness reads it (a
// getter of the global object, so that functions see it too) and
// setBrightness(n), in actions, sets it.
func (c *core) initControl(host func(string, func(goja.FunctionCall) goja.Value)) {
	c.bright = messages.MaxBrightness
	c.brightJS = c.vm.ToValue(c.bright)
	get := c.vm.ToValue(func(goja.FunctionCall) goja.Value { return c.brightJS })
	if err := c.vm.GlobalObject().DefineAccessorProperty("brightness", get, nil, goja.FLAG_FALSE, goja.FLAG_TRUE); err != nil {
		panic(err)
	}
	host("setBrightness", c.jsSetBrightness)
}

func (c *core) setBright(n int) {
	c.bright = n
	c.brightJS = c.vm.ToValue(n)
}

func (c *core) jsSetBrightness(call goja.FunctionCall) goja.Value {
	c.needAction("setBrightness")
	a := call.Argument(0)
	f := a.ToFloat()
	if !goja.IsNumber(a) || math.IsNaN(f) || f < messages.MinBrightness-0.5 || f >= messages.MaxBrightness+0.5 {
		panic(c.vm.NewTypeError(fmt.Sprintf("setBrightness(n): n must be a number from %d to %d (percent); to switch off, go to state off", messages.MinBrightness, messages.MaxBrightness)))
	}
	n := int(math.Round(f))
	c.tx.bright = &n
	return goja.Undefined()
}

// checkPowerOn reads a configuration's power_on: "" or restore (kept as
// ""), off, or "state NAME" of a state in states.
func checkPowerOn(p string, states map[string]*stateDef) (string, *rejection) {
	name, isState := strings.CutPrefix(p, messages.PowerOnState+" ")
	switch {
	case p == "" || p == messages.PowerOnRestore:
		return "", nil
	case p == messages.PowerOnOff:
		return p, nil
	case !isState || strings.TrimSpace(name) == "":
		return "", rejectf(400, "power_on %q: give restore (the state it was in), off, or \"state NAME\"", messages.Clip(p))
	case states[name] == nil:
		return "", rejectf(404, "power_on names state %q, which is not in states; add it or pick another", name)
	case name == offState:
		return messages.PowerOnOff, nil
	}
	return p, nil
}

// onTarget is where power on goes: the state before off, else on_state,
// else the first state; "" when the light has no state besides off.
func (c *core) onTarget() string {
	for _, s := range []string{c.lastOn, c.onState} {
		if s != "" && s != offState && c.stateIdx[s] != nil {
			return s
		}
	}
	for _, s := range c.states {
		if s.Name != offState {
			return s.Name
		}
	}
	return ""
}

// noStateToTurnOn is the refusal of power on for a light with nothing to
// show.
func (c *core) noStateToTurnOn(field string) Result {
	return c.reject(400, "%s: the light has no state besides off to turn on to; give it a color first (set_color, lumen color orange) or a state (create_state, lumen state add)", field)
}

func (c *core) powerInput(in *messages.InPowerData) Result {
	if r := checkFade("power", in.FadeMs); r != nil {
		return c.rejected(r)
	}
	on := in.On
	if in.Toggle {
		on = c.cur == offState
	}
	switch {
	case !on && c.cur == offState:
		return c.ignored("", "the light is already off", nil)
	case !on:
		return c.enterFading(offState, nil, "", nil, in.FadeMs)
	case c.cur != offState:
		return c.ignored("", fmt.Sprintf("the light is already on (state %s)", c.cur), nil)
	}
	to := c.onTarget()
	if to == "" {
		return c.noStateToTurnOn("power")
	}
	return c.enterFading(to, nil, "", nil, in.FadeMs)
}

func (c *core) brightnessInput(in *messages.InBrightnessData) Result {
	if r := checkFade("brightness", in.FadeMs); r != nil {
		return c.rejected(r)
	}
	n := in.Percent
	switch {
	case in.Percent != 0 && in.Delta != 0:
		return c.reject(400, "brightness: give percent or delta, not both")
	case in.Percent == 0 && in.Delta == 0:
		return c.reject(400, "brightness: give percent (%d to %d) or a delta other than 0", messages.MinBrightness, messages.MaxBrightness)
	case in.Percent != 0 && (in.Percent < messages.MinBrightness || in.Percent > messages.MaxBrightness):
		return c.reject(400, "brightness: percent %d is out of range; give %d to %d (0 is off: use power)", in.Percent, messages.MinBrightness, messages.MaxBrightness)
	case in.Delta != 0 && (in.Delta <= -messages.MaxBrightness || in.Delta >= messages.MaxBrightness):
		return c.reject(400, "brightness: delta %d is out of range; give -%d to %d", in.Delta, messages.MaxBrightness-1, messages.MaxBrightness-1)
	case in.Delta != 0:
		n = min(max(c.bright+in.Delta, messages.MinBrightness), messages.MaxBrightness)
	}
	to := ""
	if c.cur == offState {
		if to = c.onTarget(); to == "" {
			return c.noStateToTurnOn("brightness")
		}
	}
	var out []Output
	if n != c.bright {
		out = append(out, c.dim(n, in.FadeMs))
	}
	if to != "" {
		return c.enterFading(to, nil, "", out, in.FadeMs)
	}
	if len(out) == 0 {
		return c.ignored("", fmt.Sprintf("the brightness is already %d%%", n), nil)
	}
	return Result{Outputs: out, State: c.cur}
}

// dim sets the dimmer to n, fading as fade (nil: the light's
// transition_ms) says, and reports it.
func (c *core) dim(n int, fade *int) Output {
	from := c.bright
	fade = c.fadeFrom(c.cur, from, fade)
	c.setBright(n)
	return Output{Type: messages.OutBrightness, Data: messages.OutBrightnessData{Percent: n, From: from, FadeMs: fade}}
}

// ownColorState is the refusal of set_color on a light that has a state
// of its own named color.
func (c *core) ownColorState() *rejection {
	if s := c.stateIdx[messages.ColorState]; s != nil && s.Description != messages.ColorStateDescription {
		return rejectf(409, "this light has a state of its own named %s, which set_color would change; rename it (create_state under another name, move its rules, then delete_state %s) to use set_color", messages.ColorState, messages.ColorState)
	}
	return nil
}

func (c *core) colorInput(in *messages.InColorData) Result {
	if r := c.ownColorState(); r != nil {
		return c.rejected(r)
	}
	if r := checkFade("color", in.FadeMs); r != nil {
		return c.rejected(r)
	}
	// A fade starts from the color before the state is recolored.
	from := c.staticColor(c.cur, c.bright)
	st := messages.State{Name: messages.ColorState, R: messages.Num(float64(in.R)), G: messages.Num(float64(in.G)), B: messages.Num(float64(in.B)),
		Description: messages.ColorStateDescription}
	def := c.newStateDef(st)
	data := messages.ColorSet{R: in.R, G: in.G, B: in.B, As: in.As}
	if i := slices.IndexFunc(c.states, func(s *stateDef) bool { return s.Name == messages.ColorState }); i >= 0 {
		// Recolored in place: the rules, which name states, stay as they are.
		states := slices.Clone(c.states)
		states[i] = def
		c.states = states
		c.stateIdx[def.Name] = def
	} else {
		cfg := c.current()
		cfg.states = append(slices.Clone(c.states), def)
		if r := c.checkSize(cfg.states, cfg.allRules()); r != nil {
			return c.rejected(r)
		}
		if err := c.commit(cfg); err != nil {
			return c.reject(500, "%v", err)
		}
		c.setState(c.cur)
		data.Created = true
	}
	res := c.enterFading(messages.ColorState, nil, "", nil, in.FadeMs)
	// One output, the state's, says the color too: the LED needs both.
	last := &res.Outputs[len(res.Outputs)-1]
	out := last.Data.(messages.OutStateData)
	out.Color = &data
	last.Data = out
	if c.fade != nil {
		c.fade.From = from
	}
	return res
}

// Refuses says why the light would refuse an input of everyday control
// as it is now, before it is journaled: power on (or a brightness or a
// color, which turn it on) with no state to turn on to, a color on a
// light whose own state is named color. Nil: it would take it. The
// machine checks again when it applies the input.
func (m *Machine) Refuses(inputType string, payload []byte) *messages.OutErrorData {
	c := m.c
	var res Result
	switch inputType {
	case messages.InPower, messages.InBrightness:
		if c.cur == offState && c.onTarget() == "" {
			var p messages.InPowerData
			if inputType == messages.InPower && (messages.Decode(payload, &p) != nil || (!p.On && !p.Toggle)) {
				return nil
			}
			res = c.noStateToTurnOn(inputType)
		}
	case messages.InColor:
		if r := c.ownColorState(); r != nil {
			res = c.rejected(r)
		}
	}
	return res.Err
}
