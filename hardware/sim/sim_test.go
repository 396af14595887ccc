package sim_test

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
)

func TestSimulatedDevice(t *testing.T) {
	at := time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC)
	d := sim.New(3, clocktest.New(at))
	if d.Pixels() != 3 {
		t.Fatalf("Pixels = %d", d.Pixels())
	}
	frame := []hardware.RGB{{R: 1}, {G: 2}, {B: 3}}
	if err := d.Show(frame); err != nil {
		t.Fatal(err)
	}
	frame[0].R = 99 // the device keeps its own copy
	if got := d.Shown(); got[0].R != 1 || got[1].G != 2 || got[2].B != 3 {
		t.Fatalf("Shown = %v", got)
	}
	if err := d.Show(frame[:1]); err == nil {
		t.Fatal("a frame of the wrong size was shown")
	}

	tests := []struct {
		name    string
		down    bool
		wantErr bool
	}{
		{"release while up", false, true},
		{"press", true, false},
		{"press while down", true, true},
		{"release", false, false},
	}
	for _, tt := range tests {
		err := d.Inject(tt.down)
		if (err != nil) != tt.wantErr {
			t.Fatalf("%s: err = %v, want error %v", tt.name, err, tt.wantErr)
		}
	}
	for _, want := range []bool{true, false} {
		e := <-d.Edges()
		if e.Down != want || !e.At.Equal(at) {
			t.Fatalf("edge %+v, want down=%v at %v", e, want, at)
		}
	}

	if err := d.Halt(); err != nil {
		t.Fatal(err)
	}
	if err := d.Halt(); err != nil {
		t.Fatalf("second Halt: %v", err)
	}
	if _, open := <-d.Edges(); open {
		t.Fatal("edges still open after Halt")
	}
	if got := d.Shown(); got[0] != (hardware.RGB{}) {
		t.Fatalf("the LED is still lit after Halt: %v", got)
	}
	if err := d.Inject(true); err == nil {
		t.Fatal("an edge was injected after Halt")
	}
}
