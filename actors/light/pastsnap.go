package light

import (
	"context"
	"encoding/json"
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
	RecordKeys(ctx context.Context, prefix string) ([]string, error)
	Record(ctx context.Context, key string) ([]byte, error)
	DeleteRecord(ctx context.Context, key string) error
}

// pastSnap is a snapshot and the last input it covers: a kept past one
// (read on demand), or the latest (data set).
type pastSnap struct {
	light   string
	applied uint64
	data    []byte
}

// load returns the snapshot's bytes.
func (p *pastSnap) load(ctx context.Context, j Events) ([]byte, error) {
	if p.data != nil {
		return p.data, nil
	}
	ps, ok := j.(pastStore)
	if !ok {
		return nil, fmt.Errorf("light %s: no past snapshots here", p.light)
	}
	return ps.Record(ctx, pastKey(p.light, p.applied))
}

func pastPrefix(light string) string { return "past." + light + "." }

func pastKey(light string, applied uint64) string {
	return pastPrefix(light) + strconv.FormatUint(applied, 10)
}

// pastSnapshots returns light's kept past snapshots (not their bytes),
// oldest first; none when j keeps none (a journal slice).
func pastSnapshots(ctx context.Context, j Events, light string) ([]pastSnap, error) {
	ps, ok := j.(pastStore)
	if !ok {
		return nil, nil
	}
	keys, err := ps.RecordKeys(ctx, pastPrefix(light))
	if err != nil {
		return nil, err
	}
	out := make([]pastSnap, 0, len(keys))
	for _, key := range keys {
		if n, err := strconv.ParseUint(strings.TrimPrefix(key, pastPrefix(light)), 10, 64); err == nil {
			out = append(out, pastSnap{light: light, applied: n})
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

// keepPast stores snapshot b, covering input a.applied, as a past
// snapshot every pastEvery snapshots (counted since the light started),
// and drops the oldest beyond maxPast.
func (a *Actor) keepPast(ctx context.Context, b []byte) {
	a.snapshots++
	ps, ok := any(a.cfg.Journal).(pastStore)
	if !ok || a.snapshots%pastEvery != 0 {
		return
	}
	if err := ps.SaveRecord(ctx, pastKey(a.cfg.Name, a.applied), b); err != nil {
		a.cfg.Logf("light %s: keep a past snapshot: %v", a.cfg.Name, err)
		return
	}
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
	return keep
}

// dropPastBefore drops the past snapshots a purge up to keep (exclusive)
// has made useless: their events are gone.
func (a *Actor) dropPastBefore(ctx context.Context, keep uint64) {
	ps, ok := any(a.cfg.Journal).(pastStore)
	if !ok {
		return
	}
	pasts, err := pastSnapshots(ctx, a.cfg.Journal, a.cfg.Name)
	if err != nil {
		return
	}
	for _, p := range pasts {
		if p.applied+1 < keep {
			a.dropPast(ctx, ps, p.applied)
		}
	}
}

// nearestSnapshot is the newest snapshot, past or latest, that covers no
// input after to (nil: none does), and the oldest input any snapshot
// covers (0: the light has none).
func nearestSnapshot(ctx context.Context, j Events, light string, to uint64) (best *pastSnap, oldest uint64, err error) {
	snaps, err := pastSnapshots(ctx, j, light)
	if err != nil {
		return nil, 0, err
	}
	if b, err := j.LoadSnapshot(ctx, light); err == nil {
		var s snapshot
		if json.Unmarshal(b, &s) == nil {
			snaps = append(snaps, pastSnap{light: light, applied: s.Applied, data: b})
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
	return best, oldest, nil
}
