package datasource_test

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

var t0 = time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)

func TestNextJitterBounds(t *testing.T) {
	for _, def := range []datasource.Def{
		{Name: "bitcoin", IntervalMs: 60000},
		{Name: "weather", IntervalMs: 3600000},
		{Name: "fast", IntervalMs: 10},
		{Name: "activity", Type: "internal"},
	} {
		iv := def.Interval()
		lo, hi := t0.Add(iv-iv/10), t0.Add(iv+iv/10)
		seed := datasource.Seed("kitchen", def.Name)
		var below, above int
		for i := range 10000 {
			last := t0.Add(time.Duration(i) * time.Millisecond * 7919)
			next := datasource.Next(def, last, seed)
			off := next.Sub(last) - iv
			if next.Sub(last) < lo.Sub(t0) || next.Sub(last) > hi.Sub(t0) {
				t.Fatalf("%s: next after %v is %v, outside ±10%% of %v", def.Name, last, next, iv)
			}
			if off != datasource.Jitter(def, last, seed) {
				t.Fatalf("%s: Next and Jitter disagree", def.Name)
			}
			if !next.Equal(datasource.Next(def, last, seed)) {
				t.Fatalf("%s: Next is not deterministic", def.Name)
			}
			if off < 0 {
				below++
			} else if off > 0 {
				above++
			}
		}
		// The jitter spreads both ways.
		if below < 4000 || above < 4000 {
			t.Errorf("%s: %d early and %d late slots out of 10000", def.Name, below, above)
		}
	}
}

func TestNextDeterministic(t *testing.T) {
	def := datasource.Def{Name: "bitcoin", IntervalMs: 60000}
	tests := []struct {
		name  string
		light string
		last  time.Time
		want  time.Duration // Next - last; fixed forever (SplitMix64, FNV-1a)
	}{
		{"kitchen", "kitchen", t0, 60272790484 * time.Nanosecond},
		{"another light", "hall", t0, 59790370812 * time.Nanosecond},
		{"another run", "kitchen", t0.Add(time.Minute), 60032051058 * time.Nanosecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := datasource.Next(def, tt.last, datasource.Seed(tt.light, "bitcoin")).Sub(tt.last)
			if got != tt.want {
				t.Fatalf("got %d, want %d", got, tt.want)
			}
		})
	}
}

func TestNextUnscheduled(t *testing.T) {
	tests := []struct {
		name string
		def  datasource.Def
		last time.Time
	}{
		{"never ran: at once", datasource.Def{Name: "w", IntervalMs: 60000}, time.Time{}},
		{"pushed", datasource.Def{Name: "d", Type: "nats", Subject: "home.x"}, t0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := datasource.Next(tt.def, tt.last, 1); !got.IsZero() {
				t.Fatalf("got %v, want the zero time", got)
			}
		})
	}
}

func TestDue(t *testing.T) {
	poll := datasource.Def{Name: "w", IntervalMs: 3600000} // hourly: slots from 54 to 66 min
	tests := []struct {
		name string
		def  datasource.Def
		last time.Time
		now  time.Time
		want bool
	}{
		{"never ran", poll, time.Time{}, t0, true},
		{"restart just after a run", poll, t0, t0.Add(time.Second), false},
		{"restart mid-interval", poll, t0, t0.Add(30 * time.Minute), false},
		{"just before the earliest slot", poll, t0, t0.Add(54*time.Minute - time.Nanosecond), false},
		{"at the earliest slot", poll, t0, t0.Add(54 * time.Minute), true},
		{"restart after a long outage", poll, t0, t0.Add(5 * time.Hour), true},
		{"clock a little behind the journal", poll, t0, t0.Add(-time.Minute), false},
		{"clock set back by a day", poll, t0, t0.Add(-24 * time.Hour), true},
		{"pushed sources are never due", datasource.Def{Name: "d", Type: "webhook"}, time.Time{}, t0, false},
		{"internal", datasource.Def{Name: "a", Type: "internal", Tracks: "transitions_today"}, t0, t0.Add(time.Minute), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := datasource.Due(tt.def, tt.last, tt.now); got != tt.want {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
		})
	}
}

// A daemon that restarts at any moment of an interval runs the source once
// per slot: replaying the journal's last run, it waits for Next, and at
// Next the source is due.
func TestRestartDoesNotDoubleFire(t *testing.T) {
	def := datasource.Def{Name: "bitcoin", IntervalMs: 60000}
	seed := datasource.Seed("kitchen", "bitcoin")
	// A run loop that journals each run and restarts every 7 s: it
	// forgets everything but the journal.
	var journal []time.Time
	lastRun := func() time.Time {
		if len(journal) == 0 {
			return time.Time{}
		}
		return journal[len(journal)-1]
	}
	now := t0
	end := t0.Add(time.Hour)
	for now.Before(end) {
		// (Re)start: read the journal, plan the next slot.
		next := datasource.Next(def, lastRun(), seed)
		restartAt := now.Add(7 * time.Second)
		for now.Before(restartAt) && now.Before(end) {
			if !now.Before(next) && datasource.Due(def, lastRun(), now) {
				journal = append(journal, now)
				next = datasource.Next(def, now, seed)
			}
			now = now.Add(100 * time.Millisecond)
		}
	}
	if n := len(journal); n < 55 || n > 67 {
		t.Fatalf("%d runs in an hour of a 60 s source", n)
	}
	for i := 1; i < len(journal); i++ {
		if gap := journal[i].Sub(journal[i-1]); gap < 54*time.Second || gap > 66*time.Second+100*time.Millisecond {
			t.Fatalf("runs %d and %d are %v apart", i-1, i, gap)
		}
	}
	// At a slot it planned, a source is always due.
	for _, last := range journal {
		if !datasource.Due(def, last, datasource.Next(def, last, seed)) {
			t.Fatalf("not due at its own slot after %v", last)
		}
	}
}

func TestBackoff(t *testing.T) {
	s := time.Second
	tests := []struct {
		name     string
		interval time.Duration
		want     []time.Duration // for failures 0, 1, 2, …
	}{
		{"60 s source: from 5 s up to 15 min", time.Minute,
			[]time.Duration{0, 5 * s, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 320 * s, 640 * s, 900 * s, 900 * s}},
		{"hourly source: from 5 s up to the hour", time.Hour,
			[]time.Duration{0, 5 * s, 10 * s, 20 * s, 40 * s, 80 * s, 160 * s, 320 * s, 640 * s, 1280 * s, 2560 * s, 3600 * s, 3600 * s}},
		{"1 s test source: from the interval", time.Second,
			[]time.Duration{0, 1 * s, 2 * s, 4 * s, 8 * s, 16 * s, 32 * s, 64 * s, 128 * s, 256 * s, 512 * s, 900 * s}},
		{"weekly source", 7 * 24 * time.Hour,
			[]time.Duration{0, 5 * s, 10 * s}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for f, want := range tt.want {
				if got := datasource.Backoff(f, tt.interval); got != want {
					t.Fatalf("Backoff(%d, %v) = %v, want %v", f, tt.interval, got, want)
				}
			}
		})
	}
	// Many failures never overflow.
	if got := datasource.Backoff(1_000_000, time.Minute); got != 15*time.Minute {
		t.Fatalf("Backoff(1e6) = %v", got)
	}
	if got := datasource.Backoff(-1, time.Minute); got != 0 {
		t.Fatalf("Backoff(-1) = %v", got)
	}
}
