package past

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/subject"
)

// Record is one journaled event of a light, as read from the stream.
type Record struct {
	Seq     uint64
	Subject string
	Data    []byte
	Time    time.Time // the stream's timestamp
}

// Input is a decoded input event, ready for the machine.
type Input struct {
	Seq  uint64
	ID   string
	Type string
	Time time.Time
	By   string // who asked, "" when the input does not say
	Data []byte
	// Reject is set when the event cannot be applied as sent (an envelope
	// for another light or type); the machine is then not consulted.
	Reject string
}

// DecodeInput turns an input record into an Input. An envelope gives id,
// type and time; a bare payload (e.g. from `nats pub`) takes its type from
// the subject and its time from the stream, so replay sees the same input.
func DecodeInput(light string, r Record) Input {
	_, _, typ, _ := subject.Parse(r.Subject)
	in := Input{Seq: r.Seq, Type: typ, Time: r.Time.UTC(), Data: r.Data}
	var env messages.Envelope
	if messages.DecodeEnvelope(r.Data, &env) == nil && env.V > 0 && env.Data != nil {
		in.ID, in.Data, in.By = env.ID, env.Data, env.By
		if !env.Time.IsZero() {
			in.Time = env.Time.UTC()
		}
		switch {
		case env.V > messages.Version:
			in.Reject = fmt.Sprintf("event schema version %d is newer than this light understands (%d); upgrade lumen", env.V, messages.Version)
		case env.Light != "" && env.Light != light:
			in.Reject = fmt.Sprintf("envelope names light %q but was published to %q; publish to lumen.%s.evt.in.%s", env.Light, light, env.Light, env.Type)
		case env.Type != "" && env.Type != typ:
			in.Reject = fmt.Sprintf("envelope type %q does not match subject type %q", env.Type, typ)
		}
	}
	return in
}

// Compute applies in to m and returns the encoded output events, exactly
// as the light journals them. timedOut carries the rules (and layers'
// until conditions) recorded as timed out for this input (zero when live).
func Compute(m *machine.Machine, light string, in Input, timedOut TimedOut) (machine.Result, [][]byte) {
	res, out, _ := compute(m, light, in, timedOut, false)
	return res, out
}

// TimedOut is what a recorded input timed out on: rules by id, layers'
// until conditions by layer name.
type TimedOut struct {
	Rules, Until []string
}

// compute is Compute, tracing how the machine decided when trace is set.
func compute(m *machine.Machine, light string, in Input, timedOut TimedOut, trace bool) (machine.Result, [][]byte, *machine.Trace) {
	var res machine.Result
	var tr *machine.Trace
	switch ev := (machine.Event{Seq: in.Seq, Time: in.Time, TimedOut: timedOut.Rules, TimedOutUntil: timedOut.Until}); {
	case in.Reject != "":
		e := messages.OutErrorData{Code: 400, Error: in.Reject, Kind: messages.ErrorRejected}
		res = machine.Result{State: m.State(), Err: &e, Outputs: []machine.Output{{Type: messages.OutError, Data: e}}}
	case trace:
		res, tr = m.ApplyTraced(ev, in.Type, in.Data)
	default:
		res = m.Apply(ev, in.Type, in.Data)
	}
	out := make([][]byte, len(res.Outputs))
	for i, o := range res.Outputs {
		data, err := json.Marshal(o.Data)
		if err != nil {
			// Output payloads are plain structs; this cannot fail.
			panic(fmt.Sprintf("light: encode %s output: %v", o.Type, err))
		}
		env := messages.Output(light, in.Seq, i, o.Type, in.Time, data)
		out[i] = messages.AppendEnvelope(nil, &env)
	}
	return res, out, tr
}

// Applied describes one input folded into the machine.
type Applied struct {
	Input    Input
	Result   machine.Result
	Computed [][]byte // outputs as recomputed now
	Recorded []Record // outputs as found in the journal, in stream order
	// Trace is how the machine decided the input, for the input the fold
	// was asked to trace (Fold.Trace); nil for the others.
	Trace *machine.Trace
	// Level is the light's check level when the input was applied.
	Level int
}

// outputIndex is the position of a recorded output among its input's
// outputs, from its id (<light>:<cause>:<n>), or -1 when the id has none.
func outputIndex(r Record) int {
	var env messages.Envelope
	if messages.DecodeEnvelope(r.Data, &env) != nil {
		return -1
	}
	i := strings.LastIndexByte(env.ID, ':')
	n, err := strconv.Atoi(env.ID[i+1:])
	if i < 0 || err != nil || n < 0 {
		return -1
	}
	return n
}

// Mismatch reports the first recorded output that differs from its
// recomputation, or "" when they agree.
func (a *Applied) Mismatch() (seq uint64, why string) {
	for i, r := range a.Recorded {
		n := outputIndex(r)
		if n < 0 {
			n = i
		}
		if n >= len(a.Computed) {
			return r.Seq, fmt.Sprintf("output %d of input %d was recorded but is not produced on replay", n, a.Input.Seq)
		}
		if !bytes.Equal(r.Data, a.Computed[n]) && !(a.Level < machine.Level && reworded(r.Data, a.Computed[n])) {
			return r.Seq, fmt.Sprintf("recorded  %s\nrecomputed %s", r.Data, a.Computed[n])
		}
	}
	return 0, ""
}

// reworded reports whether two error outputs differ only in their
// sentence. An older lumen's refusals are compared so: its sentences are
// for people and get clearer from one lumen to the next, while the
// decision (the code, the kind, what was refused) must replay the same.
// Inputs applied at the current level are compared byte for byte.
func reworded(recorded, computed []byte) bool {
	var a, b messages.Envelope
	if messages.DecodeEnvelope(recorded, &a) != nil || messages.DecodeEnvelope(computed, &b) != nil ||
		a.Type != messages.OutError || b.Type != messages.OutError {
		return false
	}
	var ea, eb messages.OutErrorData
	if json.Unmarshal(a.Data, &ea) != nil || json.Unmarshal(b.Data, &eb) != nil {
		return false
	}
	ea.Error, eb.Error = "", ""
	a.Data, b.Data = nil, nil
	ja, _ := json.Marshal(ea)
	jb, _ := json.Marshal(eb)
	return bytes.Equal(ja, jb) && bytes.Equal(messages.AppendEnvelope(nil, &a), messages.AppendEnvelope(nil, &b))
}

// Partial reports whether fewer outputs were recorded than computed: the
// process died, or the journal failed, while publishing them.
func (a *Applied) Partial() bool { return len(a.Recorded) < len(a.Computed) }

// Missing lists the outputs computed but not recorded, by position.
func (a *Applied) Missing() []int {
	have := make([]bool, len(a.Computed))
	for i, r := range a.Recorded {
		n := outputIndex(r)
		if n < 0 {
			n = i
		}
		if n < len(have) {
			have[n] = true
		}
	}
	var miss []int
	for n, ok := range have {
		if !ok {
			miss = append(miss, n)
		}
	}
	return miss
}

// Fold rebuilds a light from its journal: it feeds the inputs that have
// journaled outputs through the machine, in stream order, comparing what
// it computes with what was recorded. Inputs with no outputs yet were never
// applied and are left in Pending for the live consumer.
//
// The light journals the outputs of a group of inputs at once. A crash
// leaves a prefix of them: the last input folded may be partial. A journal
// that refused one output and stored a later one leaves earlier inputs
// partial too; the fold applies them all the same (the inputs are the
// truth) and Finish returns every input still missing outputs, so that
// recovery can publish them, after later ones.
type Fold struct {
	Light   string
	M       *machine.Machine
	Applied uint64 // the last input applied (from a snapshot, then folded)
	// Trace, when set, is the input whose decision the fold records.
	Trace uint64
	// OnApplied, when set, sees every folded input; an error stops the fold.
	OnApplied func(*Applied) error
	// OnLate, when set, sees an input again when one of its outputs is
	// found after those of later inputs; an error stops the fold.
	OnLate func(*Applied) error
	// Lost are the events the journal's gaps say it will never have
	// (ReadLost): the outputs of a lost input are skipped, and an input
	// with a gap after it is not missing the outputs it lacks.
	Lost []messages.OutGapData

	head    *Input
	outs    []Record
	open    map[uint64]*Applied // partial inputs, by sequence
	Pending []Input             // inputs after the last applied one, not applied yet
}

// Add feeds the next record of the light's journal, in stream order.
func (f *Fold) Add(r Record) error {
	_, dir, _, ok := subject.Parse(r.Subject)
	if !ok {
		return nil
	}
	if dir == "in" {
		if r.Seq <= f.Applied {
			return nil
		}
		f.Pending = append(f.Pending, DecodeInput(f.Light, r))
		return nil
	}
	cause, err := CauseOf(r.Data)
	if err != nil {
		return fmt.Errorf("light: output at sequence %d: %w", r.Seq, err)
	}
	if cause == 0 || f.lost(cause) {
		return nil // restart and gap events, outputs of a lost input
	}
	if f.head != nil && f.head.Seq == cause {
		f.outs = append(f.outs, r)
		return nil
	}
	if cause <= f.Applied {
		a := f.open[cause]
		if a == nil {
			return nil // outputs a snapshot already covers
		}
		a.Recorded = append(a.Recorded, r)
		if !a.Partial() {
			delete(f.open, cause)
		}
		if f.OnLate != nil {
			return f.OnLate(a)
		}
		return nil
	}
	if err := f.flush(); err != nil {
		return err
	}
	i := slices.IndexFunc(f.Pending, func(in Input) bool { return in.Seq == cause })
	if i < 0 {
		return &MissingInputError{Output: r.Seq, Cause: cause, After: f.Applied}
	}
	// Inputs before it with no outputs at all were applied, but the
	// journal refused their outputs.
	for _, in := range f.Pending[:i] {
		f.head, f.outs = &in, nil
		if err := f.flush(); err != nil {
			return err
		}
	}
	in := f.Pending[i]
	f.Pending = f.Pending[i+1:]
	f.head, f.outs = &in, []Record{r}
	return nil
}

// Finish folds the last input whose outputs were seen and returns, in
// input order, every applied input whose outputs are not all journaled,
// so that a caller recovering from a crash can publish what is missing.
func (f *Fold) Finish() ([]*Applied, error) {
	if err := f.flush(); err != nil {
		return nil, err
	}
	open := make([]*Applied, 0, len(f.open))
	for _, a := range f.open {
		open = append(open, a)
	}
	slices.SortFunc(open, func(a, b *Applied) int { return cmp.Compare(a.Input.Seq, b.Input.Seq) })
	return open, nil
}

func (f *Fold) flush() error {
	if f.head == nil {
		return nil
	}
	in := *f.head
	level := f.M.Level()
	res, computed, tr := compute(f.M, f.Light, in, timedOutRules(f.outs), f.Trace != 0 && in.Seq == f.Trace)
	a := &Applied{Input: in, Level: level, Result: res, Computed: computed, Recorded: f.outs, Trace: tr}
	f.head, f.outs = nil, nil
	f.Applied = in.Seq
	if a.Partial() && !f.lostAfter(in.Seq) {
		if f.open == nil {
			f.open = map[uint64]*Applied{}
		}
		f.open[in.Seq] = a
	}
	if f.OnApplied != nil {
		return f.OnApplied(a)
	}
	return nil
}

// lost reports whether a gap names seq.
func (f *Fold) lost(seq uint64) bool {
	return slices.ContainsFunc(f.Lost, func(g messages.OutGapData) bool { return g.From <= seq && seq <= g.To })
}

// lostAfter reports whether a gap names events after input seq, where
// its outputs were.
func (f *Fold) lostAfter(seq uint64) bool {
	return slices.ContainsFunc(f.Lost, func(g messages.OutGapData) bool { return g.From > seq })
}

// MissingInputError is an output whose input the fold has not seen: it
// was purged (compacted) before the fold's start, or the journal lacks it.
type MissingInputError struct {
	Output, Cause uint64
	After         uint64 // the last input applied
}

func (e *MissingInputError) Error() string {
	return fmt.Sprintf("light: output at sequence %d is caused by input %d, which is not in the journal after input %d", e.Output, e.Cause, e.After)
}

// CauseOf is the input an output names as its cause.
func CauseOf(b []byte) (uint64, error) {
	var env messages.Envelope
	if err := messages.DecodeEnvelope(b, &env); err != nil {
		return 0, err
	}
	return env.Cause, nil
}

// timedOutRules finds the rules and until conditions a recorded input
// timed out on: timeouts depend on the machine's speed, so they are taken
// as given on replay.
func timedOutRules(outs []Record) TimedOut {
	var to TimedOut
	for _, r := range outs {
		if !strings.HasSuffix(r.Subject, "."+messages.OutError) {
			continue
		}
		var env messages.Envelope
		if messages.DecodeEnvelope(r.Data, &env) != nil {
			continue
		}
		var e messages.OutErrorData
		if json.Unmarshal(env.Data, &e) != nil || e.Kind != messages.ErrorTimeout {
			continue
		}
		switch {
		case e.Rule != "":
			to.Rules = append(to.Rules, e.Rule)
		case e.Layer != "":
			to.Until = append(to.Until, e.Layer)
		}
	}
	return to
}

// Line says in one line what an input was and what it did, as lumen
// replay prints it.
func (ap *Applied) Line() string {
	in := ap.Input
	what := describe.Input(messages.Envelope{Type: in.Type, Data: in.Data})
	if len(what) > 60 {
		what = clip.To(what, 57, "…")
	}
	line := fmt.Sprintf("%6d %-8s %s", in.Seq, in.Type, what)
	r := ap.Result
	switch {
	case r.Err != nil:
		line += fmt.Sprintf("  ✗ %s", r.Err.Error)
	case r.Rule != nil:
		line += fmt.Sprintf("  → %s (rule %s)", r.State, *r.Rule)
	default:
		line += fmt.Sprintf("  → %s", r.State)
	}
	return line
}
