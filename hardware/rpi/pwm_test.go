package rpi

import (
	"testing"
	"time"
)

func TestHardwarePWM(t *testing.T) {
	tests := []struct {
		hz        int
		wantClock int
		wantCycle uint32
	}{
		{500, 127_500, 255},
		{100, 25_500, 255},
		{50, 25_500, 510}, // 12.75 kHz is below what the clocks divide down to
		{1, 13_005, 13_005},
		{20_000, 5_100_000, 255},
	}
	for _, tt := range tests {
		clock, cycle := hardwarePWM(tt.hz)
		if clock != tt.wantClock || cycle != tt.wantCycle {
			t.Errorf("hardwarePWM(%d) = %d Hz, cycle %d; want %d Hz, cycle %d", tt.hz, clock, cycle, tt.wantClock, tt.wantCycle)
		}
		if clock/int(cycle) != tt.hz || cycle%255 != 0 || clock < minPWMClockHz || clock > 19_200_000/2 {
			t.Errorf("hardwarePWM(%d) = %d Hz / %d: not %d Hz, not a multiple of 255, or out of the clock's range", tt.hz, clock, cycle, tt.hz)
		}
	}
}

func TestDutyLen(t *testing.T) {
	tests := []struct {
		v         uint8
		cycle     uint32
		activeLow bool
		want      uint32
	}{
		{0, 255, false, 0},
		{255, 255, false, 255},
		{128, 255, false, 128},
		{1, 510, false, 2},
		{200, 510, false, 400},
		{0, 255, true, 255},
		{255, 255, true, 0},
		{55, 255, true, 200},
	}
	for _, tt := range tests {
		if got := dutyLen(tt.v, tt.cycle, tt.activeLow); got != tt.want {
			t.Errorf("dutyLen(%d, %d, activeLow=%v) = %d, want %d", tt.v, tt.cycle, tt.activeLow, got, tt.want)
		}
	}
}

func TestOnOffAndLevel(t *testing.T) {
	for _, tt := range []struct {
		v         uint8
		activeLow bool
		wantHigh  bool
	}{
		{0, false, false}, {127, false, false}, {128, false, true}, {255, false, true},
		{0, true, true}, {127, true, true}, {128, true, false}, {255, true, false},
	} {
		if got := pinLevel(onOff(tt.v), tt.activeLow); got != tt.wantHigh {
			t.Errorf("value %d activeLow=%v: pin high = %v, want %v", tt.v, tt.activeLow, got, tt.wantHigh)
		}
	}
}

func TestSoftSchedule(t *testing.T) {
	const period = 2 * time.Millisecond // 500 Hz
	all := [3]bool{true, true, true}
	tests := []struct {
		name   string
		levels [3]uint8
		soft   [3]bool
		static bool
		// lit at sample times through the period
		at   []time.Duration
		want [][3]bool
	}{
		{
			name: "all dark", levels: [3]uint8{0, 0, 0}, soft: all, static: true,
			at: []time.Duration{0, period / 2}, want: [][3]bool{{}, {}},
		},
		{
			name: "full and dark need no steps", levels: [3]uint8{255, 0, 255}, soft: all, static: true,
			at: []time.Duration{0, period - 1}, want: [][3]bool{{true, false, true}, {true, false, true}},
		},
		{
			name: "half red", levels: [3]uint8{51, 0, 255}, soft: all,
			at:   []time.Duration{0, 399 * time.Microsecond, 400 * time.Microsecond, period - 1},
			want: [][3]bool{{true, false, true}, {true, false, true}, {false, false, true}, {false, false, true}},
		},
		{
			name: "three steps in time order", levels: [3]uint8{204, 51, 102}, soft: all,
			at:   []time.Duration{0, 400 * time.Microsecond, 800 * time.Microsecond, 1600 * time.Microsecond},
			want: [][3]bool{{true, true, true}, {true, false, true}, {true, false, false}, {false, false, false}},
		},
		{
			name: "equal levels share a step", levels: [3]uint8{102, 102, 0}, soft: all,
			at:   []time.Duration{0, 800 * time.Microsecond},
			want: [][3]bool{{true, true, false}, {false, false, false}},
		},
		{
			name: "hardware channels are not scheduled", levels: [3]uint8{100, 100, 100}, soft: [3]bool{false, false, true},
			at:   []time.Duration{0, period - 1},
			want: [][3]bool{{false, false, true}, {false, false, false}},
		},
		{
			name: "lowest level is one 255th", levels: [3]uint8{1, 0, 0}, soft: all,
			at:   []time.Duration{0, period/255 - 1, period / 255},
			want: [][3]bool{{true, false, false}, {true, false, false}, {false, false, false}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSoftSchedule(tt.levels, tt.soft, 500)
			if s.period != period {
				t.Fatalf("period %v, want %v", s.period, period)
			}
			if s.static() != tt.static {
				t.Errorf("static = %v, want %v (steps %v)", s.static(), tt.static, s.steps[:s.n])
			}
			for i := 1; i < s.n; i++ {
				if s.steps[i].at <= s.steps[i-1].at {
					t.Errorf("steps out of order: %v", s.steps[:s.n])
				}
			}
			for i, at := range tt.at {
				if got := s.litAt(at); got != tt.want[i] {
					t.Errorf("lit at %v = %v, want %v", at, got, tt.want[i])
				}
			}
		})
	}
}

// The lit time of each channel over a period is its level / 255.
func TestSoftScheduleDuty(t *testing.T) {
	for v := range 256 {
		s := newSoftSchedule([3]uint8{uint8(v), uint8(255 - v), uint8(v / 2)}, [3]bool{true, true, true}, 1000)
		var lit [3]time.Duration
		const step = time.Microsecond
		for at := time.Duration(0); at < s.period; at += step {
			for ch, on := range s.litAt(at) {
				if on {
					lit[ch] += step
				}
			}
		}
		for ch, want := range [3]int{v, 255 - v, v / 2} {
			exact := s.period * time.Duration(want) / 255
			if d := lit[ch] - exact; d < -step || d > step {
				t.Fatalf("level %d on channel %d: lit %v of %v, want %v", want, ch, lit[ch], s.period, exact)
			}
		}
	}
}
