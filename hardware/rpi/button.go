package rpi

import (
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// edgeDetector turns polled levels into raw edges. It starts released, so a
// button already held when polling starts reports a press at once.
// Bounces are reported as they are seen: debouncing is the gesture code's.
type edgeDetector struct {
	activeHigh bool // pressed = high; by default pressed = low (pull-up)
	down       bool
}

// sample takes one reading of the pin (high = true) at a time and returns
// the edge it makes, if the button's state changed.
func (d *edgeDetector) sample(high bool, at time.Time) (hardware.Edge, bool) {
	down := high == d.activeHigh
	if down == d.down {
		return hardware.Edge{}, false
	}
	d.down = down
	return hardware.Edge{Down: down, At: at}, true
}
