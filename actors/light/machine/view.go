package machine

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Reading the model: what a get reply, an export and the light actor's
// timers see. Nothing here changes the machine.

// Model returns the light's whole current model for a get reply; OK,
// Light and Seq are left for the caller.
func (m *Machine) Model() messages.GetReply {
	c := m.c
	return messages.GetReply{
		State:        c.cur,
		Initial:      c.initial,
		OnState:      c.onState,
		PowerOn:      c.powerOn,
		TransitionMs: copyInt(c.transition),
		Room:         c.room,
		Aliases:      slices.Clone(c.aliases),
		Fade:         c.fadeNow(),
		LastOn:       c.lastOn,
		Brightness:   c.bright,
		States:       c.stateList(),
		Rules:        c.ruleList(),
		Vars:         c.varMap(),
		Timers:       m.PendingTimers(),
		Schedules:    m.NextSchedules(),
		Tools:        c.toolList(),
		Sources:      c.sourceList(),
		Functions:    c.functionList(),
		LastRuns:     c.lastRuns(),
		Intents:      c.intentList(),
		Layers:       c.layerList(),
	}
}

// Export returns the whole configuration, custom tools, functions and
// layers included, with the current variables, in a form that Apply(ev,
// "config", {"op":"apply",…}) accepts.
func (m *Machine) Export() messages.ApplyRequest {
	c := m.c
	req := messages.ApplyRequest{
		States:       c.stateList(),
		Rules:        c.ruleList(),
		Initial:      c.initial,
		OnState:      c.onState,
		PowerOn:      c.powerOn,
		TransitionMs: copyInt(c.transition),
		Room:         c.room,
		Aliases:      slices.Clone(c.aliases),
	}
	if len(c.vars) > 0 {
		req.Vars = c.varMap()
	}
	for _, s := range c.scheds {
		req.Schedules = append(req.Schedules, s.Schedule)
	}
	if len(c.tools) > 0 {
		req.Tools = c.toolList()
	}
	if len(c.sources) > 0 {
		req.Sources = c.sourceList()
	}
	if len(c.fns.list) > 0 {
		req.Functions = c.functionList()
	}
	req.Layers = c.layerList()
	return req
}

func (c *core) stateList() []messages.State {
	out := make([]messages.State, len(c.states))
	for i, s := range c.states {
		out[i] = s.State
		if s.Speed != nil {
			v := *s.Speed
			out[i].Speed = &v
		}
	}
	return out
}

func (c *core) ruleList() []messages.Rule {
	out := make([]messages.Rule, len(c.rules))
	for i, r := range c.rules {
		out[i] = r.Rule
	}
	return out
}

func (c *core) varMap() map[string]json.RawMessage {
	out := make(map[string]json.RawMessage, len(c.vars))
	for k, v := range c.vars {
		out[k] = slices.Clone(v.raw)
	}
	return out
}

// PendingTimers returns the pending timers by deadline, then name, for
// the actor to arm.
func (m *Machine) PendingTimers() []messages.Timer {
	out := make([]messages.Timer, 0, len(m.c.timers))
	for name, at := range m.c.timers {
		out = append(out, messages.Timer{Name: name, Deadline: at})
	}
	slices.SortFunc(out, func(a, b messages.Timer) int {
		if c := a.Deadline.Compare(b.Deadline); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// Due is a deadline the machine waits for: a timer, a schedule's next
// tick or a layer's end, and the input that reaches it (Kind:
// messages.InTimer, InSchedule or InLayer).
type Due struct {
	Kind, Name string
	At         time.Time
}

// Dues returns every pending deadline: the timers (PendingTimers), the
// schedules that fire again (NextSchedules), the layers' ends
// (LayerDeadlines), in that order.
func (m *Machine) Dues() []Due {
	var out []Due
	for _, t := range m.PendingTimers() {
		out = append(out, Due{messages.InTimer, t.Name, t.Deadline})
	}
	for _, s := range m.NextSchedules() {
		if s.Next != nil {
			out = append(out, Due{messages.InSchedule, s.Name, *s.Next})
		}
	}
	for _, l := range m.LayerDeadlines() {
		out = append(out, Due{messages.InLayer, l.Name, l.Deadline})
	}
	return out
}

// NextDue is the earliest deadline due by t, the first Dues lists among
// equals, as the light reaches them between two inputs.
func (m *Machine) NextDue(t time.Time) (Due, bool) {
	var next Due
	found := false
	for _, d := range m.Dues() {
		if !d.At.After(t) && (!found || d.At.Before(next.At)) {
			next, found = d, true
		}
	}
	return next, found
}

// Data is the data of the input that reaches d, late when it comes
// more than a moment after its deadline.
func (d Due) Data(late bool) []byte {
	var v any
	switch d.Kind {
	case messages.InTimer:
		v = messages.InTimerData{Name: d.Name, Deadline: d.At, Late: late}
	case messages.InLayer:
		v = messages.InLayerData{Name: d.Name, Deadline: d.At, Late: late}
	default:
		v = messages.InScheduleData{Name: d.Name, At: d.At, Late: late}
	}
	b, _ := json.Marshal(v) // plain structs: cannot fail
	return b
}

// NextSchedules returns the schedules in insertion order, each with its
// next tick (nil if it never fires again), for the actor to arm.
func (m *Machine) NextSchedules() []messages.Schedule {
	out := make([]messages.Schedule, len(m.c.scheds))
	for i, s := range m.c.scheds {
		out[i] = s.Schedule
		out[i].Next = copyTime(s.next)
	}
	return out
}
