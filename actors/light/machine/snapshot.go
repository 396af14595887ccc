package machine

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// snapshotVersion is the "v" of the snapshot format.
const snapshotVersion = 1

// snapshot is the whole state of a machine.
type snapshot struct {
	V         int                        `json:"v"`
	State     string                     `json:"state"`
	Initial   string                     `json:"initial"`
	OnState   string                     `json:"on_state,omitempty"` // omitted when not set, as before power existed
	PowerOn   string                     `json:"power_on,omitempty"` // omitted for restore, the default
	Trans     *int                       `json:"transition_ms,omitempty"`
	Room      string                     `json:"room,omitempty"`    // omitted when not set, as before names existed
	Aliases   []string                   `json:"aliases,omitempty"` // omitted when none, as before names existed
	Fade      *messages.Fade             `json:"fade,omitempty"`
	LastOn    string                     `json:"last_on,omitempty"`    // omitted when never on
	Bright    int                        `json:"brightness,omitempty"` // omitted at 100, as before the dimmer existed
	NextRule  uint64                     `json:"next_rule"`
	States    []messages.State           `json:"states"`
	Rules     []messages.Rule            `json:"rules"`
	Vars      map[string]json.RawMessage `json:"vars"`
	Timers    []messages.Timer           `json:"timers"`
	Schedules []messages.Schedule        `json:"schedules"`
	Tools     []messages.Tool            `json:"tools,omitempty"`   // omitted when none, as before tools existed
	Sources   []json.RawMessage          `json:"sources,omitempty"` // omitted when none, as before sources existed
	LastRuns  map[string]time.Time       `json:"last_runs,omitempty"`
	Level     int                        `json:"level,omitempty"`     // omitted at 0, as before levels existed
	Intents   []messages.Intent          `json:"intents,omitempty"`   // omitted when none, as before intents existed
	Functions []messages.Function        `json:"functions,omitempty"` // omitted when none, as before functions existed
	Layers    []messages.Layer           `json:"layers,omitempty"`    // omitted when none, as before layers existed
}

// Snapshot returns the machine's whole state (configuration, current
// state, variables, pending timers, schedules with their next tick, custom
// tools and functions, layers, learned intents and the rule id counter) as
// deterministic bytes: two machines in the same state give the same bytes.
func (m *Machine) Snapshot() ([]byte, error) {
	c := m.c
	s := snapshot{
		V:         snapshotVersion,
		State:     c.cur,
		Initial:   c.initial,
		OnState:   c.onState,
		PowerOn:   c.powerOn,
		Trans:     copyInt(c.transition),
		Room:      c.room,
		Aliases:   slices.Clone(c.aliases),
		Fade:      c.fadeNow(),
		LastOn:    c.lastOn,
		NextRule:  c.nextRule,
		States:    c.stateList(),
		Rules:     c.ruleList(),
		Vars:      c.varMap(),
		Timers:    m.PendingTimers(),
		Schedules: m.NextSchedules(),
		Level:     c.level,
		Intents:   c.intentList(),
		Layers:    c.layerList(),
	}
	if c.bright != messages.MaxBrightness {
		s.Bright = c.bright
	}
	if len(c.tools) > 0 {
		s.Tools = c.toolList()
	}
	if len(c.sources) > 0 {
		s.Sources = c.sourceList()
	}
	if len(c.fns.list) > 0 {
		s.Functions = c.functionList()
	}
	s.LastRuns = c.lastRuns()
	b, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("machine: snapshot: %w", err)
	}
	return b, nil
}

// Clone returns an independent machine in the same state as m, with the
// same options: a dry run applies an input to it to see what the input
// would do, leaving m as it is. Close it after use.
func (m *Machine) Clone() (*Machine, error) {
	b, err := m.Snapshot()
	if err != nil {
		return nil, err
	}
	opts := m.c.opts
	return Restore(b, func(o *options) { *o = opts })
}

// Restore returns a machine in the state a snapshot recorded: continuing
// from it gives the same outputs as never having snapshotted.
func Restore(b []byte, opts ...Option) (*Machine, error) {
	var s snapshot
	if err := messages.Decode(b, &s); err != nil {
		return nil, fmt.Errorf("machine: restore: %w", err)
	}
	if s.V != snapshotVersion {
		return nil, fmt.Errorf("machine: restore: snapshot version %d, want %d", s.V, snapshotVersion)
	}
	c := newCore(opts)
	fail := func(err error) (*Machine, error) {
		c.wd.close()
		return nil, fmt.Errorf("machine: restore: %w", err)
	}
	c.restoring = true
	fl, r := c.checkFunctions(s.Functions)
	if r != nil {
		return fail(r)
	}
	fs, r := c.newFuncs(fl)
	if r != nil {
		return fail(r)
	}
	add, r := c.checkStates(s.States, fs)
	if r != nil {
		return fail(r)
	}
	states := mergeStates([]*stateDef{c.defaultOff()}, add)
	stateIdx := make(map[string]*stateDef, len(states))
	for _, st := range states {
		stateIdx[st.Name] = st
	}
	rules, next, r := c.checkRules(s.Rules, stateIdx, layerIDs(s.Layers), nil, max(s.NextRule, 1), fs)
	if r != nil {
		return fail(r)
	}
	layers, next, r := c.checkLayers(s.Layers, stateIdx, ruleIndex(rules), next, fs)
	if r != nil {
		return fail(r)
	}
	scheds, r := c.checkSchedules(s.Schedules)
	if r != nil {
		return fail(r)
	}
	tools, r := c.checkTools(s.Tools)
	if r != nil {
		return fail(r)
	}
	sources, r := checkSources(s.Sources, tools, nil, true)
	if r != nil {
		return fail(r)
	}
	c.restoring = false
	if s.Level > Level {
		return fail(fmt.Errorf("level %d is newer than this lumen knows (%d); upgrade lumen", s.Level, Level))
	}
	c.level = s.Level
	if stateIdx[s.State] == nil {
		return fail(fmt.Errorf("current state %q is not among the states", s.State))
	}
	if s.Initial != "" && stateIdx[s.Initial] == nil {
		return fail(fmt.Errorf("initial state %q is not among the states", s.Initial))
	}
	if s.OnState != "" && (s.OnState == offState || stateIdx[s.OnState] == nil) {
		return fail(fmt.Errorf("on_state %q is not among the states besides off", s.OnState))
	}
	if s.Bright != 0 && (s.Bright < messages.MinBrightness || s.Bright > messages.MaxBrightness) {
		return fail(fmt.Errorf("brightness %d is out of range", s.Bright))
	}
	cfg := configOf(states, rules, s.Initial, scheds, tools, next)
	powerOn, r := checkPowerOn(s.PowerOn, stateIdx)
	if r != nil {
		return fail(r)
	}
	if r := checkFade("transition_ms", s.Trans); r != nil {
		return fail(r)
	}
	room, aliases, err := messages.NormalLightNames(s.Room, s.Aliases)
	if err != nil {
		return fail(err)
	}
	cfg.sources, cfg.fns, cfg.layers, cfg.onState, cfg.powerOn, cfg.trans = sources, fs, layers, s.OnState, powerOn, copyInt(s.Trans)
	cfg.room, cfg.aliases = room, aliases
	if err := c.commit(cfg); err != nil {
		return fail(err)
	}
	c.setState(s.State)
	c.lastOn = s.LastOn
	if s.Fade != nil {
		f := *s.Fade
		f.Start = f.Start.UTC()
		c.fade = &f
	}
	if s.Bright != 0 {
		c.setBright(s.Bright)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Vars)) {
		v, err := c.parseValue(s.Vars[name])
		if err != nil {
			return fail(fmt.Errorf("variable %q: %v", name, err))
		}
		c.vars[name] = v
	}
	for _, t := range s.Timers {
		c.timers[t.Name] = t.Deadline.UTC()
	}
	for _, in := range s.Intents {
		in.Learned = in.Learned.UTC()
		c.intents[in.Phrase] = in
	}
	for name, at := range s.LastRuns {
		if slices.ContainsFunc(c.sources, func(d *sourceDef) bool { return d.def.Name == name }) {
			c.runs[name] = at.UTC()
		}
	}
	return wrap(c), nil
}
