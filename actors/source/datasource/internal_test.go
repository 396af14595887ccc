package datasource_test

import (
	"fmt"
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
			if got := datasource.StateDuration(tt.history, tt.now); got != tt.want {
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
			if got := datasource.TransitionsToday(history, tt.now, tt.loc); got != tt.want {
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
			if got := datasource.LastTransitions(tt.history, tt.now, 5); !reflect.DeepEqual(got, tt.want) {
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
			got, err := datasource.Internal(def, history, now, time.UTC)
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
	_, err := datasource.Internal(datasource.Def{Name: "x", Type: "internal", Tracks: "clicks"}, history, now, nil)
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

// Pruning keeps what the three internal sources read: the results are the
// same before and after.
func TestPrune(t *testing.T) {
	// 20 self-transitions a day for 5 days, after one state change.
	long := []datasource.Transition{{At: day.Add(-5 * 24 * time.Hour), From: "off", To: "red", Via: "button_click"}}
	for i := range 100 {
		long = append(long, datasource.Transition{At: day.Add(time.Duration(i-99) * 72 * time.Minute), From: "red", To: "red", Via: fmt.Sprintf("t%d", i)})
	}
	now := day.Add(time.Minute)
	for _, loc := range []*time.Location{time.UTC, paris} {
		for _, h := range [][]datasource.Transition{history, long} {
			before := fmt.Sprint(datasource.StateDuration(h, now), datasource.TransitionsToday(h, now, loc), datasource.LastTransitions(h, now, 5))
			pruned := datasource.Prune(slices.Clone(h), now, datasource.HistoryKeep)
			after := fmt.Sprint(datasource.StateDuration(pruned, now), datasource.TransitionsToday(pruned, now, loc), datasource.LastTransitions(pruned, now, 5))
			if before != after {
				t.Fatalf("pruning changed the results: %s → %s", before, after)
			}
		}
	}
	if n := len(datasource.Prune(slices.Clone(long), now, datasource.HistoryKeep)); n > 45 {
		t.Errorf("kept %d of %d entries; want only the last 48 h and the last change", n, len(long))
	}
}
