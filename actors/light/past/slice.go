package past

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// ExportSlice cuts light's journal from input from on (0: all of it)
// into a self-contained slice: the light's snapshot right before from,
// rebuilt by replay (none when the slice starts at the light's first
// event), then every event of the light after it. Secrets are never in
// it: the journal holds only their names.
func ExportSlice(ctx context.Context, j Events, light string, from uint64) (*journal.Slice, error) {
	if from == 0 {
		first, err := FirstEvent(ctx, j, light)
		if err != nil {
			return nil, err
		}
		from = first.Seq
	}
	s := &journal.Slice{Light: light}
	var after uint64
	if from > 1 {
		sum, err := Rebuild(ctx, j, light, from-1)
		if err != nil {
			return nil, fmt.Errorf("light %s: the state before input %d: %w", light, from, err)
		}
		if after = sum.Model.Seq; after > 0 {
			snap, err := sum.Machine.Snapshot()
			if err != nil {
				return nil, err
			}
			if s.Snapshot, err = json.Marshal(Snapshot{Applied: after, Machine: snap}); err != nil {
				return nil, err
			}
		}
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
