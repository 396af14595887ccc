package render

import (
	"testing"

	"github.com/lumen-home/lumen/hardware"
)

// Oklab round-trips every 8-bit gray and a grid of colors exactly, so a
// fade starts and ends on its colors.
func TestOklabRoundTrip(t *testing.T) {
	for r := 0; r < 256; r += 15 {
		for g := 0; g < 256; g += 15 {
			for b := 0; b < 256; b += 15 {
				c := hardware.RGB{R: uint8(r), G: uint8(g), B: uint8(b)}
				if got := fromOklab(oklab(c)); got != c {
					t.Fatalf("%v → %v", c, got)
				}
			}
		}
	}
	for v := 0; v < 256; v++ {
		c := hardware.RGB{R: uint8(v), G: uint8(v), B: uint8(v)}
		if got := fromOklab(oklab(c)); got != c {
			t.Fatalf("%v → %v", c, got)
		}
	}
}
