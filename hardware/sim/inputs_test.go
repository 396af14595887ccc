package sim_test

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

func TestSimulatedInputs(t *testing.T) {
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	in := sim.NewInputs(map[int]string{4: "the button"}, clocktest.New(at))
	if in.Reserved()[4] != "the button" {
		t.Fatalf("reserved %v", in.Reserved())
	}
	if _, err := in.Watch(4, hardware.PullNone); err == nil {
		t.Fatal("watched the button's pin")
	}
	if high, err := in.Watch(23, hardware.PullDown); err != nil || high {
		t.Fatalf("watch 23 pull down: %v %v", high, err)
	}
	if high, err := in.Watch(24, hardware.PullUp); err != nil || !high {
		t.Fatalf("watch 24 pull up: %v %v", high, err)
	}

	for _, tc := range []struct {
		name    string
		pin     int
		high    bool
		changed bool
		fails   bool
	}{
		{"rise", 23, true, true, false},
		{"same level again", 23, true, false, false},
		{"fall", 23, false, true, false},
		{"pull-up pin falls", 24, false, true, false},
		{"unwatched pin", 5, true, false, true},
		{"reserved pin", 4, true, false, true},
	} {
		changed, err := in.Set(tc.pin, tc.high)
		if (err != nil) != tc.fails || changed != tc.changed {
			t.Fatalf("%s: changed %v err %v", tc.name, changed, err)
		}
	}
	want := []hardware.Level{{Pin: 23, High: true, At: at}, {Pin: 23, High: false, At: at}, {Pin: 24, High: false, At: at}}
	for _, w := range want {
		if got := <-in.Levels(); got != w {
			t.Fatalf("level %+v, want %+v", got, w)
		}
	}
	if err := in.Unwatch(23); err != nil {
		t.Fatal(err)
	}
	if _, err := in.Set(23, true); err == nil {
		t.Fatal("set an unwatched pin")
	}
	if err := in.Halt(); err != nil {
		t.Fatal(err)
	}
	if _, ok := <-in.Levels(); ok {
		t.Fatal("levels open after Halt")
	}
	if err := in.Halt(); err != nil {
		t.Fatal("second Halt:", err)
	}
}
