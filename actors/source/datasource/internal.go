package datasource

import (
	"cmp"
	"encoding/json"
	"slices"
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
	At   time.Time `json:"at"`
	From string    `json:"from"`
	To   string    `json:"to"`
	Via  string    `json:"via,omitempty"`
}

// History is what the internal sources know of the light's history, in
// space bounded whatever the light's rate: the newest entries as they are
// (Recent), and for the older ones only what the sources read: the last
// state change, the last five transitions, and how many transitions each
// quarter of an hour of the last HistoryKeep saw. It is kept in the
// journal's records with Seq, so a restart reads only the journal after
// it. Its zero value is an empty history.
type History struct {
	// Seq is the journal sequence of the last entry added.
	Seq uint64 `json:"seq"`
	// Recent holds the newest entries (recentKeep to twice as many), in
	// journal order.
	Recent []Transition `json:"recent,omitempty"`
	// Change is the last state change older than Recent (nil: none).
	Change *Transition `json:"change,omitempty"`
	// Vias are the last five transitions older than Recent, in order.
	Vias []Transition `json:"vias,omitempty"`
	// Quarters counts the transitions older than Recent per quarter of an
	// hour (ascending), for HistoryKeep back from the newest.
	Quarters []QuarterCount `json:"quarters,omitempty"`
}

// QuarterCount is how many transitions the quarter of an hour starting
// at Q×15 minutes Unix time saw. Every time zone in use has its midnight
// on a quarter hour.
type QuarterCount struct {
	Q int64 `json:"q"`
	N int   `json:"n"`
}

// recentKeep is how many entries a History keeps as they are: queries at
// a now before them (a clock set back) stay exact.
const recentKeep = 64

// lastVias is how many transitions last_5_transitions reads.
const lastVias = 5

// Add appends the entry the journal holds at seq.
func (h *History) Add(seq uint64, t Transition) {
	h.Seq = seq
	h.Recent = append(h.Recent, t)
	if len(h.Recent) <= 2*recentKeep {
		return
	}
	// Fold the oldest in batches: amortized constant time per entry.
	n := len(h.Recent) - recentKeep
	for _, old := range h.Recent[:n] {
		h.fold(old)
	}
	h.Recent = append(h.Recent[:0], h.Recent[n:]...)
	h.prune()
}

// fold counts an entry leaving Recent.
func (h *History) fold(t Transition) {
	if t.From != t.To {
		c := t
		h.Change = &c
	}
	if t.Via == "" {
		return
	}
	h.Vias = append(h.Vias, t)
	if len(h.Vias) > lastVias {
		h.Vias = append(h.Vias[:0], h.Vias[len(h.Vias)-lastVias:]...)
	}
	q := quarterOf(t.At)
	i, found := slices.BinarySearchFunc(h.Quarters, q, func(c QuarterCount, q int64) int { return cmp.Compare(c.Q, q) })
	if found {
		h.Quarters[i].N++
		return
	}
	h.Quarters = slices.Insert(h.Quarters, i, QuarterCount{Q: q, N: 1})
}

// prune forgets the quarters more than HistoryKeep before the newest.
func (h *History) prune() {
	if len(h.Quarters) == 0 {
		return
	}
	cutoff := h.Quarters[len(h.Quarters)-1].Q - int64(HistoryKeep/quarter)
	i := 0
	for i < len(h.Quarters) && h.Quarters[i].Q < cutoff {
		i++
	}
	h.Quarters = append(h.Quarters[:0], h.Quarters[i:]...)
}

const quarter = 15 * time.Minute

// quarterOf is the Unix quarter hour of t, rounded down.
func quarterOf(t time.Time) int64 {
	u, n := t.Unix(), int64(quarter/time.Second)
	q := u / n
	if u%n < 0 {
		q--
	}
	return q
}

// Entries after now are ignored by the queries below (the clock was set
// back), exactly among Recent and the kept ones, and to the quarter hour
// among the counted ones.

// StateDuration returns how long the light has been in its current state
// at now: since the last entry that changed the state (From != To). It is
// 0 when no entry did.
func (h *History) StateDuration(now time.Time) time.Duration {
	for i := len(h.Recent) - 1; i >= 0; i-- {
		t := h.Recent[i]
		if t.At.After(now) || t.From == t.To {
			continue
		}
		return now.Sub(t.At)
	}
	if h.Change != nil && !h.Change.At.After(now) {
		return now.Sub(h.Change.At)
	}
	return 0
}

// TransitionsToday counts the transitions (entries with a Via) from local
// midnight in loc (UTC when nil) up to now.
func (h *History) TransitionsToday(now time.Time, loc *time.Location) int {
	if loc == nil {
		loc = time.UTC
	}
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	n := 0
	for _, t := range h.Recent {
		if t.Via != "" && !t.At.Before(midnight) && !t.At.After(now) {
			n++
		}
	}
	from, to := quarterOf(midnight), quarterOf(now)
	for _, c := range h.Quarters {
		if c.Q >= from && c.Q <= to {
			n += c.N
		}
	}
	return n
}

// LastTransitions returns the names of the last n (at most five)
// transitions up to now, oldest first; never nil.
func (h *History) LastTransitions(now time.Time, n int) []string {
	out := []string{}
	for _, part := range [][]Transition{h.Recent, h.Vias} {
		for i := len(part) - 1; i >= 0 && len(out) < n; i-- {
			if t := part[i]; t.Via != "" && !t.At.After(now) {
				out = append(out, t.Via)
			}
		}
	}
	slices.Reverse(out)
	return out
}

// Internal computes an internal source's result at now, to be stored by
// Updates: a number for state_duration (whole seconds),
// time_in_state_ms and transitions_today, an array of names for
// last_5_transitions.
func Internal(def Def, h *History, now time.Time, loc *time.Location) (json.RawMessage, error) {
	var v any
	switch def.Tracks {
	case TrackStateDuration:
		v = int64(h.StateDuration(now) / time.Second)
	case TrackTimeInStateMs:
		v = h.StateDuration(now).Milliseconds()
	case TrackTransitionsToday:
		v = h.TransitionsToday(now, loc)
	case TrackLast5Transitions:
		v = h.LastTransitions(now, lastVias)
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

// HistoryKeep is how far back a History counts transitions: local
// midnight is at most 25 hours back (a day with a DST change), so a day
// and a margin.
const HistoryKeep = 48 * time.Hour
