package gesture_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
)

// base is the fixed instant timelines are measured from.
var base = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

func at(ms int) time.Time { return base.Add(time.Duration(ms) * time.Millisecond) }

var short = map[string]string{
	gesture.Click:   "click",
	gesture.Double:  "double",
	gesture.Hold:    "hold",
	gesture.Release: "release",
}

// play feeds a timeline such as "down@0 up@5 tick@400 reset@500" (ms from
// base) and returns the gestures as "click@320", in the order returned.
func play(t testing.TB, d *gesture.Detector, timeline string) []string {
	t.Helper()
	var got []string
	for _, step := range strings.Fields(timeline) {
		what, ms, ok := strings.Cut(step, "@")
		n, err := strconv.Atoi(ms)
		if !ok || err != nil {
			t.Fatalf("bad step %q", step)
		}
		var gs []gesture.Gesture
		switch what {
		case "down", "up":
			gs = d.Edge(hardware.Edge{Down: what == "down", At: at(n)})
		case "tick":
			gs = d.Tick(at(n))
		case "reset":
			d.Reset()
		default:
			t.Fatalf("bad step %q", step)
		}
		for _, g := range gs {
			got = append(got, fmt.Sprintf("%s@%d", short[g.Kind], g.At.Sub(base).Milliseconds()))
		}
	}
	return got
}

func newDetector(t testing.TB) *gesture.Detector {
	t.Helper()
	d, err := gesture.New(gesture.Config{})
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestGestures(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  string
	}{
		{"nothing", "tick@0 tick@10000", ""},
		{"clean click", "down@0 up@100 tick@399", ""},
		{"clean click decided when the window closes", "down@0 up@100 tick@400", "click@400"},
		{"click decided by a late tick", "down@0 up@100 tick@5000", "click@400"},
		{"bounces on press", "down@0 up@3 down@6 up@9 down@12 up@15 up@16 down@18 up@200 tick@1000", "click@500"},
		{"bounces on release", "down@0 up@100 down@103 up@107 down@110 up@115 tick@1000", "click@400"},
		{"release inside the bounce window settles at its end", "down@0 up@5 tick@2000", "click@320"},
		{"bounce back to the same level changes nothing", "down@0 up@5 down@10 tick@20 tick@799 tick@800", "hold@800"},
		{"repeated levels are ignored", "up@0 down@0 down@50 down@100 up@100 up@150 tick@2000", "click@400"},
		{"double click", "down@0 up@100 down@200 up@300 tick@5000", "double@300"},
		{"double click at the window's last instant", "down@0 up@100 down@399 up@450 tick@5000", "double@450"},
		{"press at the window's end is too late", "down@0 up@100 down@400 up@450 tick@5000", "click@400 click@750"},
		{"slow double is two clicks", "down@0 up@100 down@500 up@600 tick@5000", "click@400 click@900"},
		{"triple press", "down@0 up@100 down@200 up@300 down@400 up@500 tick@5000", "double@300 click@800"},
		{"four quick presses are two doubles", "down@0 up@50 down@100 up@150 down@200 up@250 down@300 up@350", "double@150 double@350"},
		{"hold via tick", "down@0 tick@799 tick@800", "hold@800"},
		{"hold fires once while held", "down@0 tick@800 tick@900 tick@5000 tick@60000", "hold@800"},
		{"hold decided by a late edge", "down@0 up@2000", "hold@800 release@2000"},
		{"hold then release", "down@0 tick@800 up@1500 tick@5000", "hold@800 release@1500"},
		{"release at exactly hold is a hold", "down@0 up@800", "hold@800 release@800"},
		{"hold with bounces on release", "down@0 tick@800 up@1000 down@1004 up@1010 tick@5000", "hold@800 release@1000"},
		{"second press becomes a hold", "down@0 up@100 down@200 tick@1000 up@1200 tick@5000", "click@1000 hold@1000 release@1200"},
		{"second press becomes a hold, late tick", "down@0 up@100 down@200 tick@5000", "click@1000 hold@1000"},
		{"click after a hold", "down@0 tick@800 up@900 down@1000 up@1100 tick@5000", "hold@800 release@900 click@1400"},
		{"late edge decides the pending click first", "down@0 up@100 down@500", "click@400"},
		{"earlier edge is taken as the last instant", "down@0 up@100 tick@500 down@450 up@600 tick@5000", "click@400 click@900"},
		{"reset drops a pending click", "down@0 up@100 reset@150 tick@5000", ""},
		{"reset drops a press", "down@0 reset@100 tick@5000 up@5100 down@6000 up@6100 tick@9000", "click@6400"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(play(t, newDetector(t), tt.given), " ")
			if got != tt.want {
				t.Errorf("%s\n got: %q\nwant: %q", tt.given, got, tt.want)
			}
		})
	}
}

// With no double click that could matter, a click is decided on its
// release; holds are unchanged. The play step "instant" switches it on,
// "waits" off.
func TestInstantClicks(t *testing.T) {
	tests := []struct{ name, given, want string }{
		{"click on release", "instant@0 down@0 up@100", "click@100"},
		{"bounces settle first", "instant@0 down@0 up@3 down@6 up@200 tick@1000", "click@200"},
		{"two quick clicks are two clicks", "instant@0 down@0 up@100 down@200 up@300", "click@100 click@300"},
		{"hold unchanged", "instant@0 down@0 tick@800 up@1000", "hold@800 release@1000"},
		{"a click waiting when it turns on keeps waiting", "down@0 up@100 instant@150 tick@399 tick@400", "click@400"},
		{"off again: the window is back", "instant@0 down@0 up@100 waits@150 down@200 up@300 down@400 up@500", "click@100 double@500"},
		{"reset keeps it", "instant@0 reset@0 down@10 up@100", "click@100"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDetector(t)
			var steps []string
			var got []string
			for _, step := range strings.Fields(tt.given) {
				switch {
				case strings.HasPrefix(step, "instant@"):
					got = append(got, play(t, d, strings.Join(steps, " "))...)
					steps = nil
					d.SetInstant(true)
				case strings.HasPrefix(step, "waits@"):
					got = append(got, play(t, d, strings.Join(steps, " "))...)
					steps = nil
					d.SetInstant(false)
				default:
					steps = append(steps, step)
				}
			}
			got = append(got, play(t, d, strings.Join(steps, " "))...)
			if s := strings.Join(got, " "); s != tt.want {
				t.Errorf("%s\n got: %q\nwant: %q", tt.given, s, tt.want)
			}
		})
	}
}

func TestPressed(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  bool
	}{
		{"initially released", "", false},
		{"press is accepted at once", "down@0", true},
		{"bounce keeps the level", "down@0 up@5", true},
		{"level reconciles when the window ends", "down@0 up@5 tick@20", false},
		{"release", "down@0 up@100", false},
		{"reset forgets the press", "down@0 reset@10", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDetector(t)
			play(t, d, tt.given)
			if got := d.Pressed(); got != tt.want {
				t.Errorf("%s: Pressed() = %v, want %v", tt.given, got, tt.want)
			}
		})
	}
}

func TestDeadline(t *testing.T) {
	tests := []struct {
		name  string
		given string
		want  int // ms from base; -1 for none
	}{
		{"idle", "", -1},
		{"pressed: the hold", "down@0", 800},
		{"bounce inside a press: the window's end", "down@0 up@5", 20},
		{"bounce settled back: the hold again", "down@0 up@5 down@8", 800},
		{"released: the click window", "down@0 up@100", 400},
		{"second press: its hold", "down@0 up@100 down@200", 1000},
		{"held: nothing until release", "down@0 tick@800", -1},
		{"released after a hold", "down@0 tick@800 up@900", -1},
		{"click decided", "down@0 up@100 tick@400", -1},
		{"double decided", "down@0 up@100 down@200 up@300", -1},
		{"tick before the deadline keeps it", "down@0 up@100 tick@250", 400},
		{"reset", "down@0 up@100 reset@150", -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := newDetector(t)
			play(t, d, tt.given)
			got, ok := d.Deadline()
			if tt.want < 0 {
				if ok {
					t.Errorf("%s: Deadline() = %d ms, want none", tt.given, got.Sub(base).Milliseconds())
				}
				return
			}
			if !ok || !got.Equal(at(tt.want)) {
				t.Errorf("%s: Deadline() = %d ms, %v; want %d ms", tt.given, got.Sub(base).Milliseconds(), ok, tt.want)
			}
		})
	}
}

// TestDeadlineDriven arms only at Deadline, as the device actor does, and
// still sees every gesture.
func TestDeadlineDriven(t *testing.T) {
	d := newDetector(t)
	edges := []hardware.Edge{
		{Down: true, At: at(0)}, {Down: false, At: at(4)}, {Down: true, At: at(9)}, {Down: false, At: at(120)},
		{Down: true, At: at(1000)}, {Down: false, At: at(2500)},
		{Down: true, At: at(3000)}, {Down: false, At: at(3100)}, {Down: true, At: at(3200)}, {Down: false, At: at(3300)},
	}
	var got []string
	record := func(gs []gesture.Gesture) {
		for _, g := range gs {
			got = append(got, fmt.Sprintf("%s@%d", short[g.Kind], g.At.Sub(base).Milliseconds()))
		}
	}
	for _, e := range edges {
		for {
			dl, ok := d.Deadline()
			if !ok || dl.After(e.At) {
				break
			}
			record(d.Tick(dl))
		}
		record(d.Edge(e))
	}
	for {
		dl, ok := d.Deadline()
		if !ok {
			break
		}
		record(d.Tick(dl))
	}
	want := "click@420 hold@1800 release@2500 double@3300"
	if s := strings.Join(got, " "); s != want {
		t.Errorf("got %q, want %q", s, want)
	}
}

func TestValidate(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		given gesture.Config
		want  string // error substring; "" for valid
	}{
		{"defaults", gesture.DefaultConfig(), ""},
		{"zero debounce is allowed here", gesture.Config{DoubleWindow: 300 * ms, Hold: 800 * ms}, ""},
		{"zero config", gesture.Config{}, "gesture: hold must be positive"},
		{"negative debounce", gesture.Config{Debounce: -ms, DoubleWindow: 300 * ms, Hold: 800 * ms}, "gesture: debounce -1ms is negative"},
		{"negative window", gesture.Config{Debounce: 20 * ms, DoubleWindow: -ms, Hold: 800 * ms}, "gesture: double-click window -1ms is negative"},
		{"negative hold", gesture.Config{Debounce: 20 * ms, DoubleWindow: 300 * ms, Hold: -ms}, "gesture: hold -1ms is negative"},
		{"zero window", gesture.Config{Debounce: 20 * ms, Hold: 800 * ms}, "gesture: double-click window must be positive"},
		{"debounce equals hold", gesture.Config{Debounce: 800 * ms, DoubleWindow: 900 * ms, Hold: 800 * ms}, "gesture: debounce 800ms must be shorter than hold 800ms"},
		{"debounce longer than the debouncer takes", gesture.Config{Debounce: 11 * time.Second, DoubleWindow: 20 * time.Second, Hold: 30 * time.Second}, "gesture: debounce 11s is longer than 10s"},
		{"window equals debounce", gesture.Config{Debounce: 20 * ms, DoubleWindow: 20 * ms, Hold: 800 * ms}, "gesture: double-click window 20ms must be longer than debounce 20ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.given.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("Validate() = %v, want nil", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("Validate() = %v, want %q", err, tt.want)
			}
		})
	}
}

func TestDefaults(t *testing.T) {
	want := gesture.Config{Debounce: 20 * time.Millisecond, DoubleWindow: 300 * time.Millisecond, Hold: 800 * time.Millisecond}
	if got := gesture.DefaultConfig(); got != want {
		t.Errorf("DefaultConfig() = %+v, want %+v", got, want)
	}

	// New fills only the zero fields.
	d, err := gesture.New(gesture.Config{Hold: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(play(t, d, "down@0 tick@1999 tick@2000 up@2100 down@3000 up@3100 tick@5000"), " "); got != "hold@2000 release@2100 click@3400" {
		t.Errorf("with Hold 2s: got %q", got)
	}

	// Filled defaults are still validated.
	if _, err := gesture.New(gesture.Config{Hold: 10 * time.Millisecond}); err == nil || !strings.HasPrefix(err.Error(), "gesture: ") {
		t.Errorf("New(Hold 10ms) error = %v, want a gesture: error", err)
	}
}

func Example() {
	d, err := gesture.New(gesture.DefaultConfig())
	if err != nil {
		panic(err)
	}
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	show := func(gs []gesture.Gesture) {
		for _, g := range gs {
			fmt.Println(g.Kind, "at", g.At.Sub(t0))
		}
	}

	// A click with a bounce; it is decided when the double window closes.
	show(d.Edge(hardware.Edge{Down: true, At: ms(0)}))
	show(d.Edge(hardware.Edge{Down: false, At: ms(3)})) // bounce, ignored
	show(d.Edge(hardware.Edge{Down: true, At: ms(6)}))  // bounce, ignored
	show(d.Edge(hardware.Edge{Down: false, At: ms(150)}))
	next, _ := d.Deadline()
	fmt.Println("arm timer for", next.Sub(t0))
	show(d.Tick(next))

	// A hold, then its release.
	show(d.Edge(hardware.Edge{Down: true, At: ms(1000)}))
	next, _ = d.Deadline()
	show(d.Tick(next))
	show(d.Edge(hardware.Edge{Down: false, At: ms(2500)}))
	_, pending := d.Deadline()
	fmt.Println("pending:", pending)

	// Output:
	// arm timer for 450ms
	// button_click at 450ms
	// button_hold at 1.8s
	// button_release at 2.5s
	// pending: false
}

// BenchmarkGesture measures the Edge and Tick calls of one click and one
// hold, with a bounce each.
func BenchmarkGesture(b *testing.B) {
	d, err := gesture.New(gesture.Config{})
	if err != nil {
		b.Fatal(err)
	}
	t := base
	ms := func(n int) time.Time { return t.Add(time.Duration(n) * time.Millisecond) }
	b.ReportAllocs()
	for b.Loop() {
		d.Edge(hardware.Edge{Down: true, At: ms(0)})
		d.Edge(hardware.Edge{Down: false, At: ms(2)})
		d.Edge(hardware.Edge{Down: false, At: ms(100)})
		d.Tick(ms(400))
		d.Edge(hardware.Edge{Down: true, At: ms(1000)})
		d.Tick(ms(1800))
		d.Edge(hardware.Edge{Down: false, At: ms(2000)})
		d.Edge(hardware.Edge{Down: true, At: ms(2005)})
		d.Edge(hardware.Edge{Down: false, At: ms(2008)})
		t = t.Add(3 * time.Second)
	}
}

func TestPresses(t *testing.T) {
	for _, tt := range []struct {
		kind     string
		downs    []time.Duration
		gestures int
	}{
		{"click", []time.Duration{gesture.ClickFor}, 1},
		{"double", []time.Duration{gesture.ClickFor, gesture.ClickFor}, 1},
		{"hold", []time.Duration{2 * time.Second}, 2},
	} {
		downs, n, err := gesture.Presses(tt.kind, 2*time.Second)
		if err != nil || !slices.Equal(downs, tt.downs) || n != tt.gestures {
			t.Errorf("%s: %v %d %v", tt.kind, downs, n, err)
		}
		// The presses make that gesture on the default detector.
		d, _ := gesture.New(gesture.Config{})
		at := time.Unix(0, 0)
		var got []gesture.Gesture
		for i, down := range downs {
			if i > 0 {
				at = at.Add(gesture.PressGap)
			}
			got = append(got, d.Edge(hardware.Edge{Down: true, At: at})...)
			at = at.Add(down)
			got = append(got, d.Edge(hardware.Edge{Down: false, At: at})...)
		}
		got = append(got, d.Tick(at.Add(time.Second))...)
		if len(got) != tt.gestures {
			t.Errorf("%s makes %v", tt.kind, got)
		}
	}
	if _, _, err := gesture.Presses("wiggle", 0); err == nil {
		t.Error("a wiggle")
	}
}
