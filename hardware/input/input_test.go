package input_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware/input"
)

// step is one event of a timeline: a raw level at ms, a tick at ms, or a
// reset to level high.
type step struct {
	ms    int
	tick  bool
	reset bool
	high  bool
}

func lvl(ms int, high bool) step { return step{ms: ms, high: high} }
func tick(ms int) step           { return step{ms: ms, tick: true} }
func reset(high bool) step       { return step{reset: true, high: high} }

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
		{"reset drops a pending bounce", 20 * time.Millisecond, false,
			[]step{lvl(0, true), lvl(3, false), reset(false), tick(100)}, []string{"+0"}},
		{"reset sets the baseline", 20 * time.Millisecond, false,
			[]step{reset(true), lvl(5, true), lvl(10, false)}, []string{"-10"}},
		{"reset forgets the window and the time seen", 20 * time.Millisecond, false,
			[]step{lvl(50, true), reset(false), lvl(10, true)}, []string{"+50", "+10"}},
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
				switch {
				case s.reset:
					d.Reset(s.high)
				case s.tick:
					got = append(got, d.Tick(at)...)
				default:
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

// TestSettleSet plays timelines as a wrapper does (Settle up to each
// instant, then Set) and as Sample and Tick do: both see the same changes.
func TestSettleSet(t *testing.T) {
	tests := []struct {
		name  string
		given []step
		want  []string
	}{
		{"clean press and release", []step{lvl(0, true), lvl(100, false)}, []string{"+0", "-100"}},
		{"bounce settled by a tick", []step{lvl(0, true), lvl(3, false), tick(25)}, []string{"+0", "-20"}},
		{"bounce settled by the next level", []step{lvl(0, true), lvl(3, false), lvl(100, true)}, []string{"+0", "-20", "+100"}},
		{"time going back", []step{lvl(50, true), lvl(40, false), tick(80)}, []string{"+50", "-70"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			whole, _ := input.New(20*time.Millisecond, false)
			parts, _ := input.New(20*time.Millisecond, false)
			var want, got []input.Change
			for _, s := range tt.given {
				at := t0.Add(time.Duration(s.ms) * time.Millisecond)
				if c, ok := parts.Settle(at); ok {
					got = append(got, c)
				}
				if s.tick {
					want = append(want, whole.Tick(at)...)
					continue
				}
				want = append(want, whole.Sample(s.high, at)...)
				if c, ok := parts.Set(s.high, at); ok {
					got = append(got, c)
				}
			}
			if r := render(t0, got); !reflect.DeepEqual(r, tt.want) || !reflect.DeepEqual(got, want) {
				t.Fatalf("Settle and Set: %v, want %v (Sample and Tick: %v)", r, tt.want, render(t0, want))
			}
		})
	}
}

// TestSetWithChangeDue: a Set that would overtake a due change is a bug
// in the wrapper, said at once rather than turned into a wrong change.
func TestSetWithChangeDue(t *testing.T) {
	t0 := time.Unix(0, 0)
	d, _ := input.New(20*time.Millisecond, false)
	d.Sample(true, t0)
	d.Sample(false, t0.Add(5*time.Millisecond)) // settles low at 20 ms
	defer func() {
		if recover() == nil {
			t.Error("Set at 30 ms did not panic with a change due at 20 ms")
		}
	}()
	d.Set(true, t0.Add(30*time.Millisecond))
}
