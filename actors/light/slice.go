package light

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// ExportSlice cuts light's journal from input from on (0: all of it)
// into a self-contained slice: the light's snapshot right before from,
// rebuilt by replay (none when the slice starts at the light's first
// event), then every event of the light after it. Secrets are never in
// it: the journal holds only their names.
func ExportSlice(ctx context.Context, j Events, light string, from uint64) (*journal.Slice, error) {
	s := &journal.Slice{Light: light}
	var after uint64
	if from > 1 {
		var m *machine.Machine
		sum, err := rebuild(ctx, j, light, from-1, func(_ *Applied, got *machine.Machine) { m = got })
		if err != nil {
			return nil, fmt.Errorf("light %s: the state before input %d: %w", light, from, err)
		}
		if m != nil {
			snap, err := m.Snapshot()
			if err != nil {
				return nil, err
			}
			after = sum.Model.Seq
			if s.Snapshot, err = json.Marshal(snapshot{Applied: after, Machine: snap}); err != nil {
				return nil, err
			}
		}
	} else if _, err := (Replay{Light: light}).Run(ctx, j); err != nil {
		// Compacted: the slice starts from the stored snapshot.
		if mi := (*MissingInputError)(nil); !errors.As(err, &mi) {
			return nil, err
		}
		b, err := j.LoadSnapshot(ctx, light)
		if err != nil {
			return nil, fmt.Errorf("light %s: the journal was compacted and its snapshot cannot be read: %w", light, err)
		}
		covered, _ := snapshotCovers(ctx, j, light)
		s.Snapshot, after = b, covered
	}
	err := j.Replay(ctx, subject.Events(light), after+1, 0, func(m journal.Msg) error {
		m.Header, m.NumDelivered = nil, 0
		s.Events = append(s.Events, m)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(s.Events) == 0 && s.Snapshot == nil {
		return nil, fmt.Errorf("light %s has no events from input %d on", light, from)
	}
	return s, nil
}
