package journal

import (
	"context"
	"strings"
)

// Reading through a copy (WithOrigin) from an origin's sequence: the
// copy's places are not its origins' sequences, so a reader would read
// the whole copy and keep what comes at or after from. One light's events
// are copied from one journal, its Pi's, in that journal's order (the
// events of another, which own skips, aside): their origin sequences grow
// with their places, and a binary search over places finds where to
// begin in a few reads (a phone's page at a hub resuming one light's
// stream, for instance).

// probeBatch is how many events a probe of the binary search asks for:
// the first it owns usually comes first.
const probeBatch = 4

// oneLight reports whether filter takes the events of one light only:
// lumen.<light>.….
func oneLight(filter string) bool {
	tok := strings.SplitN(filter, ".", 3)
	return len(tok) == 3 && tok[0] == "lumen" && tok[1] != "*" && tok[1] != ">" && tok[1] != "sys"
}

// copyStart is the place to read the events matching filter from, to
// have those whose sequence is from or after: from itself in a journal
// of its own; in a copy, a place before which no event it owns has an
// origin sequence of from or after, 0 (the start) when it cannot tell
// (a filter of several lights, whose journals' sequences are not in one
// order).
func (j *Journal) copyStart(ctx context.Context, filter string, from uint64) (uint64, error) {
	if j.origin == nil {
		return from, nil
	}
	if from <= 1 || !oneLight(filter) {
		return 0, nil
	}
	info, err := j.info(ctx)
	if err != nil {
		return 0, err
	}
	g := newGetter(j.js, j.stream, probeBatch)
	defer g.close()
	// No owned event before lo has an origin sequence of from or after;
	// none at or after hi has one before from.
	lo, hi := max(info.State.FirstSeq, 1), info.State.LastSeq+1
	for lo < hi {
		mid := lo + (hi-lo)/2
		place, seq, ok, err := j.probe(ctx, g, filter, mid, hi)
		switch {
		case err != nil:
			return 0, err
		case ok && seq < from:
			lo = place + 1
		default: // none owned in [mid, hi), or one at or after from
			hi = mid
		}
	}
	return lo, nil
}

// probe finds the first owned event matching filter at a place in
// [at, before): its place and origin sequence; false when there is none.
// Each answer is read whole (one left half read breaks the getter).
func (j *Journal) probe(ctx context.Context, g *getter, filter string, at, before uint64) (place, seq uint64, ok bool, err error) {
	for at < before {
		next, past := at, false
		e, err := g.get(ctx, getRequest{Seq: at, NextFor: filter, Batch: probeBatch, MaxBytes: g.maxBytes}, func(m Msg) error {
			switch {
			case ok || past:
			case m.Seq >= before:
				past = true
			default:
				next = m.Seq + 1
				if msg, own := j.own(m); own {
					place, seq, ok = m.Seq, msg.Seq, true
				}
			}
			return nil
		})
		switch {
		case err != nil:
			return 0, 0, false, err
		case ok:
			return place, seq, true, nil
		case past || e.none || e.pending == 0 || next == at:
			return 0, 0, false, nil
		}
		at = next
	}
	return 0, 0, false, nil
}
