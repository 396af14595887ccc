package machine

import (
	"maps"
	"slices"
	"strings"

	"github.com/lumen-home/lumen/messages"
)

// The config input: its ops change the states, rules and schedules
// (tools and sources have theirs in tools.go and sources.go), each
// validated, committed whole and reported in outputs.

func (c *core) configInput(in *messages.InConfigData) Result {
	if r := checkFields(in); r != nil {
		return c.rejected(r)
	}
	var (
		out []Output
		r   *rejection
	)
	switch in.Op {
	case messages.OpApply:
		out, r = c.opApply(in)
	case messages.OpCreateState:
		out, r = c.opCreateState(in)
	case messages.OpDeleteState:
		out, r = c.opDeleteState(in)
	case messages.OpAppendRules:
		if in.Layer != nil {
			out, r = c.opAppendLayer(in)
		} else {
			out, r = c.opAppendRules(in)
		}
	case messages.OpDeleteLayer:
		out, r = c.opDeleteLayer(in)
	case messages.OpDeleteRules:
		out, r = c.opDeleteRules(in)
	case messages.OpEnableRules, messages.OpDisableRules:
		out, r = c.opEnableRules(in)
	case messages.OpCreateSchedule:
		out, r = c.opCreateSchedule(in)
	case messages.OpDeleteSchedule:
		out, r = c.opDeleteSchedule(in)
	case messages.OpDefineTool:
		out, r = c.opDefineTool(in)
	case messages.OpDeleteTool:
		out, r = c.opDeleteTool(in)
	case messages.OpCreateSource:
		out, r = c.opCreateSource(in)
	case messages.OpDeleteSource:
		out, r = c.opDeleteSource(in)
	case messages.OpDefineTransition:
		out, r = c.opDefineTransition(in)
	case messages.OpDeleteTransition:
		out, r = c.opDeleteTransition(in)
	case messages.OpDefineFunction:
		out, r = c.opDefineFunction(in)
	case messages.OpDeleteFunction:
		out, r = c.opDeleteFunction(in)
	case messages.OpSetNames:
		out, r = c.opSetNames(in)
	}
	if r != nil {
		return c.rejected(r)
	}
	res := Result{Outputs: out, State: c.cur}
	if last := out[len(out)-1]; last.Type == messages.OutState {
		res.Changed = last.Data.(messages.OutStateData).Changed
	}
	deleted := ""
	if in.Op == messages.OpDeleteTransition {
		deleted = in.Name
	}
	res.Outputs = c.dropIntents(res.Outputs, deleted)
	return res
}

func (c *core) opApply(in *messages.InConfigData) ([]Output, *rejection) {
	fl, r := c.checkFunctions(in.Functions)
	if r != nil {
		return nil, r
	}
	fs, r := c.newFuncs(fl)
	if r != nil {
		return nil, r
	}
	add, r := c.checkStates(in.States, fs)
	if r != nil {
		return nil, r
	}
	states := mergeStates([]*stateDef{c.defaultOff()}, add)
	stateIdx := make(map[string]*stateDef, len(states))
	for _, s := range states {
		stateIdx[s.Name] = s
	}
	var kept map[int]string
	if c.limited() {
		kept = c.keptRuleIDs(in.Rules)
	}
	reserved := layerIDs(in.Layers)
	rules, next, r := c.checkRules(in.Rules, stateIdx, reserved, kept, c.nextRule, fs)
	if r != nil {
		return nil, r
	}
	layers, next, r := c.checkLayers(in.Layers, stateIdx, ruleIndex(rules), next, fs)
	if r != nil {
		return nil, r
	}
	if r := c.checkSize(states, (&config{rules: rules, layers: layers}).allRules()); r != nil {
		return nil, r
	}
	switch in.VarsOp {
	case "", messages.VarsReplace:
	case messages.VarsKeep:
		if in.Vars != nil {
			return nil, rejectf(400, "vars_op keep takes no vars; give vars_op replace to change them")
		}
	default:
		return nil, rejectf(400, "vars_op %q is neither keep nor replace", in.VarsOp)
	}
	vars := make(map[string]*value, len(in.Vars))
	for _, name := range slices.Sorted(maps.Keys(in.Vars)) {
		if name == "" {
			return nil, rejectf(400, "vars: a variable has an empty name; give every variable a name")
		}
		v, err := c.parseValue(in.Vars[name])
		if err != nil {
			return nil, rejectf(400, "vars: the value of %q %s; give valid JSON", name, err)
		}
		if r := c.checkVar(name, v); r != nil {
			return nil, rejectf(r.code, "vars: %s", r.msg)
		}
		vars[name] = v
	}
	if in.Initial != "" && stateIdx[in.Initial] == nil {
		return nil, rejectf(404, "initial names state %q, which is not in states; add it or pick another", in.Initial)
	}
	switch {
	case in.OnState == offState:
		return nil, rejectf(400, "on_state is where power on goes, so it cannot be %s; name another state, or leave it out for the first state", offState)
	case in.OnState != "" && stateIdx[in.OnState] == nil:
		return nil, rejectf(404, "on_state names state %q, which is not in states; add it or pick another", in.OnState)
	}
	powerOn, r := checkPowerOn(in.PowerOn, stateIdx)
	if r != nil {
		return nil, r
	}
	if r := checkFade("transition_ms", in.TransitionMs); r != nil {
		return nil, r
	}
	room, aliases, err := messages.NormalLightNames(in.Room, in.Aliases)
	if err != nil {
		return nil, rejectf(400, "%v", err)
	}
	target, r := c.applyTarget(in, stateIdx)
	if r != nil {
		return nil, r
	}
	scheds, r := c.checkSchedules(in.Schedules)
	if r != nil {
		return nil, r
	}
	tools, r := c.checkTools(in.Tools)
	if r != nil {
		return nil, r
	}
	sources, r := checkSources(in.Sources, tools, in.Plugins, false, c.sourceChecks()...)
	if r != nil {
		return nil, r
	}

	old := c.scheds
	cfg := configOf(states, rules, in.Initial, scheds, tools, next)
	cfg.sources, cfg.fns, cfg.layers, cfg.onState, cfg.powerOn, cfg.trans = sources, fs, layers, in.OnState, powerOn, copyInt(in.TransitionMs)
	cfg.room, cfg.aliases = room, aliases
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	varOuts := c.applyVars(in.VarsOp, vars)
	data := messages.OutConfigData{Op: in.Op}
	for _, s := range states {
		data.States = append(data.States, s.Name)
	}
	for _, r := range rules {
		data.Rules = append(data.Rules, r.ID)
	}
	for _, s := range scheds {
		data.Schedules = append(data.Schedules, s.Name)
	}
	for _, t := range tools {
		data.Tools = append(data.Tools, t.Name)
	}
	for _, s := range sources {
		data.Sources = append(data.Sources, s.def.Name)
	}
	data.Functions = fs.names()
	for _, l := range layers {
		data.Layers = append(data.Layers, l.name)
	}
	out := append([]Output{{Type: messages.OutConfig, Data: data}}, varOuts...)
	for _, s := range old {
		if c.schedIdx[s.Name] == nil {
			out = append(out, Output{Type: messages.OutSchedule, Data: messages.OutScheduleData{Op: scheduleDelete, Schedule: s.Schedule}})
		}
	}
	out = c.scheduleSets(out, scheds)
	return c.moveTo(target, out), nil
}

// applyTarget is the state apply leaves the light in. From level 2: the
// state the input names, else the current one, unless the configuration
// removes it: then initial. Before: initial, else the current state if it
// is kept, else off.
func (c *core) applyTarget(in *messages.InConfigData, states map[string]*stateDef) (string, *rejection) {
	if !c.keepsState() {
		switch {
		case in.State != "":
			return "", rejectf(400, "config: apply takes state from check level 2 on; this light is at level %d", c.level)
		case in.Initial != "":
			return in.Initial, nil
		case states[c.cur] == nil:
			return offState, nil
		}
		return c.cur, nil
	}
	switch {
	case in.State != "":
		if states[in.State] == nil {
			return "", rejectf(404, "state names %q, which is not in states; add it to states or name another", in.State)
		}
		return in.State, nil
	case states[c.cur] != nil:
		return c.cur, nil
	case in.Initial != "":
		return in.Initial, nil
	}
	return offState, nil
}

func (c *core) scheduleSets(out []Output, scheds []*schedule) []Output {
	for _, s := range scheds {
		out = append(out, Output{Type: messages.OutSchedule, Data: messages.OutScheduleData{Op: scheduleSet, Schedule: s.Schedule, Next: copyTime(s.next)}})
	}
	return out
}

// moveTo enters state to after a configuration change, reporting it only
// if the state changed.
func (c *core) moveTo(to string, out []Output) []Output {
	if to == c.cur {
		c.setState(to) // the state may have been redefined
		return out
	}
	return c.enter(to, nil, "", out).Outputs
}

func (c *core) opCreateState(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.States) == 0 {
		return nil, rejectf(400, "create_state needs at least one state in states")
	}
	add, r := c.checkStates(in.States, c.fns)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.states = mergeStates(c.states, add)
	if r := c.checkSize(cfg.states, cfg.allRules()); r != nil {
		return nil, r
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	c.setState(c.cur)
	data := messages.OutConfigData{Op: in.Op}
	for _, s := range add {
		data.States = append(data.States, s.Name)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

func (c *core) opDeleteState(in *messages.InConfigData) ([]Output, *rejection) {
	switch {
	case in.Name == "":
		return nil, rejectf(400, "delete_state: name is empty; give the name of the state to delete")
	case in.Name == offState:
		return nil, rejectf(409, "the %s state is built in and cannot be deleted; recolor it with create_state instead", offState)
	case c.stateIdx[in.Name] == nil:
		return nil, rejectf(404, "state %q does not exist; nothing to delete", in.Name)
	}
	var users []string
	for _, r := range c.allRules() {
		if r.To == in.Name || (!r.wild && r.From == in.Name) {
			users = append(users, r.ID)
		}
	}
	if len(users) > 0 {
		return nil, rejectf(409, "state %q is used by rules %s; delete or change those rules first", in.Name, strings.Join(users, ", "))
	}
	for _, l := range c.layers {
		if l.began == in.Name {
			return nil, rejectf(409, "state %q is where layer %s returns when it ends; end the layer first (delete_layer %s)", in.Name, l.name, l.name)
		}
	}
	cfg := c.current()
	cfg.states = slices.DeleteFunc(slices.Clone(c.states), func(s *stateDef) bool { return s.Name == in.Name })
	if cfg.initial == in.Name {
		cfg.initial = offState
	}
	if cfg.onState == in.Name {
		cfg.onState = ""
	}
	if cfg.powerOn == messages.PowerOnState+" "+in.Name {
		cfg.powerOn = ""
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	out := []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, States: []string{in.Name}}}}
	if c.cur == in.Name {
		to := offState
		if c.keepsState() {
			to = c.initial
		}
		return c.enter(to, nil, "", out).Outputs, nil
	}
	return out, nil
}

func (c *core) opAppendRules(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Rules) == 0 {
		return nil, rejectf(400, "append_rules needs at least one rule in rules")
	}
	add, next, r := c.checkRules(in.Rules, c.stateIdx, c.ruleIdx, nil, c.nextRule, c.fns)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.rules = append(slices.Clip(c.rules), add...)
	cfg.nextRule = next
	if r := c.checkSize(cfg.states, cfg.allRules()); r != nil {
		return nil, r
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	data := messages.OutConfigData{Op: in.Op}
	for _, r := range add {
		data.Rules = append(data.Rules, r.ID)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

func (c *core) opDeleteRules(in *messages.InConfigData) ([]Output, *rejection) {
	del := make(map[*rule]bool)
	switch {
	case len(in.IDs) > 0 && in.Match != nil:
		return nil, rejectf(400, "delete_rules: give ids or match, not both")
	case len(in.IDs) > 0:
		var unknown []string
		for _, id := range in.IDs {
			if r := c.ruleIdx[id]; r != nil {
				del[r] = true
			} else if !slices.Contains(unknown, id) {
				unknown = append(unknown, id)
			}
		}
		if len(unknown) > 0 {
			return nil, rejectf(404, "delete_rules: no rule has id %s; nothing was deleted, check the ids with get", strings.Join(unknown, ", "))
		}
		for _, id := range in.IDs {
			if l := c.layerOf(c.ruleIdx[id]); l != nil {
				return nil, rejectf(409, "delete_rules: rule %s belongs to layer %s, which ends by itself; end the layer now with delete_layer %s, or disable the rule; nothing was deleted", id, l.name, l.name)
			}
		}
	case in.Match != nil && (in.Match.From != "" || in.Match.On != "" || in.Match.To != ""):
		m := in.Match
		for _, r := range c.rules {
			if (m.From == "" || r.From == m.From) && (m.On == "" || r.On == m.On) && (m.To == "" || r.To == m.To) {
				del[r] = true
			}
		}
		if len(del) == 0 {
			return nil, rejectf(404, "delete_rules: no rule has from %q, on %q, to %q (empty matches any); nothing was deleted", m.From, m.On, m.To)
		}
	default:
		return nil, rejectf(400, "delete_rules: give ids, or match with at least one of from, on, to")
	}
	cfg := c.current()
	cfg.rules = make([]*rule, 0, len(c.rules)-len(del))
	data := messages.OutConfigData{Op: in.Op}
	for _, r := range c.rules {
		if del[r] {
			data.Rules = append(data.Rules, r.ID)
		} else {
			cfg.rules = append(cfg.rules, r)
		}
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

// opEnableRules enables or disables rules by id, the light's own or a
// layer's: a disabled rule keeps its place and id but is not tried.
// Every id must name a rule.
func (c *core) opEnableRules(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.IDs) == 0 {
		return nil, rejectf(400, "%s: ids is empty; give the ids of the rules, e.g. [\"r3\"]", in.Op)
	}
	var unknown []string
	ids := make(map[string]bool, len(in.IDs))
	for _, id := range in.IDs {
		if c.ruleIdx[id] == nil && !slices.Contains(unknown, id) {
			unknown = append(unknown, id)
		}
		ids[id] = true
	}
	if len(unknown) > 0 {
		return nil, rejectf(404, "%s: no rule has id %s; nothing was changed, check the ids with get", in.Op, strings.Join(unknown, ", "))
	}
	enabled := in.Op == messages.OpEnableRules
	cfg := c.current()
	data := messages.OutConfigData{Op: in.Op}
	switched := func(rules []*rule) []*rule {
		out := slices.Clone(rules)
		for i, r := range out {
			if !ids[r.ID] {
				continue
			}
			data.Rules = append(data.Rules, r.ID)
			cp := *r // the same compiled rule, and the same idp its outputs share
			cp.Enabled = enabled
			out[i] = &cp
		}
		return out
	}
	cfg.rules = switched(c.rules)
	cfg.layers = slices.Clone(c.layers)
	for i, l := range cfg.layers {
		if slices.ContainsFunc(l.rules, func(r *rule) bool { return ids[r.ID] }) {
			cfg.layers[i] = l.withRules(switched(l.rules))
		}
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

func (c *core) opCreateSchedule(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Schedules) == 0 {
		return nil, rejectf(400, "create_schedule needs at least one schedule in schedules")
	}
	add, r := c.checkSchedules(in.Schedules)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.scheds = mergeSchedules(c.scheds, add)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	data := messages.OutConfigData{Op: in.Op}
	for _, s := range add {
		data.Schedules = append(data.Schedules, s.Name)
	}
	return c.scheduleSets([]Output{{Type: messages.OutConfig, Data: data}}, add), nil
}

func (c *core) opDeleteSchedule(in *messages.InConfigData) ([]Output, *rejection) {
	if in.Name == "" {
		return nil, rejectf(400, "delete_schedule: name is empty; give the name of the schedule to delete")
	}
	s := c.schedIdx[in.Name]
	if s == nil {
		return nil, rejectf(404, "schedule %q does not exist; nothing to delete", in.Name)
	}
	cfg := c.current()
	cfg.scheds = slices.DeleteFunc(slices.Clone(c.scheds), func(x *schedule) bool { return x == s })
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{
		{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, Schedules: []string{s.Name}}},
		{Type: messages.OutSchedule, Data: messages.OutScheduleData{Op: scheduleDelete, Schedule: s.Schedule}},
	}, nil
}

// opSetNames sets the room, the aliases or both, checked as apply checks
// them; the part the request did not give stays, and nothing else
// changes.
func (c *core) opSetNames(in *messages.InConfigData) ([]Output, *rejection) {
	switch {
	case in.KeepRoom && in.KeepAliases:
		return nil, rejectf(400, `set_names sets nothing; give "room", "aliases" or both`)
	case in.KeepRoom && in.Room != "":
		return nil, rejectf(400, "set_names: keep_room with a room; give one or the other")
	case in.KeepAliases && in.Aliases != nil:
		return nil, rejectf(400, "set_names: keep_aliases with aliases; give one or the other")
	}
	room, aliases, err := messages.NormalLightNames(in.Room, in.Aliases)
	if err != nil {
		return nil, rejectf(400, "%v", err)
	}
	cfg := c.current()
	if !in.KeepRoom {
		cfg.room = room
	}
	if !in.KeepAliases {
		cfg.aliases = aliases
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op}}}, nil
}

// mergeByName replaces the items of base that add names again, in place,
// and appends the new ones: states and schedules are merged alike.
func mergeByName[T any](base, add []T, name func(T) string) []T {
	out := slices.Clone(base)
	pos := make(map[string]int, len(out))
	for i, s := range out {
		pos[name(s)] = i
	}
	for _, s := range add {
		if i, ok := pos[name(s)]; ok {
			out[i] = s
			continue
		}
		pos[name(s)] = len(out)
		out = append(out, s)
	}
	return out
}

func mergeStates(base, add []*stateDef) []*stateDef {
	return mergeByName(base, add, func(s *stateDef) string { return s.Name })
}

func mergeSchedules(base, add []*schedule) []*schedule {
	return mergeByName(base, add, func(s *schedule) string { return s.Name })
}

// applyVars sets the variables as apply's vars_op says and returns the
// outputs of what changed, by name: none for keep, and none for an input
// journaled before vars_op, which replaced the variables silently.
func (c *core) applyVars(op string, vars map[string]*value) []Output {
	switch op {
	case messages.VarsKeep:
		return nil
	case "":
		c.vars = vars
		return nil
	}
	var out []Output
	names := slices.Sorted(maps.Keys(c.vars))
	for name := range vars {
		if _, ok := c.vars[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		old, v := c.vars[name], vars[name]
		switch {
		case v == nil:
			out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: name, Unset: true}})
		case !v.equal(old):
			out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: name, Value: v.raw}})
		}
	}
	c.vars = vars
	return out
}

// layerIDs reserves the rule ids layers give, so that the light's own
// rules given without one do not take them.
func layerIDs(layers []messages.Layer) map[string]*rule {
	var out map[string]*rule
	for _, l := range layers {
		for _, r := range l.Rules {
			if r.ID != "" {
				if out == nil {
					out = make(map[string]*rule)
				}
				out[r.ID] = &rule{}
			}
		}
	}
	return out
}

// ruleIndex indexes rules by id.
func ruleIndex(rules []*rule) map[string]*rule {
	out := make(map[string]*rule, len(rules))
	for _, r := range rules {
		out[r.ID] = r
	}
	return out
}
