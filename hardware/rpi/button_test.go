package rpi

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

func TestEdgeDetector(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type sample struct {
		high bool
		at   int // ms
	}
	tests := []struct {
		name       string
		activeHigh bool
		given      []sample
		want       []hardware.Edge
	}{
		{
			name:  "idle pull-up: no edges",
			given: []sample{{true, 0}, {true, 1}, {true, 2}},
		},
		{
			name:  "press and release, active low",
			given: []sample{{true, 0}, {false, 1}, {false, 2}, {true, 3}, {true, 4}},
			want:  []hardware.Edge{{Down: true, At: ms(1)}, {Down: false, At: ms(3)}},
		},
		{
			name:  "bounces are reported raw",
			given: []sample{{true, 0}, {false, 1}, {true, 2}, {false, 3}, {false, 4}},
			want:  []hardware.Edge{{Down: true, At: ms(1)}, {Down: false, At: ms(2)}, {Down: true, At: ms(3)}},
		},
		{
			name:  "held at start is a press",
			given: []sample{{false, 0}, {false, 1}, {true, 2}},
			want:  []hardware.Edge{{Down: true, At: ms(0)}, {Down: false, At: ms(2)}},
		},
		{
			name:       "active high",
			activeHigh: true,
			given:      []sample{{false, 0}, {true, 5}, {false, 9}},
			want:       []hardware.Edge{{Down: true, At: ms(5)}, {Down: false, At: ms(9)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := edgeDetector{activeHigh: tt.activeHigh}
			var got []hardware.Edge
			for _, s := range tt.given {
				if e, ok := d.sample(s.high, ms(s.at)); ok {
					got = append(got, e)
				}
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for i := range got {
				if got[i].Down != tt.want[i].Down || !got[i].At.Equal(tt.want[i].At) {
					t.Errorf("edge %d: got %+v, want %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}
