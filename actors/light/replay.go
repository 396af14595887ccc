package light

import (
	"context"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// ReplayEvalTimeout bounds each expression on replay: recorded timeouts
// are taken as given, so replay can be generous.
const ReplayEvalTimeout = 10 * time.Second

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
	// OnSnapshot, when set, is told the input the snapshot covers, before
	// the first input is folded (FromSnapshot).
	OnSnapshot func(input uint64)
	// OnApplied, when set, sees every input folded.
	OnApplied func(*Applied)
}

// ReplaySummary says what a replay did.
type ReplaySummary struct {
	Inputs  int    // inputs applied
	Outputs int    // outputs recomputed
	State   string // the light's state at the end
	Pending int    // inputs journaled but not applied yet
}

// Run replays the light from j. The summary is filled as far as the
// replay got, also when it fails.
func (r Replay) Run(ctx context.Context, j *journal.Journal) (ReplaySummary, error) {
	var sum ReplaySummary
	f := &Fold{Light: r.Light, M: machine.New(machine.WithEvalTimeout(ReplayEvalTimeout))}
	if r.FromSnapshot {
		var err error
		if f, err = Load(ctx, j, r.Light, ReplayEvalTimeout); err != nil {
			return sum, err
		}
		if r.OnSnapshot != nil {
			r.OnSnapshot(f.Applied)
		}
	}
	check := func(ap *Applied, late string) error {
		if !r.Verify {
			return nil
		}
		if seq, why := ap.Mismatch(); why != "" {
			return fmt.Errorf("output at sequence %d differs from its recomputation (input %d%s):\n%s", seq, ap.Input.Seq, late, why)
		}
		return nil
	}
	f.OnApplied = func(ap *Applied) error {
		sum.Inputs++
		sum.Outputs += len(ap.Computed)
		if r.OnApplied != nil {
			r.OnApplied(ap)
		}
		return check(ap, "")
	}
	f.OnLate = func(ap *Applied) error { return check(ap, ", journaled late") }
	err := j.Replay(ctx, subject.Events(r.Light), f.Applied+1, 0, func(m journal.Msg) error {
		if r.ToSeq > 0 && m.Seq > r.ToSeq {
			// Outputs of inputs up to ToSeq may come after it.
			if _, dir, _, _ := subject.Parse(m.Subject); dir == subject.DirIn {
				return nil
			}
		}
		return f.Add(Record{Seq: m.Seq, Subject: m.Subject, Data: m.Data, Time: m.Time})
	})
	if err == nil {
		var open []*Applied
		open, err = f.Finish()
		if err == nil && len(open) > 0 && r.Verify {
			ap := open[0]
			err = fmt.Errorf("input %d has only %d of its %d outputs journaled (the daemon was killed while writing them; it completes them on its next start)",
				ap.Input.Seq, len(ap.Recorded), len(ap.Computed))
		}
	}
	sum.State, sum.Pending = f.M.State(), len(f.Pending)
	return sum, err
}

// String says what the replay did in a few words.
func (s ReplaySummary) String() string {
	out := fmt.Sprintf("%d inputs applied, %d outputs, state %s", s.Inputs, s.Outputs, s.State)
	if s.Pending > 0 {
		out += fmt.Sprintf(", %d inputs not applied yet", s.Pending)
	}
	return out
}
