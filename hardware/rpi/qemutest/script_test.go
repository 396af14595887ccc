package qemutest

import (
	"bytes"
	"fmt"
	"strconv"
	"testing"

	"github.com/lumen-home/lumen/hardware/gesture"
)

// The simulator path gives the outcome the script is written for, so the
// emulated board is compared against something meaningful.
func TestSimulate(t *testing.T) {
	res, err := Simulate()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"red": "R--", "green": "-G-", "blue": "--B", "white": "RGB",
		"amber": "R--", "cyan": "-GB", "magenta": "R-B", "off": "---",
	}
	if len(res.LEDs) != len(States) {
		t.Fatalf("%d LED lines for %d states", len(res.LEDs), len(States))
	}
	for _, l := range res.LEDs {
		if l.Pins != want[l.State] {
			t.Errorf("%s: %s (%s), want %s", l.State, l.Pins, l.Out, want[l.State])
		}
		if back, ok := ParseLED(l.String()); !ok || back != l {
			t.Errorf("ParseLED(%q) = %+v, %v", l.String(), back, ok)
		}
	}
	wantG := []string{gesture.Click, gesture.Double, gesture.Hold, gesture.Release}
	if fmt.Sprint(res.Gestures) != fmt.Sprint(wantG) {
		t.Errorf("gestures %v, want %v", res.Gestures, wantG)
	}
	if d := Compare(res, res); d != nil {
		t.Errorf("Compare(x, x) = %v", d)
	}
	other := res
	other.Gestures = []string{gesture.Click}
	other.LEDs = append([]LEDLine{{State: "red", Out: "#ff0000", Pins: "RG-"}}, res.LEDs[1:]...)
	if d := Compare(other, res); len(d) != 2 {
		t.Errorf("Compare found %d differences, want 2: %v", len(d), d)
	}
	if k, ms, ok := ParseGesture(GestureLine(gesture.Hold, 812e6)); !ok || k != gesture.Hold || ms != 812 {
		t.Errorf("ParseGesture: %q %d %v", k, ms, ok)
	}
}

func TestCPIO(t *testing.T) {
	var buf bytes.Buffer
	c := NewCPIO(&buf)
	for _, err := range []error{
		c.Dir("dev", 0o755),
		c.CharDev("dev/console", 0o600, 5, 1),
		c.File("init", 0o755, []byte("hello")),
		c.File("empty", 0o644, nil),
		c.Close(),
	} {
		if err != nil {
			t.Fatal(err)
		}
	}
	type ent struct {
		name                string
		mode, rmaj, rmin, n int
		data                string
	}
	var got []ent
	b := buf.Bytes()
	field := func(h []byte, i int) int {
		v, err := strconv.ParseUint(string(h[6+8*i:14+8*i]), 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return int(v)
	}
	for off := 0; off < len(b); {
		if off%4 != 0 || string(b[off:off+6]) != "070701" {
			t.Fatalf("bad header at %d", off)
		}
		h := b[off : off+110]
		namesize, size := field(h, 11), field(h, 6)
		name := string(b[off+110 : off+110+namesize-1])
		off += (110 + namesize + 3) &^ 3
		got = append(got, ent{name, field(h, 1), field(h, 9), field(h, 10), size, string(b[off : off+size])})
		off += (size + 3) &^ 3
		if name == "TRAILER!!!" {
			if off != len(b) {
				t.Fatalf("%d bytes after the trailer", len(b)-off)
			}
			break
		}
	}
	want := []ent{
		{"dev", 0o40755, 0, 0, 0, ""},
		{"dev/console", 0o20600, 5, 1, 0, ""},
		{"init", 0o100755, 0, 0, 5, "hello"},
		{"empty", 0o100644, 0, 0, 0, ""},
		{"TRAILER!!!", 0, 0, 0, 0, ""},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("archive holds\n%v\nwant\n%v", got, want)
	}
}

// The input script gives two rises and two falls, the bounce absorbed.
func TestSimulateInput(t *testing.T) {
	got, err := SimulateInput()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(got) != "[rising falling rising falling]" || len(got) != InputChanges {
		t.Fatalf("input changes %v", got)
	}
	for _, line := range []string{LineInputIdle, LineInputReady, "led red out=#ff0000 pins=R--"} {
		if _, ok := ParseInput(line); ok {
			t.Errorf("ParseInput(%q) is an input line", line)
		}
	}
}
