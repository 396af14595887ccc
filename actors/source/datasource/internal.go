package datasource

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// Transition is one entry of the light's history: at At the state went
// From → To because transition Via fired (From == To for a
// self-transition). Via is empty for a change without a transition
// (set_state, a configuration change): it counts for the time in the
// state, not as a transition.
type Transition struct {
	At       time.Time
	From, To string
	Via      string
}

// The history passed to the functions below is in journal (time) order;
// entries after now are ignored.

// StateDuration returns how long the light has been in its current state
// at now: since the last entry that changed the state (From != To). It is
// 0 when no entry did.
func StateDuration(history []Transition, now time.Time) time.Duration {
	for i := len(history) - 1; i >= 0; i-- {
		t := history[i]
		if t.At.After(now) || t.From == t.To {
			continue
		}
		return now.Sub(t.At)
	}
	return 0
}

// TransitionsToday counts the transitions (entries with a Via) from local
// midnight in loc (UTC when nil) up to now.
func TransitionsToday(history []Transition, now time.Time, loc *time.Location) int {
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	n := 0
	for i := len(history) - 1; i >= 0; i-- {
		t := history[i]
		if t.At.Before(midnight) {
			break
		}
		if t.Via != "" && !t.At.After(now) {
			n++
		}
	}
	return n
}

// LastTransitions returns the names of the last n transitions up to now,
// oldest first; never nil.
func LastTransitions(history []Transition, now time.Time, n int) []string {
	out := []string{}
	for i := len(history) - 1; i >= 0 && len(out) < n; i-- {
		if t := history[i]; t.Via != "" && !t.At.After(now) {
			out = append(out, t.Via)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out
}

// Internal computes an internal source's result at now, to be stored by
// Updates: a number for state_duration (whole seconds),
// time_in_state_ms and transitions_today, an array of names for
// last_5_transitions.
func Internal(def Def, history []Transition, now time.Time, loc *time.Location) (json.RawMessage, error) {
	var v any
	switch def.Tracks {
	case TrackStateDuration:
		v = int64(StateDuration(history, now) / time.Second)
	case TrackTimeInStateMs:
		v = StateDuration(history, now).Milliseconds()
	case TrackTransitionsToday:
		v = TransitionsToday(history, now, loc)
	case TrackLast5Transitions:
		v = LastTransitions(history, now, 5)
	default:
		return nil, errorf(CodeInvalid, "source %q: unknown tracks %q; use one of %s", def.Name, def.Tracks, strings.Join(tracks, ", "))
	}
	return json.Marshal(v)
}

// TransitionOf turns one of the light's state outputs, journaled at at,
// into a history entry: Via is the transition only when a rule fired (a
// set_state or a configuration change moves the state without one).
func TransitionOf(at time.Time, d messages.OutStateData) Transition {
	t := Transition{At: at, From: d.From, To: d.To}
	if d.Rule != nil {
		t.Via = d.Transition
	}
	return t
}

// HistoryKeep is how far back Prune keeps every entry: local midnight is
// at most 25 hours back (a day with a DST change), so a day and a margin.
const HistoryKeep = 48 * time.Hour

// Prune returns the entries the internal sources can still need at now:
// every entry of the last keep, the last state change (for
// state_duration) and the last 5 transitions (for last_5_transitions),
// in order. It reuses history's array.
func Prune(history []Transition, now time.Time, keep time.Duration) []Transition {
	cutoff := now.Add(-keep)
	vias, change := 0, false
	out := history[:0]
	// Walk back and mark what to keep; entries are kept in order by
	// compacting afterwards.
	keepIdx := make([]bool, len(history))
	for i := len(history) - 1; i >= 0; i-- {
		t := history[i]
		k := !t.At.Before(cutoff)
		if t.Via != "" && vias < 5 {
			vias++
			k = true
		}
		if t.From != t.To && !change {
			change = true
			k = true
		}
		keepIdx[i] = k
	}
	for i, t := range history {
		if keepIdx[i] {
			out = append(out, t)
		}
	}
	return out
}
