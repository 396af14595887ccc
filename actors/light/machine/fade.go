package machine

import (
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Fades: an input or a rule may fade into its state (or a brightness)
// over fade_ms, else the light's transition_ms does. The machine reads no
// clock: a fade is its start (the input's time) and length, journaled in
// the output, kept in the model until an input comes after its end, so
// that the LED computes where it is from the clock, after a restart too.

// checkFade refuses a fade out of range.
func checkFade(field string, ms *int) *rejection {
	if ms != nil && (*ms < 0 || *ms > messages.MaxFadeMs) {
		return rejectf(400, "%s: fade_ms %d is out of range; give 0 (a cut) to %d (a day)", field, *ms, messages.MaxFadeMs)
	}
	return nil
}

// fadeFrom is the fade of a change from state from at brightness bright:
// fade, else the light's transition_ms; it is recorded as the light's
// fade, with the color it starts from when the light knows it.
func (c *core) fadeFrom(from string, bright int, fade *int) *int {
	if fade == nil {
		fade = c.transition
	}
	if fade == nil || *fade == 0 {
		c.fade = nil
		if fade == nil {
			return nil
		}
		ms := 0
		return &ms
	}
	ms := *fade
	c.fade = &messages.Fade{Start: c.now, Ms: ms, From: c.staticColor(from, bright)}
	return &ms
}

// staticColor is state name's color at brightness bright, as the LED
// shows it, when its channels are numbers; nil otherwise (an expression:
// the LED knows).
func (c *core) staticColor(name string, bright int) *messages.Pixel {
	s := c.stateIdx[name]
	if s == nil || s.R.IsExpr() || s.G.IsExpr() || s.B.IsExpr() {
		return nil
	}
	ch := func(v float64) uint8 {
		x := int(min(max(v+0.5, 0), 255))
		return uint8((x*bright + 50) / 100)
	}
	return &messages.Pixel{R: ch(s.R.Num), G: ch(s.G.Num), B: ch(s.B.Num)}
}

// fadeOver forgets the light's fade once an input comes after its end.
func (c *core) fadeOver() {
	if c.fade != nil && !c.now.Before(c.fade.Start.Add(time.Duration(c.fade.Ms)*time.Millisecond)) {
		c.fade = nil
	}
}

// fadeNow is the light's fade, a copy, for the model.
func (c *core) fadeNow() *messages.Fade {
	if c.fade == nil {
		return nil
	}
	f := *c.fade
	if f.From != nil {
		p := *f.From
		f.From = &p
	}
	return &f
}

func copyInt(p *int) *int {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}
