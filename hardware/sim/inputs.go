package sim

import (
	"fmt"
	"maps"
	"sync"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/clock"
)

var _ hardware.Inputs = (*Inputs)(nil)

// Inputs are simulated GPIO input pins whose levels are set from software
// (over NATS, by `lumen gpio`). An unwatched pin reads as its pull says:
// high with a pull-up, low otherwise.
type Inputs struct {
	clock    clock.Clock
	reserved map[int]string

	mu      sync.Mutex
	watched map[int]bool // pin → its level
	halted  bool
	levels  chan hardware.Level
}

// NewInputs returns simulated input pins; reserved are the pins the LED
// and the button would use on the Pi (pin → what), so a source that works
// here works there. Levels are stamped with c's time (the wall clock's
// when nil).
func NewInputs(reserved map[int]string, c clock.Clock) *Inputs {
	if c == nil {
		c = clock.System(clock.Trust)
	}
	return &Inputs{clock: c, reserved: maps.Clone(reserved), watched: map[int]bool{}, levels: make(chan hardware.Level, edgeBuffer)}
}

// Reserved implements hardware.Inputs.
func (in *Inputs) Reserved() map[int]string { return maps.Clone(in.reserved) }

// Watch implements hardware.Inputs: the pin starts at its idle level.
func (in *Inputs) Watch(pin int, pull hardware.Pull) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.halted {
		return false, ErrHalted
	}
	if what, ok := in.reserved[pin]; ok {
		return false, fmt.Errorf("sim: BCM %d is %s", pin, what)
	}
	if high, ok := in.watched[pin]; ok {
		return high, nil
	}
	high := pull == hardware.PullUp
	in.watched[pin] = high
	return high, nil
}

// Unwatch implements hardware.Inputs.
func (in *Inputs) Unwatch(pin int) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.watched, pin)
	return nil
}

// Levels implements hardware.Inputs.
func (in *Inputs) Levels() <-chan hardware.Level { return in.levels }

// Set drives a watched pin to a level, like the sensor would. It reports
// whether the level changed; setting the level the pin already has is
// not an edge.
func (in *Inputs) Set(pin int, high bool) (changed bool, err error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	switch old, ok := in.watched[pin]; {
	case in.halted:
		return false, ErrHalted
	case !ok:
		if what, taken := in.reserved[pin]; taken {
			return false, fmt.Errorf("sim: BCM %d is %s, not an input", pin, what)
		}
		return false, fmt.Errorf("sim: BCM %d is not watched: no gpio source uses it", pin)
	case old == high:
		return false, nil
	}
	select {
	case in.levels <- hardware.Level{Pin: pin, High: high, At: in.clock.Now()}:
		in.watched[pin] = high
		return true, nil
	default:
		return false, fmt.Errorf("sim: too many level changes waiting; nothing reads the pins")
	}
}

// Halt implements hardware.Halter: Levels closes. It is safe to call
// twice.
func (in *Inputs) Halt() error {
	in.mu.Lock()
	defer in.mu.Unlock()
	if !in.halted {
		in.halted = true
		close(in.levels)
	}
	return nil
}
