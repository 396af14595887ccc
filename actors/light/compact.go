package light

import (
	"context"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// compact bounds the journal's size: once it holds more than the
// threshold, the events this light's fresh snapshot covers are purged.
// Nothing a snapshot does not cover is ever dropped. On a Pi of a house,
// nothing the hub has not copied either, unless the journal is nearly
// full: then the purge goes on, and a gap event says what the house
// will never have.
func (a *Actor) compact(ctx context.Context) {
	if a.cfg.CompactAbove == 0 {
		return
	}
	size, _, err := a.cfg.Journal.Size(ctx)
	if err != nil || size <= a.cfg.CompactAbove {
		a.logCompact(err)
		return
	}
	// Outputs of covered inputs stored after the snapshot kept are kept;
	// a fold from it skips them by their cause.
	keep := a.compactFrom(ctx)
	var gap *messages.OutGapData
	if a.cfg.HouseFloor != nil {
		floor, err := a.cfg.HouseFloor(ctx)
		switch {
		case err != nil:
			a.cfg.Logf("light %s: how far the house has the journal: %v; compaction waits", a.cfg.Name, err)
			return
		case floor+1 >= keep:
		case size <= a.cfg.ForceAbove:
			keep = floor + 1
		default:
			gap = &messages.OutGapData{From: floor + 1, To: keep - 1,
				Reason: "the journal was nearly full while the hub had not copied these events"}
		}
	}
	if err := a.cfg.Journal.Purge(ctx, subject.Events(a.cfg.Name), keep); err != nil {
		a.logCompact(err)
		return
	}
	a.dropPastBefore(ctx, keep)
	if gap != nil {
		env := messages.Gap(a.cfg.Name, *gap, a.cfg.Clock.Now())
		if _, err := a.cfg.Journal.Append(ctx, subject.Out(a.cfg.Name, messages.OutGap), messages.AppendEnvelope(nil, &env), journal.MsgID(env.ID)); err != nil {
			a.cfg.Logf("light %s: journal the gap: %v", a.cfg.Name, err)
		}
		a.cfg.Logf("light %s: purged events %d to %d the house does not have: the journal is nearly full", a.cfg.Name, gap.From, gap.To)
	}
}

func (a *Actor) logCompact(err error) {
	if err != nil {
		a.cfg.Logf("light %s: compact the journal: %v", a.cfg.Name, err)
	}
}
