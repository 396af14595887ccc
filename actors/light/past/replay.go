package past

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

// ReplayEvalTimeout bounds each expression on replay: recorded timeouts
// are taken as given, so replay can be generous.
const ReplayEvalTimeout = 10 * time.Second

// Events is what a replay reads: the journal (*journal.Journal), or a
// slice of it exported to a file (journal.Slice).
type Events interface {
	Replay(ctx context.Context, filter string, from, to uint64, fn func(journal.Msg) error) error
	LastMsg(ctx context.Context, subj string) (journal.Msg, error)
	LoadSnapshot(ctx context.Context, light string) ([]byte, error)
	Lights(ctx context.Context) ([]string, error)
	FirstSeq(ctx context.Context) (uint64, error)
}

// Replay rebuilds a light from its journal with no side effects: no LED,
// no network, no model. It is what `lumen replay` runs.
type Replay struct {
	Light string
	// ToSeq stops after the input with this stream sequence (0: the end).
	ToSeq uint64
	// Verify fails on the first recorded output that differs from its
	// recomputation, naming its sequence.
	Verify bool
	// FromSnapshot starts from the light's latest snapshot instead of the
	// first event.
	FromSnapshot bool
	// Snapshot, when set, is a snapshot to start from instead (a past
	// one: see PastSnapshots).
	Snapshot []byte
	// OnSnapshot, when set, is told the input the snapshot covers, before
	// the first input is folded (FromSnapshot, Snapshot).
	OnSnapshot func(input uint64)
	// Trace, when set, is the input whose decision OnApplied sees in
	// Applied.Trace.
	Trace uint64
	// OnEvent, when set, sees every event read, before it is folded.
	OnEvent func(journal.Msg)
	// OnApplied, when set, sees every input folded.
	OnApplied func(*Applied)
	// OnModel, when set, sees the machine right after each input is
	// folded; it must not change it.
	OnModel func(*Applied, *machine.Machine)
	// OnGap, when set, is told when a verifying replay goes on across
	// lost events (a gap output names them) from a snapshot.
	OnGap func(lost messages.OutGapData, input uint64)
}

// ReplaySummary says what a replay did.
type ReplaySummary struct {
	Inputs  int    // inputs applied
	Outputs int    // outputs recomputed
	State   string // the light's state at the end
	Pending int    // inputs journaled but not applied yet
	// Model is the light's whole model at the end, Seq the last input
	// applied.
	Model messages.GetReply
	// Machine is the machine at the end (the snapshot's when no input
	// followed it), for a caller that goes on from there.
	Machine *machine.Machine
}

// Run replays the light from j. The summary is filled as far as the
// replay got, also when it fails.
func (r Replay) Run(ctx context.Context, j Events) (ReplaySummary, error) {
	var sum ReplaySummary
	f := &Fold{Light: r.Light, M: machine.New(machine.WithEvalTimeout(ReplayEvalTimeout))}
	if r.FromSnapshot || r.Snapshot != nil {
		var err error
		if r.Snapshot != nil {
			f, err = FoldFrom(r.Light, r.Snapshot, ReplayEvalTimeout)
		} else {
			f, err = Load(ctx, j, r.Light, ReplayEvalTimeout)
		}
		if err != nil {
			return sum, err
		}
		if r.OnSnapshot != nil {
			r.OnSnapshot(f.Applied)
		}
	}
	// A mismatch after events a gap names lost may be theirs (a lost
	// input): the replay goes on from the first snapshot after it, once
	// per gap, and fails only without one.
	var (
		across   *messages.OutGapData // the gap to go on across
		mismatch error
		differs  uint64 // the input whose outputs differ after the gap
		resynced uint64 // the input the replay went on from
	)
	check := func(ap *Applied, late string) error {
		if !r.Verify {
			return nil
		}
		seq, why := ap.Mismatch()
		if why == "" {
			return nil
		}
		err := fmt.Errorf("output at sequence %d differs from its recomputation (input %d%s):\n%s", seq, ap.Input.Seq, late, why)
		for i, g := range f.Lost {
			if g.To < ap.Input.Seq && g.To > resynced && across == nil {
				across, mismatch, differs = &f.Lost[i], err, ap.Input.Seq
				return nil
			}
		}
		return err
	}
	f.Trace = r.Trace
	f.OnApplied = func(ap *Applied) error {
		sum.Inputs++
		sum.Outputs += len(ap.Computed)
		if r.OnApplied != nil {
			r.OnApplied(ap)
		}
		if r.OnModel != nil {
			r.OnModel(ap, f.M)
		}
		return check(ap, "")
	}
	f.OnLate = func(ap *Applied) error { return check(ap, ", journaled late") }
	if err := r.exists(ctx, j); err != nil {
		return sum, err
	}
	lost, err := ReadLost(ctx, j, r.Light)
	if err != nil {
		return sum, err
	}
	f.Lost = lost
	// goOn swaps the fold for one from the snapshot after a gap when
	// check asked for it.
	goOn := func() error {
		if across == nil {
			return nil
		}
		nf, err := snapshotAfter(ctx, j, r.Light, differs)
		if err != nil || nf == nil {
			lost := repair.Range{From: across.From, To: across.To}
			return errors.Join(fmt.Errorf("%w\n(%s lost before it, and no snapshot after it lets the replay go on)", mismatch, lost), err)
		}
		nf.Lost, nf.Trace, nf.OnApplied, nf.OnLate = f.Lost, f.Trace, f.OnApplied, f.OnLate
		if r.OnGap != nil {
			r.OnGap(*across, nf.Applied)
		}
		f, resynced, across = nf, nf.Applied, nil
		return nil
	}
	errDone := errors.New("done")
	err = j.Replay(ctx, subject.Events(r.Light), f.Applied+1, 0, func(m journal.Msg) error {
		if r.ToSeq > 0 && m.Seq > r.ToSeq {
			// Outputs of inputs up to ToSeq may come after it; those of
			// later inputs are not replayed. The light journals outputs
			// in input order: one of a later input ends the replay.
			if _, dir, _, _ := subject.Parse(m.Subject); dir == subject.DirIn {
				return nil
			}
			if cause, err := CauseOf(m.Data); err == nil && cause > r.ToSeq {
				return errDone
			}
		}
		if r.OnEvent != nil {
			r.OnEvent(m)
		}
		if err := f.Add(Record{Seq: m.Seq, Subject: m.Subject, Data: m.Data, Time: m.Time}); err != nil {
			return err
		}
		return goOn()
	})
	if errors.Is(err, errDone) {
		err = nil
	}
	if mi := (*MissingInputError)(nil); errors.As(err, &mi) {
		err = r.explainMissing(ctx, j, mi)
	}
	if err == nil {
		var open []*Applied
		open, err = f.Finish()
		if err == nil {
			err = goOn()
		}
		if err == nil && len(open) > 0 && r.Verify {
			ap := open[0]
			err = fmt.Errorf("input %d has only %d of its %d outputs journaled (the daemon was killed while writing them; it completes them on its next start)",
				ap.Input.Seq, len(ap.Recorded), len(ap.Computed))
		}
	}
	sum.State, sum.Pending, sum.Machine = f.M.State(), len(f.Pending), f.M
	sum.Model = f.M.Model()
	sum.Model.OK, sum.Model.Light, sum.Model.Seq = true, r.Light, f.Applied
	return sum, err
}

// snapshotAfter is a fold from the first snapshot (kept past ones, then
// the latest) that covers the input at seq or later; nil when none does.
func snapshotAfter(ctx context.Context, j Events, light string, seq uint64) (*Fold, error) {
	snaps, err := Snapshots(ctx, j, light)
	if err != nil {
		return nil, err
	}
	for _, s := range snaps {
		if s.Applied >= seq {
			b, err := s.load(ctx, j)
			if err != nil {
				return nil, err
			}
			return FoldFrom(light, b, ReplayEvalTimeout)
		}
	}
	f, err := Load(ctx, j, light, ReplayEvalTimeout)
	if err != nil || f.Applied < seq {
		return nil, err
	}
	return f, nil
}

// ReadLost reads the light's gap outputs: the events its journal will
// never have (lumen journal repair removed them, or a Pi purged them
// before its hub copied them).
func ReadLost(ctx context.Context, j interface {
	Replay(ctx context.Context, filter string, from, to uint64, fn func(journal.Msg) error) error
}, light string) ([]messages.OutGapData, error) {
	var lost []messages.OutGapData
	err := j.Replay(ctx, subject.Out(light, messages.OutGap), 0, 0, func(m journal.Msg) error {
		var env messages.Envelope
		var g messages.OutGapData
		if messages.DecodeEnvelope(m.Data, &env) == nil && json.Unmarshal(env.Data, &g) == nil {
			lost = append(lost, g)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("light %s: read its gaps: %w", light, err)
	}
	return lost, nil
}

// String says what the replay did in a few words.
func (s ReplaySummary) String() string {
	out := fmt.Sprintf("%d inputs applied, %d outputs, state %s", s.Inputs, s.Outputs, s.State)
	if s.Pending > 0 {
		out += fmt.Sprintf(", %d inputs not applied yet", s.Pending)
	}
	return out
}

// exists fails when the journal has neither an event nor a snapshot of the
// light, naming the lights it has.
func (r Replay) exists(ctx context.Context, j Events) error {
	_, err := j.LastMsg(ctx, subject.Events(r.Light))
	if !errors.Is(err, journal.ErrNotFound) {
		return err
	}
	if _, err := j.LoadSnapshot(ctx, r.Light); !errors.Is(err, journal.ErrNotFound) {
		return err
	}
	lights, err := j.Lights(ctx)
	if err != nil {
		return err
	}
	if len(lights) == 0 {
		return fmt.Errorf("light: no light %q: the journal holds no light at all", r.Light)
	}
	return fmt.Errorf("light: no light %q in the journal; it has %s", r.Light, strings.Join(lights, ", "))
}

// explainMissing says why an output's input is missing: compacted away
// (the stream starts after it), or not in the journal at all.
func (r Replay) explainMissing(ctx context.Context, j Events, mi *MissingInputError) error {
	first, err := j.FirstSeq(ctx)
	switch {
	case err != nil:
		return fmt.Errorf("%w (%v)", mi, err)
	case mi.Cause < first:
		return fmt.Errorf("%w: the journal was compacted, it starts at sequence %d; replay with --from-snapshot", mi, first)
	}
	return fmt.Errorf("%w: the journal lacks it or is out of order", mi)
}
