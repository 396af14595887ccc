package rpi

import (
	"testing"
	"time"

	"github.com/lumen-home/lumen/hardware"
)

func TestLevelTracker(t *testing.T) {
	at := time.Unix(10, 0)
	tr := levelTracker{23: false, 24: true}
	for _, tc := range []struct {
		name string
		pin  int
		high bool
		want bool
	}{
		{"baseline repeated", 23, false, false},
		{"rise", 23, true, true},
		{"still high", 23, true, false},
		{"pull-up pin falls", 24, false, true},
		{"untracked pin", 5, true, false},
		{"fall", 23, false, true},
	} {
		l, ok := tr.sample(tc.pin, tc.high, at)
		if ok != tc.want || (ok && l != (hardware.Level{Pin: tc.pin, High: tc.high, At: at})) {
			t.Errorf("%s: %+v %v", tc.name, l, ok)
		}
	}
}

func TestReserved(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want map[int]string
	}{
		{"defaults", Config{}, map[int]string{
			17: "the LED's red channel (hardware.rpi.led.pins)", 27: "the LED's green channel (hardware.rpi.led.pins)",
			22: "the LED's blue channel (hardware.rpi.led.pins)", 4: "the button (hardware.rpi.button.pin)"}},
		{"strip without button", Config{LED: LEDConfig{Type: "ws2812", Pixels: 8}, Button: ButtonConfig{Pin: noButton}}, map[int]string{
			7: "SPI0, which drives the ws2812 strip (hardware.rpi.led)", 8: "SPI0, which drives the ws2812 strip (hardware.rpi.led)",
			9: "SPI0, which drives the ws2812 strip (hardware.rpi.led)", 10: "SPI0, which drives the ws2812 strip (hardware.rpi.led)",
			11: "SPI0, which drives the ws2812 strip (hardware.rpi.led)"}},
	} {
		if err := tc.cfg.Validate(); err != nil {
			t.Fatal(err)
		}
		got := tc.cfg.Reserved()
		if len(got) != len(tc.want) {
			t.Fatalf("%s: %v", tc.name, got)
		}
		for p, w := range tc.want {
			if got[p] != w {
				t.Errorf("%s: BCM %d is %q, want %q", tc.name, p, got[p], w)
			}
		}
	}
}
