package input_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware/input"
)

// step is one event of a timeline: a raw level at ms, or a tick at ms.
type step struct {
	ms   int
	tick bool
	high bool
}

func lvl(ms int, high bool) step { return step{ms: ms, high: high} }
func tick(ms int) step           { return step{ms: ms, tick: true} }

// change renders a Change as "+ms" (rising) or "-ms" (falling).
func render(t0 time.Time, cs []input.Change) []string {
	var out []string
	for _, c := range cs {
		sign := "-"
		if c.High {
			sign = "+"
		}
		out = append(out, fmt.Sprintf("%s%d", sign, c.At.Sub(t0).Milliseconds()))
	}
	return out
}

func TestDebouncer(t *testing.T) {
	for _, tc := range []struct {
		name     string
		debounce time.Duration
		start    bool
		steps    []step
		want     []string
	}{
		{"clean rise", 20 * time.Millisecond, false, []step{lvl(5, true)}, []string{"+5"}},
		{"baseline high, no change", 20 * time.Millisecond, true, []step{lvl(5, true), tick(100)}, nil},
		{"repeat of the same level", 20 * time.Millisecond, false, []step{lvl(5, true), lvl(50, true)}, []string{"+5"}},
		{"bounces inside the window", 20 * time.Millisecond, false,
			[]step{lvl(0, true), lvl(2, false), lvl(4, true), lvl(6, false), lvl(8, true), tick(40)}, []string{"+0"}},
		{"settles low inside the window: reconciled at its end", 20 * time.Millisecond, false,
			[]step{lvl(0, true), lvl(3, false), tick(25)}, []string{"+0", "-20"}},
		{"late tick keeps the window's end as the time", 20 * time.Millisecond, false,
			[]step{lvl(0, true), lvl(3, false), tick(500)}, []string{"+0", "-20"}},
		{"reconciled by the next sample when no tick came", 20 * time.Millisecond, false,
			[]step{lvl(0, true), lvl(3, false), lvl(100, true)}, []string{"+0", "-20", "+100"}},
		{"pulse longer than the window", 20 * time.Millisecond, false,
			[]step{lvl(10, true), lvl(60, false)}, []string{"+10", "-60"}},
		{"zero debounce passes everything", 0, false,
			[]step{lvl(0, true), lvl(1, false), lvl(2, true)}, []string{"+0", "-1", "+2"}},
		{"falling from a high baseline", 20 * time.Millisecond, true, []step{lvl(7, false)}, []string{"-7"}},
		{"time going back is taken as the last instant", 20 * time.Millisecond, false,
			[]step{lvl(50, true), lvl(40, false), tick(80)}, []string{"+50", "-70"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			d, err := input.New(tc.debounce, tc.start)
			if err != nil {
				t.Fatal(err)
			}
			var got []input.Change
			for _, s := range tc.steps {
				at := t0.Add(time.Duration(s.ms) * time.Millisecond)
				if s.tick {
					got = append(got, d.Tick(at)...)
				} else {
					got = append(got, d.Sample(s.high, at)...)
				}
			}
			if r := render(t0, got); !reflect.DeepEqual(r, tc.want) {
				t.Fatalf("changes %v, want %v", r, tc.want)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	t0 := time.Unix(0, 0)
	d, _ := input.New(20*time.Millisecond, false)
	if _, ok := d.Deadline(); ok {
		t.Fatal("a settled pin has no deadline")
	}
	d.Sample(true, t0)
	if _, ok := d.Deadline(); ok {
		t.Fatal("an accepted change needs no deadline")
	}
	d.Sample(false, t0.Add(5*time.Millisecond))
	if at, ok := d.Deadline(); !ok || !at.Equal(t0.Add(20*time.Millisecond)) {
		t.Fatalf("deadline %v %v, want the window's end", at, ok)
	}
}

func TestMatchesAndNew(t *testing.T) {
	rise, fall := input.Change{High: true}, input.Change{}
	for _, tc := range []struct {
		edge       string
		rise, fall bool
	}{
		{"", true, false}, {input.Rising, true, false}, {input.Falling, false, true}, {input.Both, true, true},
	} {
		if rise.Matches(tc.edge) != tc.rise || fall.Matches(tc.edge) != tc.fall {
			t.Errorf("edge %q: rise %v fall %v", tc.edge, rise.Matches(tc.edge), fall.Matches(tc.edge))
		}
		if !input.ValidEdge(tc.edge) {
			t.Errorf("edge %q is valid", tc.edge)
		}
	}
	if input.ValidEdge("up") {
		t.Error("edge up is not valid")
	}
	if rise.Kind() != input.Rising || fall.Kind() != input.Falling {
		t.Error("kinds")
	}
	for _, d := range []time.Duration{-time.Millisecond, input.MaxDebounce + 1} {
		if _, err := input.New(d, false); err == nil {
			t.Errorf("debounce %v accepted", d)
		}
	}
}
