package datasource_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// history: the light's day, in UTC. Paris (UTC+2 in summer) has its
// midnight at 22:00 UTC the day before.
var (
	day     = time.Date(2026, 6, 10, 0, 0, 0, 0, time.UTC)
	paris   = time.FixedZone("CEST", 2*3600)
	history = []datasource.Transition{
		{At: day.Add(-3 * time.Hour), From: "", To: "off"},                         // 21:00 UTC the day before: start
		{At: day.Add(-1 * time.Hour), From: "off", To: "red", Via: "button_click"}, // 23:00 UTC, 01:00 in Paris
		{At: day.Add(8 * time.Hour), From: "red", To: "green", Via: "button_click"},
		{At: day.Add(9 * time.Hour), From: "green", To: "green", Via: "bitcoin_updated"}, // self-transition
		{At: day.Add(10 * time.Hour), From: "green", To: "blue", Via: ""},                // set_state
		{At: day.Add(11 * time.Hour), From: "blue", To: "blue", Via: "weather_updated"},
		{At: day.Add(12 * time.Hour), From: "blue", To: "off", Via: "button_hold"},
		{At: day.Add(13 * time.Hour), From: "off", To: "off", Via: "button_double_click"},
	}
)

func TestStateDuration(t *testing.T) {
	tests := []struct {
		name    string
		history []datasource.Transition
		now     time.Time
		want    time.Duration
	}{
		{"no history", nil, day, 0},
		{"self-transitions do not reset it", history, day.Add(13*time.Hour + 30*time.Minute), 90 * time.Minute},
		{"a set_state counts", history, day.Add(10*time.Hour + 5*time.Second), 5 * time.Second},
		{"entries after now are ignored", history, day.Add(8*time.Hour + time.Minute), time.Minute},
		{"only self-transitions", []datasource.Transition{{At: day, From: "off", To: "off", Via: "x"}}, day.Add(time.Hour), 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build(tt.history).StateDuration(tt.now); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestTransitionsToday(t *testing.T) {
	tests := []struct {
		name string
		now  time.Time
		loc  *time.Location
		want int
	}{
		{"UTC day: set_state is not a transition", day.Add(14 * time.Hour), time.UTC, 5},
		{"nil location is UTC", day.Add(14 * time.Hour), nil, 5},
		{"Paris day starts at 22:00 UTC", day.Add(14 * time.Hour), paris, 6},
		{"early in the day", day.Add(8*time.Hour + 30*time.Minute), time.UTC, 1},
		{"entries after now are ignored", day.Add(9 * time.Hour), time.UTC, 2},
		{"next day", day.Add(25 * time.Hour), time.UTC, 0},
		{"just after Paris midnight", day.Add(-time.Hour), paris, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build(history).TransitionsToday(tt.now, tt.loc); got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestLastTransitions(t *testing.T) {
	tests := []struct {
		name    string
		history []datasource.Transition
		now     time.Time
		want    []string
	}{
		{"last five, oldest first, no set_state", history, day.Add(14 * time.Hour),
			[]string{"button_click", "bitcoin_updated", "weather_updated", "button_hold", "button_double_click"}},
		{"fewer than five", history, day.Add(8 * time.Hour), []string{"button_click", "button_click"}},
		{"none", nil, day, []string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := build(tt.history).LastTransitions(tt.now, 5); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}

func TestInternal(t *testing.T) {
	now := day.Add(13*time.Hour + 30*time.Minute + 1500*time.Millisecond)
	tests := []struct {
		name   string
		tracks string
		want   string
	}{
		{"state_duration in whole seconds", "state_duration", `5401`},
		{"time_in_state_ms", "time_in_state_ms", `5401500`},
		{"transitions_today", "transitions_today", `5`},
		{"last_5_transitions", "last_5_transitions", `["button_click","bitcoin_updated","weather_updated","button_hold","button_double_click"]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			def := mustDecode(t, `{"name":"x","internal":true,"tracks":"`+tt.tracks+`"}`)
			got, err := datasource.Internal(def, build(history), now, time.UTC)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Fatalf("got %s, want %s", got, tt.want)
			}
			// It stores into the variable named after what it tracks.
			vals, err := datasource.Values(def, got)
			if err != nil || len(vals) != 1 || string(vals[tt.tracks]) != tt.want {
				t.Fatalf("values %s, %v", show(vals), err)
			}
		})
	}
	_, err := datasource.Internal(datasource.Def{Name: "x", Type: "internal", Tracks: "clicks"}, build(history), now, nil)
	if err == nil || err.Error() != `source: source "x": unknown tracks "clicks"; use one of last_5_transitions, state_duration, time_in_state_ms, transitions_today` {
		t.Fatalf("got %v", err)
	}
}

func TestTransitionOf(t *testing.T) {
	rule := "r1"
	tests := []struct {
		name string
		data messages.OutStateData
		want datasource.Transition
	}{
		{"a rule fired", messages.OutStateData{From: "off", To: "red", Rule: &rule, Transition: "button_click", Changed: true},
			datasource.Transition{At: day, From: "off", To: "red", Via: "button_click"}},
		{"set_state has no transition", messages.OutStateData{From: "red", To: "blue", Changed: true},
			datasource.Transition{At: day, From: "red", To: "blue"}},
	}
	for _, tt := range tests {
		if got := datasource.TransitionOf(day, tt.data); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

// build adds entries to a new History, at sequences 1, 2, …
func build(entries []datasource.Transition) *datasource.History {
	h := &datasource.History{}
	for i, t := range entries {
		h.Add(uint64(i+1), t)
	}
	return h
}

// The reference: the three queries over every entry.
func refDuration(entries []datasource.Transition, now time.Time) time.Duration {
	for i := len(entries) - 1; i >= 0; i-- {
		if t := entries[i]; !t.At.After(now) && t.From != t.To {
			return now.Sub(t.At)
		}
	}
	return 0
}

func refToday(entries []datasource.Transition, now time.Time, loc *time.Location) int {
	local := now.In(loc)
	midnight := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, loc)
	n := 0
	for _, t := range entries {
		if t.Via != "" && !t.At.Before(midnight) && !t.At.After(now) {
			n++
		}
	}
	return n
}

func refLast(entries []datasource.Transition, now time.Time) []string {
	out := []string{}
	for i := len(entries) - 1; i >= 0 && len(out) < 5; i-- {
		if t := entries[i]; t.Via != "" && !t.At.After(now) {
			out = append(out, t.Via)
		}
	}
	slices.Reverse(out)
	return out
}

// A History answers as if it kept every entry, at any now from its newest
// entry on, in any zone; it stays small however many entries it saw; and
// it survives its JSON record (a restart) unchanged.
func TestHistoryAnswersAsEveryEntry(t *testing.T) {
	kathmandu := time.FixedZone("NPT", 5*3600+45*60)
	rng := rand.New(rand.NewPCG(1, 19))
	for run := range 20 {
		// Bursts (many a minute, a soak's rate) and quiet spells (days
		// in one state), over four days.
		var entries []datasource.Transition
		at, state := day.Add(-4*24*time.Hour), "off"
		for range 3000 + rng.IntN(3000) {
			if rng.IntN(50) == 0 {
				at = at.Add(time.Duration(rng.IntN(30)) * time.Hour)
			} else {
				at = at.Add(time.Duration(rng.IntN(20000)) * time.Millisecond)
			}
			to := state
			if rng.IntN(4) == 0 {
				to = fmt.Sprint("s", rng.IntN(3))
			}
			via := ""
			if rng.IntN(5) > 0 {
				via = fmt.Sprint("t", rng.IntN(100))
			}
			entries = append(entries, datasource.Transition{At: at, From: state, To: to, Via: via})
			state = to
		}
		h := build(entries)
		var restored datasource.History
		b, err := json.Marshal(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, &restored); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(normal(h), normal(&restored)) {
			t.Fatalf("run %d: the record changes the history", run)
		}
		if len(b) > 20_000 || len(h.Recent) > 128 || len(h.Quarters) > 48*4+1 {
			t.Fatalf("run %d: %d bytes, %d recent, %d quarters: not bounded", run, len(b), len(h.Recent), len(h.Quarters))
		}
		if h.Seq != uint64(len(entries)) {
			t.Fatalf("run %d: seq %d, want %d", run, h.Seq, len(entries))
		}
		last := entries[len(entries)-1].At
		for _, now := range []time.Time{last, last.Add(time.Minute), last.Add(5 * time.Hour), last.Add(26 * time.Hour)} {
			for _, loc := range []*time.Location{time.UTC, paris, kathmandu} {
				for _, hh := range []*datasource.History{h, &restored} {
					if got, want := hh.StateDuration(now), refDuration(entries, now); got != want {
						t.Fatalf("run %d, now %v: state duration %v, want %v", run, now, got, want)
					}
					if got, want := hh.TransitionsToday(now, loc), refToday(entries, now, loc); got != want {
						t.Fatalf("run %d, now %v in %v: %d today, want %d", run, now, loc, got, want)
					}
					if got, want := hh.LastTransitions(now, 5), refLast(entries, now); !reflect.DeepEqual(got, want) {
						t.Fatalf("run %d, now %v: last %q, want %q", run, now, got, want)
					}
				}
			}
		}
	}
}

// normal makes times comparable with reflect.DeepEqual after JSON.
func normal(h *datasource.History) *datasource.History {
	c := *h
	fix := func(ts []datasource.Transition) []datasource.Transition {
		out := slices.Clone(ts)
		for i := range out {
			out[i].At = out[i].At.UTC()
		}
		return out
	}
	c.Recent, c.Vias = fix(c.Recent), fix(c.Vias)
	if c.Change != nil {
		ch := *c.Change
		ch.At = ch.At.UTC()
		c.Change = &ch
	}
	return &c
}
