package machine

import (
	"fmt"
	"runtime"
	"strings"
	"time"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/messages"
)

// Event is what the machine needs to know about an input besides its
// payload. Everything an expression can observe comes from here.
type Event struct {
	// Seq is the input's JetStream sequence; it seeds random().
	Seq uint64
	// Time is the input's time: now() returns it in milliseconds since the
	// epoch, and timers started by the input are due at Time+ms.
	Time time.Time
	// TimedOut lists the rules whose evaluation is recorded as having
	// timed out for this input (replay and recovery pass them): such a
	// rule is not evaluated, and gives the same timeout error output.
	TimedOut []string
	// TimedOutUntil lists, likewise, the layers whose until condition
	// is recorded as having timed out after this input.
	TimedOutUntil []string
}

// Output is one output event: Type is a messages.Out* constant and Data the
// matching messages.Out*Data value (not a pointer).
type Output struct {
	Type string
	Data any
}

// Result is what applying one input did. Every input yields at least one
// output.
type Result struct {
	Outputs []Output
	State   string                 // the state after the input
	Changed bool                   // the state name changed
	Rule    *string                // the rule that fired, nil if none
	Err     *messages.OutErrorData // non-nil when the input was rejected: then nothing changed and Outputs is that error alone
}

// DefaultEvalTimeout bounds one evaluation of a condition or an action.
const DefaultEvalTimeout = 50 * time.Millisecond

// Option configures a Machine.
type Option func(*options)

type options struct {
	evalTimeout time.Duration
}

// WithEvalTimeout sets the time limit of one expression evaluation
// (default DefaultEvalTimeout). Replay may pass a generous limit: rules
// recorded as timed out are taken from the journal, not re-run.
func WithEvalTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.evalTimeout = d
		}
	}
}

// Machine is one light's state machine: states, rules, variables, timers
// and schedules, changed only by Apply and Fire. It does no I/O and reads
// no clock: given the same inputs it produces the same outputs, byte for
// byte. It is not safe for concurrent use; its one goroutine only
// interrupts expressions that run out of time.
type Machine struct {
	c *core // the watchdog goroutine reaches core, never Machine, so an unreachable Machine can be cleaned up
}

type core struct {
	opts options

	vm                                         *goja.Runtime
	wd                                         *watchdog
	jsParse, jsStringify, jsDescribe, jsTypeof goja.Callable
	jsTrue, jsFalse, jsNull, jsZero            goja.Value
	exprs                                      map[exprKey]*expr         // compiled alone, by source
	factories                                  map[linkKey]goja.Callable // of linked expressions

	// configuration
	states      []*stateDef // off first, then in insertion order
	stateIdx    map[string]*stateDef
	rules       []*rule          // in insertion order
	ruleIdx     map[string]*rule // the light's own rules and its layers'
	initial     string
	onState     string      // where power on goes without a state from before off; "": the first state
	powerOn     string      // after an unclean stop: "" (restore), "off" or "state NAME"
	transition  *int        // the default fade into a state, ms; nil: none (fade.go)
	room        string      // the names people use for the light, normalised; "": none
	aliases     []string    // never changed in place: a commit replaces the slice
	scheds      []*schedule // in insertion order
	schedIdx    map[string]*schedule
	tools       []*tool // custom tools, in definition order
	toolIdx     map[string]*tool
	sources     []*sourceDef           // data sources, in definition order
	fns         *funcs                 // custom functions
	layers      []*layer               // temporary layers, newest first (layers.go)
	layerTr     map[string]*layerTrans // the layers' candidates, by transition
	untils      int                    // layers with an until condition
	freshLayers bool                   // a layer was added by the input being applied
	nextRule    uint64                 // the N of the next assigned id r<N>
	index       map[string]*transIndex
	level       int // of the checks inputs get (Level)

	// state
	cur    string
	curJS  goja.Value
	lastOn string         // the state before the light last went off (control.go)
	bright int            // the dimmer, 1–100 percent
	fade   *messages.Fade // the last fade, until an input comes after its end (fade.go)
	// brightJS is bright as expressions read it
	brightJS goja.Value
	vars     map[string]*value
	timers   map[string]time.Time
	runs     map[string]time.Time // data sources' last runs (InData), by source
	// learned intents, by phrase: state, not configuration (intents.go)
	intents map[string]messages.Intent

	// the input being applied
	seq           uint64
	now           time.Time
	nowJS         goja.Value
	rng           inputRand
	timedOut      []string
	timedOutUntil []string
	fired         string     // the transition the input fired, "" for none
	firedJS       goja.Value // fired as a JS string, when at hand
	inAction      bool
	args          [2]goja.Value // (state, transition) of the evaluation, reused
	tx            tx
	closed        bool

	restoring bool   // Restore: schedules keep their recorded next tick
	trace     *Trace // ApplyTraced: how the input is decided; nil live
}

// New returns a machine with only the built-in state off, in state off.
func New(opts ...Option) *Machine {
	c := newCore(opts)
	if err := c.commit(configOf([]*stateDef{c.defaultOff()}, nil, "", nil, nil, 1)); err != nil {
		panic(err)
	}
	c.setState(offState)
	return wrap(c)
}

func newCore(opts []Option) *core {
	o := options{evalTimeout: DefaultEvalTimeout}
	for _, f := range opts {
		f(&o)
	}
	c := &core{
		opts:    o,
		vars:    make(map[string]*value),
		timers:  make(map[string]time.Time),
		runs:    make(map[string]time.Time),
		intents: make(map[string]messages.Intent),
	}
	c.initJS()
	c.wd = newWatchdog(c.vm, o.evalTimeout)
	return c
}

func wrap(c *core) *Machine {
	m := &Machine{c: c}
	runtime.AddCleanup(m, func(w *watchdog) { w.close() }, c.wd)
	return m
}

// Close stops the machine's watchdog goroutine (a machine that becomes
// unreachable is stopped by the garbage collector too). The machine
// rejects inputs afterwards.
func (m *Machine) Close() {
	m.c.closed = true
	m.c.wd.close()
}

// State returns the current state's name.
func (m *Machine) State() string { return m.c.cur }

// Apply applies one journaled input: inputType is a messages.In* type and
// payload its JSON data. An unknown type or a malformed payload is
// rejected with code 400.
func (m *Machine) Apply(ev Event, inputType string, payload []byte) Result {
	c := m.c
	if c.closed {
		return c.reject(500, "the light's state machine is closed; restart the light")
	}
	c.begin(ev)
	before := c.cur
	return c.end(before, c.apply(inputType, payload))
}

// end finishes an input that was not rejected: the layers whose until
// condition now holds end.
func (c *core) end(before string, res Result) Result {
	if res.Err != nil || len(c.layers) == 0 {
		return res
	}
	n := len(res.Outputs)
	res.Outputs = c.untilEnds(c.fired, res.Outputs)
	if len(res.Outputs) > n {
		res.State = c.cur
		res.Changed = res.Changed || before != c.cur
	}
	return res
}

func (c *core) apply(inputType string, payload []byte) Result {
	switch inputType {
	case messages.InFired:
		tr, ok := fastTransition(payload)
		if !ok {
			var in messages.InFiredData
			if err := messages.Decode(payload, &in); err != nil {
				return c.reject(400, "fired: %s", err)
			}
			tr = in.Transition
		}
		if r := c.checkName("transition", tr); r != nil && tr != "" {
			return c.rejected(r)
		}
		return c.fireInput(tr)
	case messages.InState:
		var in messages.InStateData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "state: %s", err)
		}
		if r := c.checkName("state", in.Name); r != nil && in.Name != "" {
			return c.rejected(r)
		}
		return c.setStateInput(in.Name, in.FadeMs)
	case messages.InVar:
		var in messages.InVarData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "var: %s", err)
		}
		return c.varInput(&in)
	case messages.InConfig:
		var in messages.InConfigData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "config: %s", err)
		}
		return c.configInput(&in)
	case messages.InTimer:
		var in messages.InTimerData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "timer: %s", err)
		}
		return c.timerInput(&in)
	case messages.InSchedule:
		var in messages.InScheduleData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "schedule: %s", err)
		}
		return c.scheduleInput(&in)
	case messages.InData:
		var in messages.InDataData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "data: %s", err)
		}
		return c.dataInput(&in)
	case messages.InUpgrade:
		var in messages.InUpgradeData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "upgrade: %s", err)
		}
		return c.upgradeInput(in.Level)
	case messages.InIntent:
		var in messages.InIntentData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "intent: %s", err)
		}
		return c.intentInput(&in)
	case messages.InLayer:
		var in messages.InLayerData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "layer: %s", err)
		}
		return c.layerInput(&in)
	case messages.InPower:
		var in messages.InPowerData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "power: %s", err)
		}
		return c.powerInput(&in)
	case messages.InBrightness:
		var in messages.InBrightnessData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "brightness: %s", err)
		}
		return c.brightnessInput(&in)
	case messages.InColor:
		var in messages.InColorData
		if err := messages.Decode(payload, &in); err != nil {
			return c.reject(400, "color: %s", err)
		}
		return c.colorInput(&in)
	}
	return c.reject(400, "unknown input type %s; use one of %s", messages.Clip(inputType), strings.Join(inputTypes, ", "))
}

// Fire fires transition as a "fired" input would.
func (m *Machine) Fire(ev Event, transition string) Result {
	c := m.c
	if c.closed {
		return c.reject(500, "the light's state machine is closed; restart the light")
	}
	c.begin(ev)
	before := c.cur
	return c.end(before, c.fireInput(transition))
}

// fastTransition decodes the common payload {"transition":"<plain>"}
// exactly as messages.Decode would; anything else goes the slow way.
func fastTransition(b []byte) (string, bool) {
	const head = `{"transition":"`
	n := len(b)
	if n < len(head)+2 || string(b[:len(head)]) != head || b[n-2] != '"' || b[n-1] != '}' {
		return "", false
	}
	s := b[len(head) : n-2]
	for _, ch := range s {
		if ch < 0x20 || ch == '"' || ch == '\\' || ch >= 0x80 {
			return "", false
		}
	}
	return string(s), true
}

func (c *core) begin(ev Event) {
	c.seq = ev.Seq
	c.now = ev.Time.UTC()
	c.nowJS = nil
	c.rng.seed(ev.Seq)
	c.timedOut = ev.TimedOut
	c.timedOutUntil = ev.TimedOutUntil
	c.fired, c.firedJS = "", nil
	c.fadeOver()
}

func (c *core) reject(code int, format string, args ...any) Result {
	e := messages.OutErrorData{Code: code, Error: fmt.Sprintf(format, args...), Kind: messages.ErrorRejected}
	return Result{Outputs: []Output{{Type: messages.OutError, Data: e}}, State: c.cur, Err: &e}
}

func (c *core) rejected(r *rejection) Result {
	return c.reject(r.code, "%s", r.msg)
}

func (c *core) ignored(transition, reason string, out []Output) Result {
	out = append(out, Output{Type: messages.OutIgnored, Data: messages.OutIgnoredData{Transition: transition, Reason: reason}})
	return Result{Outputs: out, State: c.cur}
}

func (c *core) fireInput(transition string) Result {
	if transition == "" {
		return c.reject(400, "fired: transition is empty; name the transition to fire, e.g. button_click")
	}
	return c.fire(transition, make([]Output, 0, 4))
}

// fire tries the rules matching transition in the current state: those
// of the layers, newest first, then the light's own; among each, by
// priority then insertion, and fires the first whose condition holds.
func (c *core) fire(transition string, out []Output) Result {
	c.fired = transition
	if c.trace != nil {
		c.tracePassed(transition, c.cur)
	}
	if len(c.layers) > 0 {
		lcs, js := c.layerCandidates(transition, c.cur)
		c.firedJS = js
		for _, lc := range lcs {
			l := lc.l
			if l.spent() {
				// One of its rules would have matched: the layer ends here.
				out = c.endLayer(l, messages.LayerEndFires, l.restore, false, out)
				if l.restore {
					return c.enter(l.began, nil, transition, out)
				}
				continue
			}
			res, fired := c.try(lc.cands, js, transition, out)
			if fired {
				if l.kind == layerFires {
					l.fires--
				}
				return res
			}
			out = res.Outputs
		}
	}
	ti := c.index[transition]
	if ti == nil {
		return c.ignored(transition, "no rule matches "+transition+" in state "+c.cur, out)
	}
	c.firedJS = ti.js
	res, fired := c.try(ti.candidates(c.cur), ti.js, transition, out)
	if fired {
		return res
	}
	return c.ignored(transition, "no rule matches "+transition+" in state "+c.cur, res.Outputs)
}

// try tries candidates in order and fires the first whose condition
// holds. Without one, the result holds only the outputs so far.
func (c *core) try(cands []*rule, js goja.Value, transition string, out []Output) (Result, bool) {
	tracing := c.trace != nil
	for i, r := range cands {
		if tracing {
			c.tryRule(r)
		}
		if c.forcedTimeout(r.ID) {
			o := r.failed(&failure{timeout: true}, kindCondition)
			out = append(out, o)
			c.rng.rekey(c.seq, r.ID)
			if tracing {
				c.tried(OutcomeConditionError, o.Data.(messages.OutErrorData).Error, nil)
			}
			continue
		}
		if r.cond != nil {
			ok, f := c.condition(r.cond, js)
			if f != nil {
				o := r.failed(f, kindCondition)
				out = append(out, o)
				if f.timeout {
					c.rng.rekey(c.seq, r.ID)
				}
				if tracing {
					c.tried(OutcomeConditionError, o.Data.(messages.OutErrorData).Error, nil)
				}
				continue
			}
			if !ok {
				if tracing {
					c.tried(OutcomeFalse, "its condition was false", &ok)
				}
				continue
			}
		}
		if r.act != nil {
			if f := c.action(r.act, js); f != nil {
				o := r.failed(f, kindAction)
				out = append(out, o)
				if f.timeout {
					c.rng.rekey(c.seq, r.ID)
				}
				if tracing {
					yes := true
					c.tried(OutcomeActionError, o.Data.(messages.OutErrorData).Error, &yes)
				}
				continue
			}
			out = c.commitTx(out)
		}
		if tracing {
			yes := true
			c.tried(OutcomeFired, "it fired", &yes)
			c.traceNotTried(r, cands[i+1:])
		}
		var fade *int
		if r.FadeMs > 0 {
			fade = &r.FadeMs
		}
		return c.enterFading(r.To, r.idp, transition, out, fade), true
	}
	return Result{Outputs: out, State: c.cur}, false
}

func (c *core) forcedTimeout(id string) bool {
	for _, t := range c.timedOut {
		if t == id {
			return true
		}
	}
	return false
}

func (c *core) condition(e *expr, tr goja.Value) (bool, *failure) {
	c.inAction = false
	if e.fast != nil {
		if ok, handled := e.fast.test(c); handled {
			return ok, nil
		}
	}
	v, f := c.call(e, c.curJS, tr)
	if f != nil {
		return false, f
	}
	return v.ToBoolean(), nil
}

func (c *core) action(e *expr, tr goja.Value) *failure {
	c.tx.reset()
	c.inAction = true
	if e.fast != nil {
		if e.fast.run(c) {
			c.inAction = false
			return nil
		}
		c.tx.reset()
	}
	_, f := c.call(e, c.curJS, tr)
	c.inAction = false
	if f != nil {
		c.tx.reset()
	}
	return f
}

// enter moves to state to and reports it, fading as the light's
// transition_ms says.
func (c *core) enter(to string, rule *string, transition string, out []Output) Result {
	return c.enterFading(to, rule, transition, out, nil)
}

// enterFading is enter with a fade of its own (nil: the light's).
func (c *core) enterFading(to string, rule *string, transition string, out []Output, fade *int) Result {
	from := c.cur
	fade = c.fadeFrom(from, c.bright, fade)
	c.setState(to)
	changed := from != to
	out = append(out, Output{Type: messages.OutState, Data: messages.OutStateData{
		From: from, To: to, Rule: rule, Transition: transition, Changed: changed, FadeMs: fade,
	}})
	return Result{Outputs: out, State: to, Changed: changed, Rule: rule}
}

func (c *core) setState(name string) {
	if name == offState && c.cur != offState && c.stateIdx[c.cur] != nil {
		// Not a state that is being deleted: power on goes back here.
		c.lastOn = c.cur
	}
	c.cur = name
	c.curJS = c.stateIdx[name].js
}

// ---- other inputs ----

func (c *core) setStateInput(name string, fade *int) Result {
	if name == "" {
		return c.reject(400, "state: name is empty; give the name of the state to go to")
	}
	if c.stateIdx[name] == nil {
		return c.reject(404, "state %q does not exist; create it first (create_state), or pick one of: %s", name, c.stateNames())
	}
	if r := checkFade("state", fade); r != nil {
		return c.rejected(r)
	}
	return c.enterFading(name, nil, "", nil, fade)
}

func (c *core) stateNames() string {
	names := make([]string, len(c.states))
	for i, s := range c.states {
		names[i] = s.Name
	}
	return strings.Join(names, ", ")
}

func (c *core) varInput(in *messages.InVarData) Result {
	switch {
	case in.Name == "":
		return c.reject(400, "var: name is empty; give the variable's name")
	case in.Unset && in.Value != nil:
		return c.reject(400, "var %q: give a value or unset:true, not both", in.Name)
	case !in.Unset && in.Value == nil:
		return c.reject(400, "var %q: give a value (any JSON), or unset:true to remove it", in.Name)
	}
	if r := c.checkName("variable", in.Name); r != nil {
		return c.rejected(r)
	}
	if in.Unset {
		delete(c.vars, in.Name)
		return Result{Outputs: []Output{{Type: messages.OutVar, Data: messages.OutVarData{Name: in.Name, Unset: true}}}, State: c.cur}
	}
	v, err := c.parseValue(in.Value)
	if err != nil {
		return c.reject(400, "var %q: the value %s; send valid JSON", in.Name, err)
	}
	if r := c.checkVar(in.Name, v); r != nil {
		return c.rejected(r)
	}
	c.vars[in.Name] = v
	return Result{Outputs: []Output{{Type: messages.OutVar, Data: messages.OutVarData{Name: in.Name, Value: v.raw}}}, State: c.cur}
}

// ignoredTimer is the reason given for a timer input that does not match
// a pending timer.
const ignoredTimer = "timer was cancelled or replaced"

func (c *core) timerInput(in *messages.InTimerData) Result {
	if in.Name == "" {
		return c.reject(400, "timer: name is empty; give the timer's name")
	}
	at, ok := c.timers[in.Name]
	if !ok || !at.Equal(in.Deadline) {
		return c.ignored(in.Name, ignoredTimer, nil)
	}
	delete(c.timers, in.Name)
	out := []Output{{Type: messages.OutTimer, Data: messages.OutTimerData{Op: messages.TimerFire, Name: in.Name, Deadline: at, Late: in.Late}}}
	return c.fire(in.Name, out)
}

func (c *core) scheduleInput(in *messages.InScheduleData) Result {
	if in.Name == "" {
		return c.reject(400, "schedule: name is empty; give the schedule's name")
	}
	s := c.schedIdx[in.Name]
	if s == nil {
		return c.ignored("", fmt.Sprintf("schedule %s does not exist (it was deleted)", in.Name), nil)
	}
	if s.next == nil || !s.next.Equal(in.At) {
		return c.ignored(s.Fires, fmt.Sprintf("schedule %s has no tick pending at %s (it was changed or already fired)", in.Name, in.At.UTC().Format(time.RFC3339Nano)), nil)
	}
	base := s.next.UTC()
	if c.now.After(base) {
		base = c.now
	}
	s.next = s.after(base)
	out := []Output{{Type: messages.OutSchedule, Data: messages.OutScheduleData{
		Op: scheduleFire, Schedule: s.Schedule, Next: copyTime(s.next), Late: in.Late,
	}}}
	return c.fire(s.Fires, out)
}

func copyTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	u := *t
	return &u
}
