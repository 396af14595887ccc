package source

import (
	"encoding/json"
	"strings"
	"time"
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
