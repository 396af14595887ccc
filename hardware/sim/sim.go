// Package sim is the simulated light: an LED that keeps the frame it was
// last shown and a button whose edges are injected (over NATS, by
// `lumen press`). `lumen up` uses it whenever no GPIO is present.
package sim

import (
	"errors"
	"fmt"
	"sync"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/clock"
)

var _ hardware.Device = (*Device)(nil)

// ErrHalted is returned once the device has been halted.
var ErrHalted = errors.New("sim: the device is halted")

// edgeBuffer is how many injected edges may wait for the reader.
const edgeBuffer = 64

// Device is a simulated LED and button.
type Device struct {
	clock clock.Clock

	mu     sync.Mutex
	shown  []hardware.RGB
	down   bool
	halted bool
	edges  chan hardware.Edge
}

// New returns a device with pixels pixels (at least 1) whose edges are
// stamped with c's time (the wall clock's when nil).
func New(pixels int, c clock.Clock) *Device {
	if c == nil {
		c = clock.System(clock.Trust)
	}
	return &Device{clock: c, shown: make([]hardware.RGB, max(pixels, 1)), edges: make(chan hardware.Edge, edgeBuffer)}
}

// Pixels implements hardware.LED.
func (d *Device) Pixels() int { return len(d.shown) }

// Show implements hardware.LED: it keeps the frame.
func (d *Device) Show(frame []hardware.RGB) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	if len(frame) != len(d.shown) {
		return fmt.Errorf("sim: frame of %d pixels for an LED of %d", len(frame), len(d.shown))
	}
	copy(d.shown, frame)
	return nil
}

// Shown returns a copy of the frame shown now.
func (d *Device) Shown() []hardware.RGB {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]hardware.RGB(nil), d.shown...)
}

// Edges implements hardware.Button.
func (d *Device) Edges() <-chan hardware.Edge { return d.edges }

// Inject presses (down) or releases the virtual button, like a raw GPIO
// edge: debounce and gestures are the reader's business.
func (d *Device) Inject(down bool) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return ErrHalted
	}
	if down == d.down {
		if down {
			return hardware.ErrButtonDown
		}
		return hardware.ErrButtonUp
	}
	select {
	case d.edges <- hardware.Edge{Down: down, At: d.clock.Now()}:
		d.down = down
		return nil
	default:
		return errors.New("sim: too many edges waiting; nothing reads the button")
	}
}

// Halt implements hardware.Halter: the LED goes dark and the edge channel
// closes. It is safe to call twice.
func (d *Device) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return nil
	}
	d.halted = true
	clear(d.shown)
	close(d.edges)
	return nil
}
