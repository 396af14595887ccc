package light

import (
	"context"

	"github.com/lumen-home/lumen/actors/light/past"
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

// keepPast stores snapshot b, covering input a.applied, as a past
// snapshot every pastEvery snapshots (counted since the light started),
// and drops the oldest beyond maxPast.
func (a *Actor) keepPast(ctx context.Context, b []byte) {
	a.snapshots++
	ps, ok := any(a.cfg.Journal).(past.Store)
	if !ok || a.snapshots%pastEvery != 0 {
		return
	}
	if err := ps.SaveRecord(ctx, past.SnapKey(a.cfg.Name, a.applied), b); err != nil {
		a.cfg.Logf("light %s: keep a past snapshot: %v", a.cfg.Name, err)
		return
	}
	pasts, err := past.Snapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		a.cfg.Logf("light %s: past snapshots: %v", a.cfg.Name, err)
		return
	}
	for len(pasts) > maxPast {
		a.dropPast(ctx, ps, pasts[0].Applied)
		pasts = pasts[1:]
	}
}

func (a *Actor) dropPast(ctx context.Context, ps past.Store, applied uint64) {
	if err := ps.DeleteRecord(ctx, past.SnapKey(a.cfg.Name, applied)); err != nil {
		a.cfg.Logf("light %s: drop a past snapshot: %v", a.cfg.Name, err)
	}
}

// compactFrom is the first event compaction keeps: after the past
// snapshot nearest the middle of the light's history (so that half of
// it stays answerable), or after the latest snapshot when none is kept.
func (a *Actor) compactFrom(ctx context.Context) uint64 {
	keep := a.applied + 1
	pasts, err := past.Snapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil || len(pasts) == 0 {
		return keep
	}
	first, err := past.FirstEvent(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		return keep
	}
	mid := first.Seq + (a.applied-min(first.Seq, a.applied))/2
	for _, p := range pasts {
		if p.Applied >= mid && p.Applied < a.applied {
			keep = p.Applied + 1
			break
		}
	}
	return keep
}

// dropPastBefore drops the past snapshots a purge up to keep (exclusive)
// has made useless: their events are gone.
func (a *Actor) dropPastBefore(ctx context.Context, keep uint64) {
	ps, ok := any(a.cfg.Journal).(past.Store)
	if !ok {
		return
	}
	pasts, err := past.Snapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		return
	}
	for _, p := range pasts {
		if p.Applied+1 < keep {
			a.dropPast(ctx, ps, p.Applied)
		}
	}
}
