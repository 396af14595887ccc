package machine

import (
	"time"

	"github.com/lumen-home/lumen/messages"
)

// An action's transaction: what an action does (setData, startTimer,
// cancelTimer, setBrightness) is held until it completes, then committed as a whole and
// reported; an action that throws or times out leaves nothing behind.

// tx holds an action's effects until the action completes.
type tx struct {
	vars   []varWrite // in order of first change
	timers []timerOp  // in call order
	bright *int       // setBrightness's last call; nil: none
}

type varWrite struct {
	name string
	v    *value // nil: unset
}

type timerOp struct {
	op   string // messages.TimerSet or TimerCancel
	name string
	at   time.Time
}

func (t *tx) reset() {
	clear(t.vars)
	t.vars = t.vars[:0]
	t.timers = t.timers[:0]
	t.bright = nil
}

func (t *tx) setVar(name string, v *value) {
	for i := range t.vars {
		if t.vars[i].name == name {
			t.vars[i].v = v
			return
		}
	}
	t.vars = append(t.vars, varWrite{name: name, v: v})
}

// pending returns timer name's deadline as the action sees it.
func (t *tx) pending(c *core, name string) (time.Time, bool) {
	for i := len(t.timers) - 1; i >= 0; i-- {
		if op := &t.timers[i]; op.name == name {
			return op.at, op.op == messages.TimerSet
		}
	}
	at, ok := c.timers[name]
	return at, ok
}

func (t *tx) startTimer(c *core, name string, at time.Time) {
	if old, ok := t.pending(c, name); ok {
		t.timers = append(t.timers, timerOp{op: messages.TimerCancel, name: name, at: old})
	}
	t.timers = append(t.timers, timerOp{op: messages.TimerSet, name: name, at: at})
}

func (t *tx) cancelTimer(c *core, name string) bool {
	old, ok := t.pending(c, name)
	if ok {
		t.timers = append(t.timers, timerOp{op: messages.TimerCancel, name: name, at: old})
	}
	return ok
}

// commitTx applies the completed action's effects: variables whose value
// changed (in order of first change), the brightness, then timer
// operations in call order.
func (c *core) commitTx(out []Output) []Output {
	for _, w := range c.tx.vars {
		old := c.vars[w.name]
		if old.equal(w.v) {
			continue
		}
		if w.v == nil {
			delete(c.vars, w.name)
			out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: w.name, Unset: true}})
		} else {
			c.vars[w.name] = w.v
			out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: w.name, Value: w.v.raw}})
		}
	}
	if b := c.tx.bright; b != nil && *b != c.bright {
		out = append(out, c.dim(*b, nil))
	}
	for _, op := range c.tx.timers {
		if op.op == messages.TimerSet {
			c.timers[op.name] = op.at
		} else {
			delete(c.timers, op.name)
		}
		out = append(out, Output{Type: messages.OutTimer, Data: messages.OutTimerData{Op: op.op, Name: op.name, Deadline: op.at}})
	}
	c.tx.reset()
	return out
}
