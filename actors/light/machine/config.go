package machine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/dop251/goja"
	"github.com/robfig/cron/v3"

	"github.com/lumen-home/lumen/messages"
)

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
	js goja.Value // the name as a JS string, the "state" of expressions
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
	messages.Schedule // Next is always nil here
	spec              cron.Schedule
	loc               *time.Location
	next              *time.Time
}

// after returns the first tick strictly after t, nil if there is none.
func (s *schedule) after(t time.Time) *time.Time {
	n := s.spec.Next(t.In(s.loc))
	if n.IsZero() {
		return nil
	}
	n = n.UTC()
	return &n
}

func (s *schedule) sameAs(o *schedule) bool {
	return o != nil && s.Name == o.Name && s.Cron == o.Cron && s.TZ == o.TZ && s.Fires == o.Fires
}

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
		where := ""
		if f.line > 0 {
			where = fmt.Sprintf(" at line %d, column %d", f.line, f.col)
		}
		e.Error = fmt.Sprintf("rule %s: its %s threw %s%s and the rule was skipped; fix the JavaScript", r.ID, kind, f.msg, where)
	}
	return Output{Type: messages.OutError, Data: e}
}

// ---- committing a configuration ----

type config struct {
	states   []*stateDef
	rules    []*rule
	initial  string
	scheds   []*schedule
	tools    []*tool
	sources  []*sourceDef
	nextRule uint64
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
	index := make(map[string]*transIndex)
	for i, r := range cfg.rules {
		r.ord = i
		c.ruleIdx[r.ID] = r
		for _, e := range []*expr{r.cond, r.act} {
			if e != nil {
				exprs[exprKey{e.kind, e.src}] = e
			}
		}
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
	c.exprs = exprs
	c.initial = cfg.initial
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
	c.nextRule = cfg.nextRule
	if c.stateIdx[offState] == nil {
		return fmt.Errorf("machine: configuration without the %s state", offState)
	}
	return nil
}

func (c *core) current() config {
	return config{states: c.states, rules: c.rules, initial: c.initial, scheds: c.scheds, tools: c.tools, sources: c.sources, nextRule: c.nextRule}
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

// ---- validation ----

// checkStates validates states given together (apply, create_state).
func (c *core) checkStates(list []messages.State) ([]*stateDef, *rejection) {
	seen := make(map[string]bool, len(list))
	out := make([]*stateDef, 0, len(list))
	for i, s := range list {
		_, wild := wildcard(s.Name)
		switch {
		case strings.TrimSpace(s.Name) == "":
			return nil, rejectf(400, "states[%d] has no name; give every state a name", i)
		case wild:
			return nil, rejectf(400, "state %q: a state name cannot be * or end in /* (those are rule wildcards); rename it", s.Name)
		case seen[s.Name]:
			return nil, rejectf(409, "state %q is listed twice; list each state once", s.Name)
		}
		seen[s.Name] = true
		for _, ch := range []struct {
			name string
			v    messages.Channel
		}{{"r", s.R}, {"g", s.G}, {"b", s.B}} {
			if ch.v.IsExpr() {
				if _, se := c.compile(kindChannel, ch.v.Expr); se != nil {
					return nil, rejectf(400, "state %q: channel %s has a syntax error %s; fix the JavaScript expression", s.Name, ch.name, se)
				}
				continue
			}
			if math.IsNaN(ch.v.Num) || ch.v.Num < 0 || ch.v.Num > 255 {
				return nil, rejectf(400, "state %q: channel %s is %s; use a number from 0 to 255 or a JavaScript expression", s.Name, ch.name, strconv.FormatFloat(ch.v.Num, 'g', -1, 64))
			}
		}
		if s.Speed != nil && *s.Speed <= 0 {
			return nil, rejectf(400, "state %q: speed is %d; give a positive frame period in milliseconds, or leave speed out for a static color", s.Name, *s.Speed)
		}
		out = append(out, c.newStateDef(s))
	}
	return out, nil
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

// ruleNumber returns N for an id r<N>.
func ruleNumber(id string) (uint64, bool) {
	digits, ok := strings.CutPrefix(id, "r")
	if !ok || digits == "" || len(digits) > 15 {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	return n, err == nil
}

// checkRules validates rules given together against the states they may
// name, assigns ids (taken: ids already in use) and compiles expressions.
// It returns the rules and the next rule number.
func (c *core) checkRules(list []messages.Rule, states map[string]*stateDef, taken map[string]*rule, next uint64) ([]*rule, uint64, *rejection) {
	used := make(map[string]bool, len(list))
	for _, r := range list {
		if r.ID == "" {
			continue
		}
		if used[r.ID] || taken[r.ID] != nil {
			return nil, 0, rejectf(409, "rule id %q is already used; give each rule a unique id, or leave id out to get one", r.ID)
		}
		used[r.ID] = true
		if n, ok := ruleNumber(r.ID); ok && n >= next {
			next = n + 1
		}
	}
	out := make([]*rule, 0, len(list))
	for i, mr := range list {
		r := &rule{Rule: mr}
		label := "rule " + r.ID
		if r.ID == "" {
			for {
				r.ID = "r" + strconv.FormatUint(next, 10)
				next++
				if !used[r.ID] && taken[r.ID] == nil {
					break
				}
			}
			used[r.ID] = true
			label = fmt.Sprintf("rule %s (rules[%d])", r.ID, i)
		}
		id := r.ID
		r.idp = &id
		switch {
		case r.On == "":
			return nil, 0, rejectf(400, "%s: on is empty; name the transition that triggers it, e.g. button_click", label)
		case r.From == "":
			return nil, 0, rejectf(400, "%s: from is empty; give a state name, * for any state, or prefix/* for the states under prefix/", label)
		case r.To == "":
			return nil, 0, rejectf(400, "%s: to is empty; name the state it goes to", label)
		case states[r.To] == nil:
			return nil, 0, rejectf(404, "%s: to names state %q, which does not exist; create the state first or fix the rule", label, r.To)
		}
		if r.prefix, r.wild = wildcard(r.From); !r.wild && states[r.From] == nil {
			return nil, 0, rejectf(404, "%s: from names state %q, which does not exist; create the state first, or use * or prefix/*", label, r.From)
		}
		var se *syntaxError
		if strings.TrimSpace(r.Condition) != "" {
			if r.cond, se = c.compile(kindCondition, r.Condition); se != nil {
				return nil, 0, rejectf(400, "%s: the condition has a syntax error %s; write one JavaScript expression, e.g. getData('n') > 0", label, se)
			}
		}
		if strings.TrimSpace(r.Action) != "" {
			if r.act, se = c.compile(kindAction, r.Action); se != nil {
				return nil, 0, rejectf(400, "%s: the action has a syntax error %s; fix the JavaScript", label, se)
			}
		}
		out = append(out, r)
	}
	return out, next, nil
}

// checkSchedules validates schedules given together. The next tick is
// kept for a schedule identical to an existing one, else computed from
// the input's time.
func (c *core) checkSchedules(list []messages.Schedule) ([]*schedule, *rejection) {
	seen := make(map[string]bool, len(list))
	out := make([]*schedule, 0, len(list))
	for i, ms := range list {
		ms.Next = nil
		switch {
		case strings.TrimSpace(ms.Name) == "":
			return nil, rejectf(400, "schedules[%d] has no name; give every schedule a name", i)
		case seen[ms.Name]:
			return nil, rejectf(409, "schedule %q is listed twice; list each schedule once", ms.Name)
		case ms.Fires == "":
			return nil, rejectf(400, "schedule %q: fires is empty; name the transition it fires", ms.Name)
		case strings.TrimSpace(ms.Cron) == "":
			return nil, rejectf(400, "schedule %q: cron is empty; use five fields (minute hour day month weekday) like \"0 19 * * *\" or a descriptor like @hourly", ms.Name)
		case strings.HasPrefix(ms.Cron, "TZ=") || strings.HasPrefix(ms.Cron, "CRON_TZ="):
			return nil, rejectf(400, "schedule %q: put the time zone in tz, not in cron", ms.Name)
		}
		seen[ms.Name] = true
		spec, err := cron.ParseStandard(ms.Cron)
		if err != nil {
			return nil, rejectf(400, "schedule %q: cron %q is not valid (%v); use five fields (minute hour day month weekday) like \"0 19 * * *\" or a descriptor like @hourly", ms.Name, ms.Cron, err)
		}
		loc := time.UTC
		if ms.TZ != "" {
			if ms.TZ == "Local" {
				return nil, rejectf(400, "schedule %q: tz Local depends on the machine; use an IANA time zone like Europe/Paris", ms.Name)
			}
			if loc, err = time.LoadLocation(ms.TZ); err != nil {
				return nil, rejectf(400, "schedule %q: unknown time zone %q; use an IANA time zone like Europe/Paris, or leave tz out for UTC", ms.Name, ms.TZ)
			}
		}
		s := &schedule{Schedule: ms, spec: spec, loc: loc}
		if c.restoring {
			s.next = copyTime(list[i].Next)
			if s.next != nil {
				*s.next = s.next.UTC()
			}
		} else if old := c.schedIdx[ms.Name]; s.sameAs(old) {
			s.next = old.next
		} else if s.next = s.after(c.now); s.next == nil {
			return nil, rejectf(400, "schedule %q: cron %q never fires; check the day and month fields", ms.Name, ms.Cron)
		}
		out = append(out, s)
	}
	return out, nil
}

func mergeSchedules(base, add []*schedule) []*schedule {
	return mergeByName(base, add, func(s *schedule) string { return s.Name })
}

// ---- the config input ----

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
		out, r = c.opAppendRules(in)
	case messages.OpDeleteRules:
		out, r = c.opDeleteRules(in)
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
	}
	if r != nil {
		return c.rejected(r)
	}
	res := Result{Outputs: out, State: c.cur}
	if last := out[len(out)-1]; last.Type == messages.OutState {
		res.Changed = last.Data.(messages.OutStateData).Changed
	}
	return res
}

var opFields = map[string][]string{
	messages.OpApply:            {"states", "rules", "vars", "initial", "schedules", "tools", "sources", "plugins"},
	messages.OpCreateState:      {"states"},
	messages.OpDeleteState:      {"name"},
	messages.OpAppendRules:      {"rules"},
	messages.OpDeleteRules:      {"ids", "match"},
	messages.OpCreateSchedule:   {"schedules"},
	messages.OpDeleteSchedule:   {"name"},
	messages.OpDefineTool:       {"tools"},
	messages.OpDeleteTool:       {"name"},
	messages.OpCreateSource:     {"sources", "plugins"},
	messages.OpDeleteSource:     {"name"},
	messages.OpDefineTransition: {"tools", "sources"},
	messages.OpDeleteTransition: {"name"},
}

// checkFields rejects an unknown op and fields the op does not take.
func checkFields(in *messages.InConfigData) *rejection {
	allowed, ok := opFields[in.Op]
	if !ok {
		ops := slices.Sorted(maps.Keys(opFields))
		if in.Op == "" {
			return rejectf(400, "config: op is empty; use one of %s", strings.Join(ops, ", "))
		}
		return rejectf(400, "config: unknown op %q; use one of %s", in.Op, strings.Join(ops, ", "))
	}
	given := []struct {
		name string
		set  bool
	}{
		{"states", in.States != nil}, {"rules", in.Rules != nil}, {"vars", in.Vars != nil},
		{"initial", in.Initial != ""}, {"schedules", in.Schedules != nil}, {"name", in.Name != ""},
		{"ids", in.IDs != nil}, {"match", in.Match != nil}, {"tools", in.Tools != nil},
		{"sources", in.Sources != nil}, {"plugins", in.Plugins != nil},
	}
	for _, g := range given {
		if g.set && !slices.Contains(allowed, g.name) {
			return rejectf(400, "config: %s does not take %s; it takes %s", in.Op, g.name, strings.Join(allowed, ", "))
		}
	}
	return nil
}

func (c *core) opApply(in *messages.InConfigData) ([]Output, *rejection) {
	add, r := c.checkStates(in.States)
	if r != nil {
		return nil, r
	}
	states := mergeStates([]*stateDef{c.defaultOff()}, add)
	stateIdx := make(map[string]*stateDef, len(states))
	for _, s := range states {
		stateIdx[s.Name] = s
	}
	rules, next, r := c.checkRules(in.Rules, stateIdx, nil, c.nextRule)
	if r != nil {
		return nil, r
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
		vars[name] = v
	}
	target := c.cur
	if in.Initial != "" {
		if stateIdx[in.Initial] == nil {
			return nil, rejectf(404, "initial names state %q, which is not in states; add it or pick another", in.Initial)
		}
		target = in.Initial
	} else if stateIdx[target] == nil {
		target = offState
	}
	scheds, r := c.checkSchedules(in.Schedules)
	if r != nil {
		return nil, r
	}
	tools, r := checkTools(in.Tools)
	if r != nil {
		return nil, r
	}
	sources, r := checkSources(in.Sources, tools, in.Plugins, false)
	if r != nil {
		return nil, r
	}

	old := c.scheds
	cfg := configOf(states, rules, in.Initial, scheds, tools, next)
	cfg.sources = sources
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	c.vars = vars
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
	out := []Output{{Type: messages.OutConfig, Data: data}}
	for _, s := range old {
		if c.schedIdx[s.Name] == nil {
			out = append(out, Output{Type: messages.OutSchedule, Data: messages.OutScheduleData{Op: scheduleDelete, Schedule: s.Schedule}})
		}
	}
	out = c.scheduleSets(out, scheds)
	return c.moveTo(target, out), nil
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
	add, r := c.checkStates(in.States)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.states = mergeStates(c.states, add)
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
	for _, r := range c.rules {
		if r.To == in.Name || (!r.wild && r.From == in.Name) {
			users = append(users, r.ID)
		}
	}
	if len(users) > 0 {
		return nil, rejectf(409, "state %q is used by rules %s; delete or change those rules first", in.Name, strings.Join(users, ", "))
	}
	cfg := c.current()
	cfg.states = slices.DeleteFunc(slices.Clone(c.states), func(s *stateDef) bool { return s.Name == in.Name })
	if cfg.initial == in.Name {
		cfg.initial = offState
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	out := []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, States: []string{in.Name}}}}
	if c.cur == in.Name {
		return c.enter(offState, nil, "", out).Outputs, nil
	}
	return out, nil
}

func (c *core) opAppendRules(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Rules) == 0 {
		return nil, rejectf(400, "append_rules needs at least one rule in rules")
	}
	add, next, r := c.checkRules(in.Rules, c.stateIdx, c.ruleIdx, c.nextRule)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.rules = append(slices.Clip(c.rules), add...)
	cfg.nextRule = next
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
