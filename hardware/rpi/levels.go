package rpi

import (
	"time"

	"github.com/lumen-home/lumen/hardware"
)

// levelTracker turns polled readings of the input pins into raw level
// changes. A pin's first reading is its baseline (Watch returns it), not a
// change; bounces are reported as seen: debouncing is the reader's.
type levelTracker map[int]bool

// sample takes one reading of pin and returns the change it makes, if any.
// A pin not tracked is ignored.
func (t levelTracker) sample(pin int, high bool, at time.Time) (hardware.Level, bool) {
	old, ok := t[pin]
	if !ok || old == high {
		return hardware.Level{}, false
	}
	t[pin] = high
	return hardware.Level{Pin: pin, High: high, At: at}, true
}
