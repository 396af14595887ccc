package light

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Past snapshots: every pastEvery-th snapshot of a light is also kept,
// under past.<light>.<applied>, at most maxPast of them. Compaction
// purges up to one of them, not up to the latest snapshot, so the past
// (get --at, history, whatif, rollback, why) is rebuilt from the nearest
// one before it; past the oldest, the answer says how far back the
// history goes.
const (
	pastEvery = 10
	maxPast   = 32
)

// pastStore is where past snapshots are kept: the journal's bucket.
type pastStore interface {
	SaveRecord(ctx context.Context, key string, data []byte) error
	Records(ctx context.Context, prefix string) (map[string][]byte, error)
	DeleteRecord(ctx context.Context, key string) error
}

// pastSnap is a kept snapshot and the last input it covers.
type pastSnap struct {
	applied uint64
	data    []byte
}

func pastPrefix(light string) string { return "past." + light + "." }

func pastKey(light string, applied uint64) string {
	return pastPrefix(light) + strconv.FormatUint(applied, 10)
}

// pastSnapshots returns light's kept past snapshots, oldest first; none
// when j keeps none (a journal slice).
func pastSnapshots(ctx context.Context, j Events, light string) ([]pastSnap, error) {
	ps, ok := j.(pastStore)
	if !ok {
		return nil, nil
	}
	recs, err := ps.Records(ctx, pastPrefix(light))
	if err != nil {
		return nil, err
	}
	out := make([]pastSnap, 0, len(recs))
	for key, data := range recs {
		if n, err := strconv.ParseUint(strings.TrimPrefix(key, pastPrefix(light)), 10, 64); err == nil {
			out = append(out, pastSnap{applied: n, data: data})
		}
	}
	slices.SortFunc(out, func(a, b pastSnap) int { return cmpUint(a.applied, b.applied) })
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

// keepPast stores snapshot b, covering input applied, as a past snapshot
// when the last one kept is pastEvery snapshots old, and drops the
// oldest beyond maxPast.
func (a *Actor) keepPast(ctx context.Context, b []byte) {
	ps, ok := any(a.cfg.Journal).(pastStore)
	if !ok || a.applied < a.lastPast+uint64(pastEvery*a.cfg.SnapshotEvery) {
		return
	}
	if err := ps.SaveRecord(ctx, pastKey(a.cfg.Name, a.applied), b); err != nil {
		a.cfg.Logf("light %s: keep a past snapshot: %v", a.cfg.Name, err)
		return
	}
	a.lastPast = a.applied
	pasts, err := pastSnapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		a.cfg.Logf("light %s: past snapshots: %v", a.cfg.Name, err)
		return
	}
	for len(pasts) > maxPast {
		a.dropPast(ctx, ps, pasts[0].applied)
		pasts = pasts[1:]
	}
}

func (a *Actor) dropPast(ctx context.Context, ps pastStore, applied uint64) {
	if err := ps.DeleteRecord(ctx, pastKey(a.cfg.Name, applied)); err != nil {
		a.cfg.Logf("light %s: drop a past snapshot: %v", a.cfg.Name, err)
	}
}

// compactFrom is the first event compaction keeps: after the past
// snapshot nearest the middle of the light's history (so that half of
// it stays answerable), or after the latest snapshot when none is kept.
// Past snapshots before the one chosen are dropped: their events go.
func (a *Actor) compactFrom(ctx context.Context) uint64 {
	keep := a.applied + 1
	pasts, err := pastSnapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil || len(pasts) == 0 {
		return keep
	}
	first, err := firstEvent(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		return keep
	}
	mid := first.Seq + (a.applied-min(first.Seq, a.applied))/2
	for _, p := range pasts {
		if p.applied >= mid && p.applied < a.applied {
			keep = p.applied + 1
			break
		}
	}
	ps := any(a.cfg.Journal).(pastStore)
	for _, p := range pasts {
		if p.applied+1 < keep {
			a.dropPast(ctx, ps, p.applied)
		}
	}
	return keep
}

// nearestSnapshot is the newest snapshot, past or latest, that covers no
// input after to, and the oldest input any snapshot covers.
func nearestSnapshot(ctx context.Context, j Events, light string, to uint64) (best *pastSnap, oldest uint64, err error) {
	snaps, err := pastSnapshots(ctx, j, light)
	if err != nil {
		return nil, 0, err
	}
	if b, err := j.LoadSnapshot(ctx, light); err == nil {
		if covered, ok := snapshotCovers(ctx, j, light); ok {
			snaps = append(snaps, pastSnap{applied: covered, data: b})
		}
	}
	for i := range snaps {
		s := &snaps[i]
		if oldest == 0 || s.applied < oldest {
			oldest = s.applied
		}
		if s.applied <= to && (best == nil || s.applied > best.applied) {
			best = s
		}
	}
	if best == nil && oldest == 0 {
		return nil, 0, fmt.Errorf("light %s: no snapshot to start from", light)
	}
	return best, oldest, nil
}
