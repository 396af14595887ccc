package machine

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/robfig/cron/v3"

	"github.com/lumen-home/lumen/internal/solar"
	"github.com/lumen-home/lumen/messages"
)

// Validation of what a config input gives: states, rules, schedules and
// the fields each op takes. A check returns the model's values or a
// rejection that says what to fix; it changes nothing.

// checkStates validates states given together (apply, create_state), for
// the functions fs.
func (c *core) checkStates(list []messages.State, fs *funcs) ([]*stateDef, *rejection) {
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
		if r := c.checkName("state", s.Name); r != nil {
			return nil, r
		}
		seen[s.Name] = true
		var chans []*expr
		for _, ch := range []struct {
			name string
			v    messages.Channel
		}{{"r", s.R}, {"g", s.G}, {"b", s.B}} {
			if ch.v.IsExpr() {
				if r := c.checkExpr(fmt.Sprintf("state %q's channel %s", s.Name, ch.name), ch.v.Expr); r != nil {
					return nil, r
				}
				e, se := c.compile(kindChannel, ch.v.Expr, fs)
				if se != nil {
					return nil, rejectf(400, "state %q: channel %s has a syntax error %s; fix the JavaScript expression", s.Name, ch.name, se)
				}
				if msg := fs.badCall(e.refs, nil); msg != "" {
					return nil, rejectf(400, "state %q: channel %s %s", s.Name, ch.name, msg)
				}
				chans = append(chans, e)
				continue
			}
			if math.IsNaN(ch.v.Num) || ch.v.Num < 0 || ch.v.Num > 255 {
				return nil, rejectf(400, "state %q: channel %s is %s; use a number from 0 to 255 or a JavaScript expression", s.Name, ch.name, strconv.FormatFloat(ch.v.Num, 'g', -1, 64))
			}
		}
		if s.Speed != nil && *s.Speed <= 0 {
			return nil, rejectf(400, "state %q: speed is %d; give a positive frame period in milliseconds, or leave speed out for a static color", s.Name, *s.Speed)
		}
		d := c.newStateDef(s)
		d.chans = chans
		out = append(out, d)
	}
	return out, nil
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
// name, assigns ids (taken: ids already in use; kept: the id a rule given
// without one keeps, by its position) and compiles expressions for the
// functions fs. It returns the rules and the next rule number.
func (c *core) checkRules(list []messages.Rule, states map[string]*stateDef, taken map[string]*rule, kept map[int]string, next uint64, fs *funcs) ([]*rule, uint64, *rejection) {
	used := make(map[string]bool, len(list))
	for _, id := range kept {
		used[id] = true
	}
	for _, r := range list {
		if r.ID == "" {
			continue
		}
		if rj := c.checkName("rule id", r.ID); rj != nil {
			return nil, 0, rj
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
		if id, ok := kept[i]; ok && r.ID == "" {
			r.ID = id
			label = fmt.Sprintf("rule %s (rules[%d])", r.ID, i)
		} else if r.ID == "" {
			for {
				r.ID = "r" + strconv.FormatUint(next, 10)
				next++
				if !used[r.ID] && taken[r.ID] == nil {
					break
				}
			}
			used[r.ID] = true
			// The id is the rule's only if it is accepted: name the
			// rule by what was written.
			label = fmt.Sprintf("rule %s --%s--> %s (rules[%d])", mr.From, mr.On, mr.To, i)
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
		case r.FadeMs < 0 || r.FadeMs > messages.MaxFadeMs:
			return nil, 0, rejectf(400, "%s: fade_ms %d is out of range; give 0 to %d (a day)", label, r.FadeMs, messages.MaxFadeMs)
		}
		if rj := c.checkName("transition", r.On); rj != nil {
			return nil, 0, rejectf(rj.code, "%s: %s", label, rj.msg)
		}
		if rj := c.checkExpr(label+"'s condition", r.Condition); rj != nil {
			return nil, 0, rj
		}
		if rj := c.checkExpr(label+"'s action", r.Action); rj != nil {
			return nil, 0, rj
		}
		if r.prefix, r.wild = wildcard(r.From); !r.wild && states[r.From] == nil {
			return nil, 0, rejectf(404, "%s: from names state %q, which does not exist; create the state first, or use * or prefix/*", label, r.From)
		}
		var se *syntaxError
		if strings.TrimSpace(r.Condition) != "" {
			if r.cond, se = c.compile(kindCondition, r.Condition, fs); se != nil {
				return nil, 0, rejectf(400, "%s: the condition has a syntax error %s; write one JavaScript expression, e.g. getData('n') > 0", label, se)
			}
			if msg := fs.badCall(r.cond.refs, nil); msg != "" {
				return nil, 0, rejectf(400, "%s: the condition %s", label, msg)
			}
		}
		if strings.TrimSpace(r.Action) != "" {
			if r.act, se = c.compile(kindAction, r.Action, fs); se != nil {
				return nil, 0, rejectf(400, "%s: the action has a syntax error %s; fix the JavaScript", label, se)
			}
			if msg := fs.badCall(r.act.refs, nil); msg != "" {
				return nil, 0, rejectf(400, "%s: the action %s", label, msg)
			}
		}
		out = append(out, r)
	}
	return out, next, nil
}

// keptRuleIDs returns, by position in list, the id each rule given
// without one keeps: that of the first current rule identical to it
// (from, on, to, condition, action, priority, enabled). Each current rule
// is matched once, and not at all when list gives its id to a rule.
// Re-applying a hand-written file then keeps the ids delete_rules and
// enable_rules name; a rule that changed gets a new id.
func (c *core) keptRuleIDs(list []messages.Rule) map[int]string {
	given := make(map[string]bool, len(list))
	for _, r := range list {
		if r.ID != "" {
			given[r.ID] = true
		}
	}
	byContent := make(map[messages.Rule][]string, len(c.rules)) // ids, in order
	for _, r := range c.rules {
		if !given[r.ID] {
			content := r.Rule
			content.ID = ""
			byContent[content] = append(byContent[content], r.ID)
		}
	}
	kept := make(map[int]string)
	for i, r := range list {
		if ids := byContent[r]; r.ID == "" && len(ids) > 0 {
			kept[i] = ids[0]
			byContent[r] = ids[1:]
		}
	}
	return kept
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
		case ms.Sun != "":
		case strings.TrimSpace(ms.Cron) == "":
			return nil, rejectf(400, "schedule %q: cron is empty; use five fields (minute hour day month weekday) like \"0 19 * * *\" or a descriptor like @hourly", ms.Name)
		case strings.HasPrefix(ms.Cron, "TZ=") || strings.HasPrefix(ms.Cron, "CRON_TZ="):
			return nil, rejectf(400, "schedule %q: put the time zone in tz, not in cron", ms.Name)
		}
		// In this order, as inputs journaled before sun schedules were
		// checked: a replay refuses them with the same words.
		for _, r := range []*rejection{c.checkName("schedule", ms.Name), c.checkName("transition", ms.Fires), c.checkEvery(ms.Name, ms.Cron)} {
			if r != nil {
				return nil, r
			}
		}
		seen[ms.Name] = true
		check := c.checkCron
		if ms.Sun != "" {
			check = c.checkSun
		}
		s, r := check(ms)
		if r == nil {
			r = c.nextTick(s, list[i].Next)
		}
		if r != nil {
			return nil, r
		}
		out = append(out, s)
	}
	return out, nil
}

// checkCron checks a cron schedule: its cron and time zone.
func (c *core) checkCron(ms messages.Schedule) (*schedule, *rejection) {
	if ms.Offset != "" || ms.Lat != nil || ms.Lon != nil {
		return nil, rejectf(400, "schedule %q: offset, lat and lon go with sun; a cron schedule takes cron and tz", ms.Name)
	}
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
	return &schedule{Schedule: ms, spec: spec, loc: loc}, nil
}

// nextTick sets a checked schedule's next tick: the recorded one on a
// restore, the one it had when it is unchanged, else the first after
// the input.
func (c *core) nextTick(s *schedule, recorded *time.Time) *rejection {
	switch old := c.schedIdx[s.Name]; {
	case c.restoring:
		s.next = copyTime(recorded)
		if s.next != nil {
			*s.next = s.next.UTC()
		}
	case s.sameAs(old):
		s.next = old.next
	default:
		if s.next = s.after(c.now); s.next == nil {
			if s.sun != "" {
				return rejectf(400, "schedule %q: there is no %s at %g,%g within a year", s.Name, s.Sun, *s.Lat, *s.Lon)
			}
			return rejectf(400, "schedule %q: cron %q never fires; check the day and month fields", s.Name, s.Cron)
		}
	}
	return nil
}

// maxSunOffset bounds a sun schedule's offset either way.
const maxSunOffset = 12 * time.Hour

// checkSun checks a sun schedule: its event, offset and place.
func (c *core) checkSun(ms messages.Schedule) (*schedule, *rejection) {
	if ms.Cron != "" {
		return nil, rejectf(400, "schedule %q: give cron or sun, not both", ms.Name)
	}
	ev, err := solar.ParseEvent(ms.Sun)
	if err != nil {
		return nil, rejectf(400, "schedule %q: sun %s", ms.Name, err)
	}
	var off time.Duration
	if ms.Offset != "" {
		if off, err = time.ParseDuration(ms.Offset); err != nil {
			return nil, rejectf(400, "schedule %q: offset %q is not a duration; give e.g. -30m (before) or 1h15m (after)", ms.Name, ms.Offset)
		}
		if off > maxSunOffset || off < -maxSunOffset {
			return nil, rejectf(400, "schedule %q: offset %s is more than 12h from the %s; give at most 12h either way", ms.Name, ms.Offset, ms.Sun)
		}
	}
	if ms.Lat == nil || ms.Lon == nil {
		return nil, rejectf(400, "schedule %q: a sun schedule needs lat and lon (the light's service gives it the daemon's home)", ms.Name)
	}
	if err := solar.Check(*ms.Lat, *ms.Lon); err != nil {
		return nil, rejectf(400, "schedule %q: %v", ms.Name, err)
	}
	if ms.TZ != "" {
		return nil, rejectf(400, "schedule %q: a sun schedule takes no tz: the sun's times are instants", ms.Name)
	}
	return &schedule{Schedule: ms, sun: ev, offset: off, loc: time.UTC}, nil
}

var opFields = map[string][]string{
	messages.OpApply:            {"states", "rules", "vars", "vars_op", "initial", "on_state", "power_on", "transition_ms", "room", "aliases", "state", "schedules", "tools", "sources", "plugins", "functions", "layers"},
	messages.OpCreateState:      {"states"},
	messages.OpDeleteState:      {"name"},
	messages.OpAppendRules:      {"rules", "layer"},
	messages.OpDeleteRules:      {"ids", "match"},
	messages.OpEnableRules:      {"ids"},
	messages.OpDisableRules:     {"ids"},
	messages.OpCreateSchedule:   {"schedules"},
	messages.OpDeleteSchedule:   {"name"},
	messages.OpDefineTool:       {"tools"},
	messages.OpDeleteTool:       {"name"},
	messages.OpCreateSource:     {"sources", "plugins"},
	messages.OpDeleteSource:     {"name"},
	messages.OpDefineTransition: {"tools", "sources"},
	messages.OpDeleteTransition: {"name"},
	messages.OpDefineFunction:   {"functions"},
	messages.OpDeleteFunction:   {"name"},
	messages.OpDeleteLayer:      {"name"},
	messages.OpSetNames:         {"room", "aliases", "keep_room", "keep_aliases"},
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
		{"states", in.States != nil}, {"rules", in.Rules != nil}, {"vars", in.Vars != nil}, {"vars_op", in.VarsOp != ""},
		{"initial", in.Initial != ""}, {"on_state", in.OnState != ""}, {"power_on", in.PowerOn != ""}, {"transition_ms", in.TransitionMs != nil}, {"room", in.Room != ""}, {"aliases", in.Aliases != nil},
		{"keep_room", in.KeepRoom}, {"keep_aliases", in.KeepAliases}, {"state", in.State != ""}, {"schedules", in.Schedules != nil}, {"name", in.Name != ""},
		{"ids", in.IDs != nil}, {"match", in.Match != nil}, {"tools", in.Tools != nil},
		{"sources", in.Sources != nil}, {"plugins", in.Plugins != nil}, {"functions", in.Functions != nil},
		{"layers", in.Layers != nil}, {"layer", in.Layer != nil},
	}
	for _, g := range given {
		if g.set && !slices.Contains(allowed, g.name) {
			return rejectf(400, "config: %s does not take %s; it takes %s", in.Op, g.name, strings.Join(allowed, ", "))
		}
	}
	return nil
}
