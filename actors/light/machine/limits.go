package machine

import (
	"fmt"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// Level is the newest level of checks this machine applies to inputs:
//
//  1. the limits of package messages: names (MaxName), variable values
//     (MaxValue), expressions (MaxExpression), the size of a
//     configuration (MaxStates, MaxRules), and schedules at most once a
//     second; a tool's params must be a JSON schema that compiles; and
//     apply keeps the id of a rule given without one that is identical
//     to a current rule (keptRuleIDs), where it used to assign a new one.
//  2. a configuration change keeps the light's state (keepsState): apply
//     moves it only to the state its input names (state), or, when the
//     current state is removed, to initial, as delete_state of the
//     current state does; before, apply entered initial, and a removed
//     current state gave way to off. An apply with state is refused
//     below this level, as the decoder of then refused the field. A
//     poll source may fire without storing (sourceChecks).
//
// A light's level only rises, by an upgrade input the light journals when
// it starts with a lumen newer than its journal. Inputs journaled before
// it are applied as they were then, so that an old journal replays to the
// same light: a state named before there were limits keeps its name.
const Level = 2

const (
	levelLimits    = 1
	levelKeepState = 2
)

// limited reports whether inputs are held to the limits. A snapshot is
// restored as it was taken, whatever it holds.
func (c *core) limited() bool { return c.level >= levelLimits && !c.restoring }

// keepsState reports whether configuration changes keep the light's
// state (level 2).
func (c *core) keepsState() bool { return c.level >= levelKeepState }

// sourceChecks are the data-source checks of the light's level: below
// level 2 a poll source had to store.
func (c *core) sourceChecks() []datasource.Option {
	if c.keepsState() {
		return nil
	}
	return []datasource.Option{datasource.WithStoreRequired()}
}

// Level returns the level of checks the light applies to its next input.
func (m *Machine) Level() int { return m.c.level }

func (c *core) upgradeInput(level int) Result {
	switch {
	case level > Level:
		return c.reject(400, "upgrade: level %d is newer than this lumen knows (%d); upgrade lumen", level, Level)
	case level < c.level:
		return c.reject(409, "upgrade: the light is at level %d already; a level never goes down", c.level)
	}
	from := c.level
	c.level = level
	return Result{Outputs: []Output{{Type: messages.OutUpgrade, Data: messages.OutUpgradeData{From: from, To: level}}}, State: c.cur}
}

// checkName rejects a name over the limits, once they apply.
func (c *core) checkName(kind, name string) *rejection {
	if !c.limited() {
		return nil
	}
	if err := messages.CheckName(kind, name); err != nil {
		return rejectf(400, "%v", err)
	}
	return nil
}

// checkExpr rejects an expression over the limit, once it applies.
func (c *core) checkExpr(what, src string) *rejection {
	if !c.limited() {
		return nil
	}
	if err := messages.CheckExpression(what, src); err != nil {
		return rejectf(400, "%v", err)
	}
	return nil
}

// checkVar rejects a variable whose name or value is over the limits,
// once they apply.
func (c *core) checkVar(name string, v *value) *rejection {
	if r := c.checkName("variable", name); r != nil || !c.limited() || v == nil {
		return r
	}
	if err := messages.CheckValue(name, v.raw); err != nil {
		return rejectf(400, "%v", err)
	}
	return nil
}

// checkSize rejects a configuration with more states (off aside) or
// rules than a light takes, once the limits apply.
func (c *core) checkSize(states []*stateDef, rules []*rule) *rejection {
	if !c.limited() {
		return nil
	}
	n := len(states)
	for _, s := range states {
		if s.Name == offState {
			n--
		}
	}
	switch {
	case n > messages.MaxStates:
		return rejectf(400, "the configuration has %d states; a light has at most %d (besides off)", n, messages.MaxStates)
	case len(rules) > messages.MaxRules:
		return rejectf(400, "the configuration has %d rules; a light has at most %d", len(rules), messages.MaxRules)
	}
	return nil
}

// checkEvery rejects a schedule that would tick more than once a second
// ("@every 10ms"), once the limits apply: each tick is journaled.
func (c *core) checkEvery(name, spec string) *rejection {
	every, ok := strings.CutPrefix(spec, "@every ")
	if !c.limited() || !ok {
		return nil
	}
	if d, err := time.ParseDuration(strings.TrimSpace(every)); err == nil && d < time.Second {
		return rejectf(400, "schedule %q: cron %q ticks more often than a schedule may; schedules run at most once a second (use a timer in a rule's action for shorter delays)", name, spec)
	}
	return nil
}

// limitError is the JavaScript error of a host function called with a
// name or a value over the limits.
func (c *core) limitError(fn string, r *rejection) {
	panic(c.vm.NewTypeError(fmt.Sprintf("%s: %s", fn, r.msg)))
}
