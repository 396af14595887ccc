package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Routing: an everyday command may be about another light, a room, a
// group or every light ("turn off the kitchen", "upstairs lights on").
// The everyday tools take a "light" argument for it, and Tools sends the
// verb to each light it names through House: in the daemon, or in a
// house through the hub.

// House is what a light's agent reaches besides its own light: the
// lights requests may name and their everyday verbs.
type House interface {
	// Lights is every light requests may name, this one included, with
	// the names people use for them.
	Lights(ctx context.Context) ([]Named, error)
	// Command sends an everyday verb to another light and returns the
	// body of its success.
	Command(ctx context.Context, light, verb string, body []byte) ([]byte, error)
}

// lightArg is the everyday tools' argument naming what they act on.
const lightArg = "light"

// lightSchema describes lightArg to the model.
const lightSchema = `"light":{"type":"string","description":"to act on other lights: a light's name, room:NAME (every light of a room), group:NAME or all; omit for this light"}`

// routable reports whether tool may act on other lights: the everyday
// verbs a Pi may ask the house for.
func routable(tool string) bool {
	switch tool {
	case ToolPower, ToolToggle, ToolSetBrightness, ToolSetColor, ToolSetState, ToolFire:
		return true
	}
	return false
}

// Routed is the result of an everyday call on other lights: each
// light's answer, in the order of the lights.
type Routed struct {
	OK     bool          `json:"ok"`
	Lights []RoutedLight `json:"lights"`
}

// RoutedLight is one light's answer to a routed call.
type RoutedLight struct {
	Light      string `json:"light"`
	State      string `json:"state,omitempty"`
	Changed    bool   `json:"changed,omitempty"`
	Brightness int    `json:"brightness,omitempty"`
	Error      string `json:"error,omitempty"`
}

// world is the World of requests said to this light, as d has read
// it: the house's lights when there is a House, else the light alone.
func (t *Tools) world(ctx context.Context, d *directory) *World {
	if t.House == nil {
		return NewWorld(d.self.Light, []Named{d.self})
	}
	lights, err := t.House.Lights(ctx)
	if err != nil || len(lights) == 0 {
		return NewWorld(d.self.Light, []Named{d.self})
	}
	// The light's own entry as the light says it now, in the groups the
	// house puts it in (the light itself knows none).
	self := d.self
	lights = slices.DeleteFunc(slices.Clone(lights), func(n Named) bool {
		if n.Light == self.Light {
			self.Groups = n.Groups
			return true
		}
		return false
	})
	return NewWorld(self.Light, append(lights, self))
}

// lightsOf resolves a "light" argument to the lights it names, sorted;
// an error says what there is.
func (t *Tools) lightsOf(ctx context.Context, d *directory, target string) ([]string, error) {
	w := t.world(ctx, d)
	name := strings.ToLower(strings.TrimSpace(target))
	var out []string
	switch {
	case name == TargetAll:
		out = w.Lights()
	case strings.HasPrefix(name, "group:"):
		g := strings.TrimPrefix(name, "group:")
		out = slices.Clone(w.groups[g])
		if tg, ok := w.names[sayable(g)]; out == nil && ok && tg.Group != "" {
			out = slices.Clone(tg.Lights) // "first floor" for first_floor
		}
	case strings.HasPrefix(name, "room:"):
		out = slices.Clone(w.rooms[sayable(strings.TrimPrefix(name, "room:"))])
	default:
		if _, ok := w.lights[name]; ok {
			out = []string{name}
		} else if tg, ok := w.names[sayable(name)]; ok && !tg.All {
			out = slices.Clone(tg.Lights)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: %q names no light; %s", errArgs, target, w.Known())
	}
	slices.Sort(out)
	return out, nil
}

// Known says the lights, rooms and groups of the world, for a person or
// the model: "the lights are hall, kitchen; the groups upstairs".
func (w *World) Known() string {
	s := "the lights are " + strings.Join(w.Lights(), ", ")
	var rooms []string
	for r := range w.rooms {
		rooms = append(rooms, r)
	}
	slices.Sort(rooms)
	if len(rooms) > 0 {
		s += "; the rooms " + strings.Join(rooms, ", ")
	}
	if g := w.Groups(); len(g) > 0 {
		s += "; the groups " + strings.Join(g, ", ")
	}
	return s
}

// routed runs verb with args on the lights target names, this light's
// (d's) through its own verb and the others' through House, at once.
func (t *Tools) routed(ctx context.Context, d *directory, verb, target string, args json.RawMessage) (json.RawMessage, error) {
	lights, err := t.lightsOf(ctx, d, target)
	if err != nil {
		return nil, err
	}
	out := Routed{OK: true, Lights: make([]RoutedLight, len(lights))}
	var wg sync.WaitGroup
	for i, l := range lights {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b []byte
			var err error
			switch {
			case l == d.self.Light:
				b, err = t.Light.Command(ctx, verb, args)
			case t.House == nil:
				err = fmt.Errorf("light %s is not reachable from here", l)
			default:
				b, err = t.House.Command(ctx, l, verb, args)
			}
			out.Lights[i] = routedLight(l, b, err)
		}()
	}
	wg.Wait()
	failed := 0
	for _, r := range out.Lights {
		if r.Error != "" {
			failed++
		}
	}
	if failed == len(lights) {
		var msgs []string
		for _, r := range out.Lights {
			msgs = append(msgs, r.Light+": "+r.Error)
		}
		return nil, errors.New(strings.Join(msgs, "; "))
	}
	return json.Marshal(out)
}

// routedLight reads one light's reply to a routed verb.
func routedLight(light string, body []byte, err error) RoutedLight {
	r := RoutedLight{Light: light}
	if err != nil {
		var we *wire.Error
		if errors.As(err, &we) {
			r.Error = we.Msg
		} else {
			r.Error = err.Error()
		}
		return r
	}
	var reply messages.Reply
	_ = json.Unmarshal(body, &reply)
	r.State, r.Changed = reply.State, reply.Changed
	for _, o := range reply.Outputs {
		if strings.HasSuffix(o.Type, "."+messages.OutBrightness) || o.Type == messages.OutBrightness {
			var b messages.OutBrightnessData
			if json.Unmarshal(o.Data, &b) == nil {
				r.Brightness = b.Percent
			}
		}
	}
	return r
}

// confirmRouted says what a routed call changed, a light each:
// "kitchen: off", "porch: 40%", "hall: purple".
func confirmRouted(c messages.ToolStep) (string, bool) {
	var r Routed
	if json.Unmarshal(c.Result, &r) != nil || len(r.Lights) == 0 {
		return "", false
	}
	var a struct {
		Name string `json:"name"`
	}
	_ = json.Unmarshal(c.Args, &a)
	parts := make([]string, 0, len(r.Lights))
	for _, l := range r.Lights {
		what := l.State
		switch {
		case l.Error != "":
			what = "not done (" + l.Error + ")"
		case c.Tool == ToolSetBrightness && l.Brightness > 0:
			what = fmt.Sprintf("%d%%", l.Brightness)
		case c.Tool == ToolSetColor && l.State == messages.ColorState && a.Name != "":
			what = a.Name
		}
		parts = append(parts, l.Light+": "+what)
	}
	return strings.Join(parts, "; ") + ".", true
}
