package machine

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// Reading the model: what a get reply, an export and the light actor's
// timers see. Nothing here changes the machine.

// Model returns the light's whole current model for a get reply; OK,
// Light and Seq are left for the caller.
func (m *Machine) Model() messages.GetReply {
	c := m.c
	return messages.GetReply{
		State:     c.cur,
		Initial:   c.initial,
		States:    c.stateList(),
		Rules:     c.ruleList(),
		Vars:      c.varMap(),
		Timers:    m.PendingTimers(),
		Schedules: m.NextSchedules(),
		Tools:     c.toolList(),
		Sources:   c.sourceList(),
		Functions: c.functionList(),
		LastRuns:  c.lastRuns(),
		Intents:   c.intentList(),
		Layers:    c.layerList(),
	}
}

// Export returns the whole configuration, custom tools, functions and
// layers included, with the current variables, in a form that Apply(ev,
// "config", {"op":"apply",…}) accepts.
func (m *Machine) Export() messages.ApplyRequest {
	c := m.c
	req := messages.ApplyRequest{
		States:  c.stateList(),
		Rules:   c.ruleList(),
		Initial: c.initial,
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
