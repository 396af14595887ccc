package past

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/nats/journal"
)

// Snapshot is a light's snapshot as the journal keeps it: the machine
// and the last input it covers.
type Snapshot struct {
	Applied uint64          `json:"applied"`
	Machine json.RawMessage `json:"machine"`
}

// Load starts a fold of the light from its latest snapshot (or from
// nothing).
func Load(ctx context.Context, j Events, light string, evalTimeout time.Duration) (*Fold, error) {
	f := &Fold{Light: light}
	b, err := j.LoadSnapshot(ctx, light)
	switch {
	case errors.Is(err, journal.ErrNotFound):
		f.M = machine.New(machine.WithEvalTimeout(evalTimeout))
		return f, nil
	case err != nil:
		return nil, fmt.Errorf("light %s: load snapshot: %w", light, err)
	}
	return FoldFrom(light, b, evalTimeout)
}

// FoldFrom is a fold that starts from snapshot b.
func FoldFrom(light string, b []byte, evalTimeout time.Duration) (*Fold, error) {
	f := &Fold{Light: light}
	var s Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, fmt.Errorf("light %s: snapshot: %w", light, err)
	}
	m, err := machine.Restore(s.Machine, machine.WithEvalTimeout(evalTimeout))
	if err != nil {
		return nil, fmt.Errorf("light %s: snapshot: %w", light, err)
	}
	f.M, f.Applied = m, s.Applied
	return f, nil
}

// Store is where past snapshots are kept: the journal's bucket.
type Store interface {
	SaveRecord(ctx context.Context, key string, data []byte) error
	RecordKeys(ctx context.Context, prefix string) ([]string, error)
	Record(ctx context.Context, key string) ([]byte, error)
	DeleteRecord(ctx context.Context, key string) error
}

// Snap is a snapshot and the last input it covers: a kept past one
// (read on demand), or the latest (data set).
type Snap struct {
	light   string
	Applied uint64
	data    []byte
}

// load returns the snapshot's bytes.
func (p *Snap) load(ctx context.Context, j Events) ([]byte, error) {
	if p.data != nil {
		return p.data, nil
	}
	ps, ok := j.(Store)
	if !ok {
		return nil, fmt.Errorf("light %s: no past snapshots here", p.light)
	}
	return ps.Record(ctx, SnapKey(p.light, p.Applied))
}

func snapPrefix(light string) string { return "past." + light + "." }

// SnapKey is the record key of light's past snapshot covering input
// applied.
func SnapKey(light string, applied uint64) string {
	return snapPrefix(light) + strconv.FormatUint(applied, 10)
}

// Snapshots returns light's kept past snapshots (not their bytes),
// oldest first; none when j keeps none (a journal slice).
func Snapshots(ctx context.Context, j Events, light string) ([]Snap, error) {
	ps, ok := j.(Store)
	if !ok {
		return nil, nil
	}
	keys, err := ps.RecordKeys(ctx, snapPrefix(light))
	if err != nil {
		return nil, err
	}
	out := make([]Snap, 0, len(keys))
	for _, key := range keys {
		if n, err := strconv.ParseUint(strings.TrimPrefix(key, snapPrefix(light)), 10, 64); err == nil {
			out = append(out, Snap{light: light, Applied: n})
		}
	}
	slices.SortFunc(out, func(a, b Snap) int { return cmpUint(a.Applied, b.Applied) })
	return out, nil
}

func cmpUint(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// nearestSnapshot is the newest snapshot, past or latest, that covers no
// input after to (nil: none does), and the oldest input any Snapshot
// covers (0: the light has none).
func nearestSnapshot(ctx context.Context, j Events, light string, to uint64) (best *Snap, oldest uint64, err error) {
	snaps, err := Snapshots(ctx, j, light)
	if err != nil {
		return nil, 0, err
	}
	if b, err := j.LoadSnapshot(ctx, light); err == nil {
		var s Snapshot
		if json.Unmarshal(b, &s) == nil {
			snaps = append(snaps, Snap{light: light, Applied: s.Applied, data: b})
		}
	}
	for i := range snaps {
		s := &snaps[i]
		if oldest == 0 || s.Applied < oldest {
			oldest = s.Applied
		}
		if s.Applied <= to && (best == nil || s.Applied > best.Applied) {
			best = s
		}
	}
	return best, oldest, nil
}
