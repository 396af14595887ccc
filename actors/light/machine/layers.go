package machine

import (
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/messages"
)

// Temporary layers: rules added together with a lifetime (append_rules
// with a layer). While a layer lives its rules are tried before those of
// older layers and before the light's own rules; when its lifetime ends
// the light removes it by itself, with a layer output, and returns to the
// state it had when the layer began (unless it was added with restore
// false). Layers are configuration (get, export, apply, snapshots); what
// is left of a layer's fires is its state, changed by firing.
//
// A layer lives for
//
//   - fires N: its rules fire N times; the next input one of them would
//     have matched (from and on: conditions are not evaluated) ends it.
//     With restore, that input does nothing else; without, it goes on to
//     the remaining rules.
//   - ms: until its deadline, a durable one the actor arms like a timer
//     (the layer input).
//   - until: until the first input after which the condition holds (not
//     the input that adds the layer). It is evaluated after every input,
//     newest layer first; one that throws or runs out of time is taken
//     as false, with an error output naming the layer.

// layerKind is a layer's lifetime.
type layerKind uint8

const (
	layerFires layerKind = iota
	layerMs
	layerUntil
)

// layer is one live layer.
type layer struct {
	name     string
	rules    []*rule // in insertion order
	index    map[string]*transIndex
	kind     layerKind
	fires    int       // layerFires: how many more times its rules fire
	deadline time.Time // layerMs
	until    *expr     // layerUntil
	untilSrc string
	restore  bool
	began    string // the state the light was in when it began
	fresh    bool   // added by the input being applied: its until waits for the next
}

// spent reports whether the layer's fires are used up: the next input
// one of its rules would match ends it.
func (l *layer) spent() bool { return l.kind == layerFires && l.fires <= 0 }

// withRules is a copy of l with rules, for a change of its rules.
func (l *layer) withRules(rules []*rule) *layer {
	cp := *l
	cp.rules = rules
	return &cp
}

// index builds the layer's transition index, as commit does the light's.
func (c *core) indexLayer(l *layer) {
	l.index = make(map[string]*transIndex)
	for i, r := range l.rules {
		r.ord = i
		if !r.Enabled {
			continue
		}
		ti := l.index[r.On]
		if ti == nil {
			ti = newTransIndex(c.vm.ToValue(r.On))
			l.index[r.On] = ti
		}
		ti.add(r)
	}
}

// layerTrans gives, for one transition, the layers with candidate rules
// in a state, newest first, and their candidates: one lookup for all the
// layers of an input. It is rebuilt lazily whenever the layers change
// (layersChanged).
type layerTrans struct {
	js      goja.Value // the transition name as a JS string
	byState map[string][]layerCands
}

type layerCands struct {
	l     *layer
	cands []*rule
}

// layerCandidates returns the layers that have candidate rules for
// transition in state, newest first, and the transition as a JS string
// (nil when no layer has a rule on it).
func (c *core) layerCandidates(transition, state string) ([]layerCands, goja.Value) {
	lt := c.layerTr[transition]
	if lt == nil {
		if c.layerTr == nil {
			c.layerTr = make(map[string]*layerTrans)
		}
		lt = &layerTrans{byState: make(map[string][]layerCands)}
		for _, l := range c.layers {
			if ti := l.index[transition]; ti != nil {
				lt.js = ti.js
				break
			}
		}
		c.layerTr[transition] = lt
	}
	if lt.js == nil {
		return nil, nil
	}
	lc, ok := lt.byState[state]
	if !ok {
		for _, l := range c.layers {
			if ti := l.index[transition]; ti != nil {
				if cands := ti.candidates(state); len(cands) > 0 {
					lc = append(lc, layerCands{l, cands})
				}
			}
		}
		lt.byState[state] = lc
	}
	return lc, lt.js
}

// layersChanged drops what is derived from the layers: the candidates
// and the count of until conditions.
func (c *core) layersChanged() {
	clear(c.layerTr)
	c.untils = 0
	for _, l := range c.layers {
		if l.kind == layerUntil {
			c.untils++
		}
	}
}

func (c *core) layerIdx(name string) int {
	return slices.IndexFunc(c.layers, func(l *layer) bool { return l.name == name })
}

// allRules returns the light's own rules, then each layer's, newest
// layer first.
func (c *core) allRules() []*rule {
	if len(c.layers) == 0 {
		return c.rules
	}
	out := slices.Clip(c.rules)
	for _, l := range c.layers {
		out = append(out, l.rules...)
	}
	return out
}

// layerOf returns the layer rule r belongs to, nil for the light's own.
func (c *core) layerOf(r *rule) *layer {
	for _, l := range c.layers {
		if slices.Contains(l.rules, r) {
			return l
		}
	}
	return nil
}

// ---- ending layers ----

// endLayer removes layer l and reports it; with restore the light then
// enters the state l began in (the caller's state output does it).
func (c *core) endLayer(l *layer, by string, restore, late bool, out []Output) []Output {
	if i := slices.Index(c.layers, l); i >= 0 {
		c.layers = slices.Delete(slices.Clone(c.layers), i, i+1)
	}
	for _, r := range l.rules {
		delete(c.ruleIdx, r.ID)
	}
	c.layersChanged()
	return append(out, Output{Type: messages.OutLayer, Data: messages.OutLayerData{Name: l.name, EndedBy: by, Restored: restore, Late: late}})
}

// restoreTo enters the state a layer began in after it ended, as the
// state output of the input that ended it.
func (c *core) restoreTo(l *layer, transition string, out []Output) []Output {
	return c.enter(l.began, nil, transition, out).Outputs
}

// layerInput ends a layer whose deadline came.
func (c *core) layerInput(in *messages.InLayerData) Result {
	if in.Name == "" {
		return c.reject(400, "layer: name is empty; give the layer's name")
	}
	i := c.layerIdx(in.Name)
	if i < 0 || c.layers[i].kind != layerMs || !c.layers[i].deadline.Equal(in.Deadline) {
		return c.ignored("", fmt.Sprintf("layer %s has no deadline at %s (it ended or was changed)", in.Name, in.Deadline.UTC().Format(time.RFC3339Nano)), nil)
	}
	l := c.layers[i]
	out := c.endLayer(l, messages.LayerEndMs, l.restore, in.Late, nil)
	if l.restore {
		return c.enter(l.began, nil, "", out)
	}
	return Result{Outputs: out, State: c.cur}
}

// untilEnds evaluates, after an input, the until condition of every
// layer that has one and did not begin with this input, newest first,
// and ends those that hold; the layers that began are not fresh after. transition is the one the input fired, ""
// for none. It returns the outputs, with the layers' ends appended.
func (c *core) untilEnds(transition string, out []Output) []Output {
	if c.untils == 0 && !c.freshLayers {
		return out
	}
	var tr goja.Value = goja.Undefined()
	switch {
	case c.firedJS != nil:
		tr = c.firedJS
	case transition != "":
		tr = c.vm.ToValue(transition)
	}
	for i := 0; c.untils > 0 && i < len(c.layers); i++ {
		l := c.layers[i]
		if l.kind != layerUntil || l.fresh {
			continue
		}
		var ok bool
		var f *failure
		if slices.Contains(c.timedOutUntil, l.name) {
			f = &failure{timeout: true}
		} else {
			ok, f = c.condition(l.until, tr)
		}
		if f != nil {
			out = append(out, l.failed(f))
			if f.timeout {
				c.rng.rekey(c.seq, "layer "+l.name)
			}
			continue
		}
		if !ok {
			continue
		}
		out = c.endLayer(l, messages.LayerEndUntil, l.restore, false, out)
		if l.restore {
			out = c.restoreTo(l, "", out)
		}
		i--
	}
	if c.freshLayers {
		for _, l := range c.layers {
			l.fresh = false
		}
		c.freshLayers = false
	}
	return out
}

// failed is the error output of a layer's until condition that did not
// complete; like a rule's timeout, the sentence of a timeout depends only
// on the layer, so that replay writes the same bytes.
func (l *layer) failed(f *failure) Output {
	e := messages.OutErrorData{Code: 400, Layer: l.name}
	if f.timeout {
		e.Kind = messages.ErrorTimeout
		e.Error = fmt.Sprintf("layer %s: its until condition ran longer, or used more memory, than an expression may and was taken as false; make it finish quickly", l.name)
	} else {
		e.Kind = messages.ErrorException
		e.Error = fmt.Sprintf("layer %s: its until condition threw %s%s and was taken as false; fix the JavaScript", l.name, f.msg, f.where())
	}
	return Output{Type: messages.OutError, Data: e}
}

// ---- adding and deleting layers ----

// newLayerName is the first layer<N> no layer has.
func (c *core) newLayerName() string {
	for n := 1; ; n++ {
		name := "layer" + strconv.Itoa(n)
		if c.layerIdx(name) < 0 {
			return name
		}
	}
}

// checkUntil compiles a layer's until condition for the functions fs.
func (c *core) checkUntil(name, src string, fs *funcs) (*expr, *rejection) {
	label := fmt.Sprintf("layer %q's until", name)
	if r := c.checkExpr(label, src); r != nil {
		return nil, r
	}
	e, se := c.compile(kindCondition, src, fs)
	if se != nil {
		return nil, rejectf(400, "%s has a syntax error %s; write one JavaScript expression, e.g. getData('guests') === 0", label, se)
	}
	if msg := fs.badCall(e.refs, nil); msg != "" {
		return nil, rejectf(400, "%s %s", label, msg)
	}
	return e, nil
}

// opAppendLayer adds append_rules' rules as a layer.
func (c *core) opAppendLayer(in *messages.InConfigData) ([]Output, *rejection) {
	spec := in.Layer
	if len(in.Rules) == 0 {
		return nil, rejectf(400, "append_rules needs at least one rule in rules; a layer holds at least one rule")
	}
	if err := spec.Check(); err != nil {
		return nil, rejectf(400, "append_rules: %v", err)
	}
	name := spec.Name
	switch {
	case name == "":
		name = c.newLayerName()
	case c.layerIdx(name) >= 0:
		return nil, rejectf(409, "append_rules: the light has a layer %q already; name the new one otherwise, or end that one first (delete_layer)", name)
	}
	if len(c.layers) >= messages.MaxLayers {
		return nil, rejectf(409, "append_rules: the light has %d layers, the most it takes; end some first (delete_layer)", len(c.layers))
	}
	rules, next, r := c.checkRules(in.Rules, c.stateIdx, c.ruleIdx, nil, c.nextRule, c.fns)
	if r != nil {
		return nil, rejectf(r.code, "layer %q: %s", name, r.msg)
	}
	l := &layer{name: name, rules: rules, restore: spec.Restore == nil || *spec.Restore, began: c.cur, fresh: true}
	switch {
	case spec.Fires != nil:
		l.kind, l.fires = layerFires, *spec.Fires
	case spec.Ms != nil:
		l.kind, l.deadline = layerMs, c.now.Add(time.Duration(*spec.Ms)*time.Millisecond)
	default:
		l.kind, l.untilSrc = layerUntil, spec.Until
		if l.until, r = c.checkUntil(name, spec.Until, c.fns); r != nil {
			return nil, r
		}
	}
	cfg := c.current()
	cfg.layers = append([]*layer{l}, c.layers...)
	cfg.nextRule = next
	if r := c.checkSize(cfg.states, cfg.allRules()); r != nil {
		return nil, r
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	c.freshLayers = true
	data := messages.OutConfigData{Op: in.Op, Layers: []string{name}}
	for _, r := range rules {
		data.Rules = append(data.Rules, r.ID)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

// opDeleteLayer ends a layer early, restoring the state it began in if
// it was added with restore.
func (c *core) opDeleteLayer(in *messages.InConfigData) ([]Output, *rejection) {
	if in.Name == "" {
		return nil, rejectf(400, "delete_layer: name is empty; give the name of the layer to end")
	}
	i := c.layerIdx(in.Name)
	if i < 0 {
		return nil, rejectf(404, "layer %q does not exist (it may have ended already); %s", in.Name, c.layerNames())
	}
	l := c.layers[i]
	cfg := c.current()
	cfg.layers = slices.Delete(slices.Clone(c.layers), i, i+1)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	out := []Output{
		{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, Layers: []string{l.name}}},
		{Type: messages.OutLayer, Data: messages.OutLayerData{Name: l.name, EndedBy: messages.LayerEndDelete, Restored: l.restore}},
	}
	if l.restore {
		out = c.restoreTo(l, "", out)
	}
	return out, nil
}

// layerNames is ": a, b" for a sentence, "" when there are no layers.
func (c *core) layerNames() string {
	if len(c.layers) == 0 {
		return "the light has no layers"
	}
	names := make([]string, len(c.layers))
	for i, l := range c.layers {
		names[i] = l.name
	}
	return "the light's layers are " + strings.Join(names, ", ")
}

// checkLayers validates layers given together (apply, a snapshot) for
// the states and functions they may name; taken are the rule ids in use
// (the light's own rules of the same configuration). Each layer's rules
// get ids as appended rules do. It returns the layers, in the order
// given (the order they are tried), and the next rule number.
func (c *core) checkLayers(list []messages.Layer, states map[string]*stateDef, taken map[string]*rule, next uint64, fs *funcs) ([]*layer, uint64, *rejection) {
	if len(list) > messages.MaxLayers && c.limited() {
		return nil, 0, rejectf(400, "the configuration has %d layers; a light has at most %d", len(list), messages.MaxLayers)
	}
	taken = maps.Clone(taken)
	if taken == nil {
		taken = make(map[string]*rule)
	}
	// The ids layers give are reserved first, so that a rule given
	// without one does not take the id a later layer gives.
	given := make(map[string]bool)
	for _, ml := range list {
		for _, r := range ml.Rules {
			if r.ID != "" {
				given[r.ID] = true
			}
		}
	}
	seen := make(map[string]bool, len(list))
	out := make([]*layer, 0, len(list))
	for i, ml := range list {
		switch {
		case ml.Name == "":
			return nil, 0, rejectf(400, "layers[%d] has no name; give every layer a name", i)
		case seen[ml.Name]:
			return nil, 0, rejectf(409, "layer %q is listed twice; list each layer once", ml.Name)
		}
		if r := c.checkName("layer", ml.Name); r != nil {
			return nil, 0, r
		}
		seen[ml.Name] = true
		label := fmt.Sprintf("layer %q", ml.Name)
		n := 0
		for _, set := range []bool{ml.FiresLeft != nil, ml.Deadline != nil, ml.Until != ""} {
			if set {
				n++
			}
		}
		switch {
		case n != 1:
			return nil, 0, rejectf(400, "%s: give exactly one of fires_left, deadline or until", label)
		case ml.FiresLeft != nil && *ml.FiresLeft < 0:
			return nil, 0, rejectf(400, "%s: fires_left is %d; give 0 or more", label, *ml.FiresLeft)
		case len(ml.Rules) == 0:
			return nil, 0, rejectf(400, "%s has no rules; a layer holds at least one rule", label)
		case ml.BeganState == "":
			return nil, 0, rejectf(400, "%s: began_state is empty; give the state the light returns to when the layer ends", label)
		case states[ml.BeganState] == nil:
			return nil, 0, rejectf(404, "%s: began_state names state %q, which is not in states; add it or pick another", label, ml.BeganState)
		}
		// Reserve the ids later layers give, not this one's.
		reserved := make(map[string]*rule, len(taken)+len(given))
		for id, r := range taken {
			reserved[id] = r
		}
		mine := make(map[string]bool, len(ml.Rules))
		for _, r := range ml.Rules {
			mine[r.ID] = true
		}
		for id := range given {
			if !mine[id] && reserved[id] == nil {
				reserved[id] = &rule{}
			}
		}
		rules, nx, r := c.checkRules(ml.Rules, states, reserved, nil, next, fs)
		if r != nil {
			return nil, 0, rejectf(r.code, "%s: %s", label, r.msg)
		}
		next = nx
		for _, r := range rules {
			taken[r.ID] = r
		}
		l := &layer{name: ml.Name, rules: rules, restore: ml.Restore, began: ml.BeganState, fresh: !c.restoring}
		c.freshLayers = c.freshLayers || l.fresh
		switch {
		case ml.FiresLeft != nil:
			l.kind, l.fires = layerFires, *ml.FiresLeft
		case ml.Deadline != nil:
			l.kind, l.deadline = layerMs, ml.Deadline.UTC()
		default:
			l.kind, l.untilSrc = layerUntil, ml.Until
			if l.until, r = c.checkUntil(ml.Name, ml.Until, fs); r != nil {
				return nil, 0, r
			}
		}
		out = append(out, l)
	}
	return out, next, nil
}

// ---- reading layers ----

// layerList returns the layers as get and export show them, in the order
// their rules are tried (newest first); nil when there are none.
func (c *core) layerList() []messages.Layer {
	if len(c.layers) == 0 {
		return nil
	}
	out := make([]messages.Layer, len(c.layers))
	for i, l := range c.layers {
		ml := messages.Layer{Name: l.name, Rules: make([]messages.Rule, len(l.rules)), Restore: l.restore, BeganState: l.began}
		for j, r := range l.rules {
			ml.Rules[j] = r.Rule
		}
		switch l.kind {
		case layerFires:
			n := l.fires
			ml.FiresLeft = &n
		case layerMs:
			d := l.deadline
			ml.Deadline = &d
		case layerUntil:
			ml.Until = l.untilSrc
		}
		out[i] = ml
	}
	return out
}

// LayerDeadlines returns the deadlines of the layers that have one, by
// deadline, then name, for the actor to arm (a layer input ends each).
func (m *Machine) LayerDeadlines() []messages.Timer {
	var out []messages.Timer
	for _, l := range m.c.layers {
		if l.kind == layerMs {
			out = append(out, messages.Timer{Name: l.name, Deadline: l.deadline})
		}
	}
	slices.SortFunc(out, func(a, b messages.Timer) int {
		if c := a.Deadline.Compare(b.Deadline); c != 0 {
			return c
		}
		return strings.Compare(a.Name, b.Name)
	})
	return out
}

// LayerRules returns the rules of the live layers, newest layer first;
// nil when there are none.
func (m *Machine) LayerRules() []messages.Rule {
	var out []messages.Rule
	for _, l := range m.c.layers {
		for _, r := range l.rules {
			out = append(out, r.Rule)
		}
	}
	return out
}
