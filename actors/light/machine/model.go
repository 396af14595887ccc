package machine

import (
	"fmt"
	"slices"
	"time"

	"github.com/dop251/goja"
	"github.com/robfig/cron/v3"

	"github.com/lumen-home/lumen/internal/solar"
	"github.com/lumen-home/lumen/messages"
)

// The model a configuration installs: states, rules, schedules, and the
// rejection of an input that would make it invalid. Custom tools and data
// sources are in tools.go and sources.go; where a rule's from is matched,
// in match.go.

// offState is the built-in state every light has.
const offState = "off"

// Schedule operations, the "op" of messages.OutScheduleData.
const (
	scheduleSet    = "set"
	scheduleDelete = "delete"
	scheduleFire   = "fire"
)

type stateDef struct {
	messages.State
	js    goja.Value // the name as a JS string, the "state" of expressions
	chans []*expr    // the expression channels, checked (not compiled)
}

type rule struct {
	messages.Rule
	idp    *string // &ID, shared by every output naming the rule
	ord    int     // position in insertion order
	cond   *expr
	act    *expr
	wild   bool   // from is "*" or "prefix/*"
	prefix string // "prefix/" for "prefix/*", "" for "*"
}

type schedule struct {
	messages.Schedule               // Next is always nil here
	spec              cron.Schedule // nil for a sun schedule
	loc               *time.Location
	sun               solar.Event // "" for a cron schedule
	offset            time.Duration
	next              *time.Time
}

// after returns the first tick strictly after t, nil if there is none.
func (s *schedule) after(t time.Time) *time.Time {
	if s.sun != "" {
		n, ok := solar.Next(s.sun, t, *s.Lat, *s.Lon, s.offset)
		if !ok {
			return nil
		}
		n = n.UTC()
		return &n
	}
	n := s.spec.Next(t.In(s.loc))
	if n.IsZero() {
		return nil
	}
	n = n.UTC()
	return &n
}

func (s *schedule) sameAs(o *schedule) bool {
	return o != nil && s.Name == o.Name && s.Cron == o.Cron && s.TZ == o.TZ && s.Fires == o.Fires &&
		s.Sun == o.Sun && s.Offset == o.Offset && samePlace(s.Lat, o.Lat) && samePlace(s.Lon, o.Lon)
}

func samePlace(a, b *float64) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// rejection is an input refused as a whole, with a code and a sentence
// that says what to fix.
type rejection struct {
	code int
	msg  string
}

func (r *rejection) Error() string { return fmt.Sprintf("machine: %d: %s", r.code, r.msg) }

func rejectf(code int, format string, args ...any) *rejection {
	return &rejection{code: code, msg: fmt.Sprintf(format, args...)}
}

// failed is the error output of a rule that was skipped. A timeout's
// sentence depends only on the rule, so that replay, which does not run
// the rule, writes the same bytes; it covers the memory bound too, which
// the watchdog enforces the same way and replay takes as given as well.
func (r *rule) failed(f *failure, kind exprKind) Output {
	e := messages.OutErrorData{Code: 400, Rule: r.ID}
	if f.timeout {
		e.Kind = messages.ErrorTimeout
		e.Error = fmt.Sprintf("rule %s ran longer, or used more memory, than an expression may and was skipped; make its condition and action finish quickly (no unbounded loops)", r.ID)
	} else {
		e.Kind = messages.ErrorException
		e.Error = fmt.Sprintf("rule %s: its %s threw %s%s and the rule was skipped; fix the JavaScript", r.ID, kind, f.msg, f.where())
	}
	return Output{Type: messages.OutError, Data: e}
}

type config struct {
	states   []*stateDef
	rules    []*rule
	initial  string
	onState  string
	powerOn  string
	trans    *int     // transition_ms
	room     string   // normalised (messages.NormalLightNames); "": none
	aliases  []string // normalised, in their order; nil: none
	scheds   []*schedule
	tools    []*tool
	sources  []*sourceDef
	fns      *funcs   // nil: none
	layers   []*layer // newest first
	nextRule uint64
}

// allRules returns the configuration's own rules, then its layers'.
func (cfg *config) allRules() []*rule {
	out := slices.Clip(cfg.rules)
	for _, l := range cfg.layers {
		out = append(out, l.rules...)
	}
	return out
}

func configOf(states []*stateDef, rules []*rule, initial string, scheds []*schedule, tools []*tool, nextRule uint64) config {
	if initial == "" {
		initial = offState
	}
	return config{states: states, rules: rules, initial: initial, scheds: scheds, tools: tools, nextRule: nextRule}
}

// commit installs a validated configuration. It does not change the
// current state; callers do.
func (c *core) commit(cfg config) error {
	c.states = cfg.states
	c.stateIdx = make(map[string]*stateDef, len(cfg.states))
	for _, s := range cfg.states {
		c.stateIdx[s.Name] = s
	}
	c.rules = cfg.rules
	c.ruleIdx = make(map[string]*rule, len(cfg.rules))
	exprs := make(map[exprKey]*expr)
	factories := make(map[linkKey]goja.Callable)
	keep := func(e *expr) {
		switch {
		case e == nil:
		case e.base != nil:
			exprs[exprKey{e.kind, e.src}] = e.base
			factories[e.lkey] = e.factory
		default:
			exprs[exprKey{e.kind, e.src}] = e
		}
	}
	c.layers = cfg.layers
	for _, l := range cfg.layers {
		for _, r := range l.rules {
			c.ruleIdx[r.ID] = r
			keep(r.cond)
			keep(r.act)
		}
		keep(l.until)
		c.indexLayer(l)
	}
	c.layersChanged()
	index := make(map[string]*transIndex)
	for i, r := range cfg.rules {
		r.ord = i
		c.ruleIdx[r.ID] = r
		keep(r.cond)
		keep(r.act)
		if !r.Enabled {
			continue
		}
		ti := index[r.On]
		if ti == nil {
			ti = newTransIndex(c.vm.ToValue(r.On))
			index[r.On] = ti
		}
		ti.add(r)
	}
	c.index = index
	c.exprs, c.factories = exprs, factories
	c.initial = cfg.initial
	c.onState = cfg.onState
	c.powerOn = cfg.powerOn
	c.transition = cfg.trans
	c.room, c.aliases = cfg.room, cfg.aliases
	if c.stateIdx[c.lastOn] == nil {
		c.lastOn = "" // deleted: power on goes to on_state
	}
	c.scheds = cfg.scheds
	c.schedIdx = make(map[string]*schedule, len(cfg.scheds))
	for _, s := range cfg.scheds {
		c.schedIdx[s.Name] = s
	}
	c.tools = cfg.tools
	c.toolIdx = make(map[string]*tool, len(cfg.tools))
	for _, t := range cfg.tools {
		c.toolIdx[t.Name] = t
	}
	c.keepRuns(cfg.sources)
	c.sources = cfg.sources
	c.fns = cfg.fns
	if c.fns == nil {
		c.fns = &funcs{}
	}
	c.nextRule = cfg.nextRule
	if c.stateIdx[offState] == nil {
		return fmt.Errorf("machine: configuration without the %s state", offState)
	}
	return nil
}

func (c *core) current() config {
	return config{states: c.states, rules: c.rules, initial: c.initial, onState: c.onState, powerOn: c.powerOn, trans: c.transition, room: c.room, aliases: c.aliases, scheds: c.scheds, tools: c.tools, sources: c.sources, fns: c.fns, layers: c.layers, nextRule: c.nextRule}
}

func (c *core) defaultOff() *stateDef {
	return c.newStateDef(messages.State{Name: offState, R: messages.Num(0), G: messages.Num(0), B: messages.Num(0)})
}

func (c *core) newStateDef(s messages.State) *stateDef {
	if s.Speed != nil {
		v := *s.Speed
		s.Speed = &v
	}
	return &stateDef{State: s, js: c.vm.ToValue(s.Name)}
}
