// Package hwtest has fakes of the hardware roles for tests: an LED that
// records every frame, and a button whose edges a test pushes at the
// time of the test's clock.
package hwtest

import (
	"fmt"
	"sync"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/internal/clock"
)

var (
	_ hardware.LED    = (*LED)(nil)
	_ hardware.Button = (*Button)(nil)
	_ hardware.Device = (*Device)(nil)
)

// LED records the frames it is shown.
type LED struct {
	N   int   // pixels
	Err error // returned by Show when set

	mu     sync.Mutex
	Frames [][]hardware.RGB
}

// Pixels implements hardware.LED.
func (l *LED) Pixels() int { return max(l.N, 1) }

// Show implements hardware.LED.
func (l *LED) Show(frame []hardware.RGB) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.Err != nil {
		return l.Err
	}
	if len(frame) != l.Pixels() {
		return fmt.Errorf("hwtest: frame of %d pixels for an LED of %d", len(frame), l.Pixels())
	}
	l.Frames = append(l.Frames, append([]hardware.RGB(nil), frame...))
	return nil
}

// Last returns the last frame shown, or nil.
func (l *LED) Last() []hardware.RGB {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.Frames) == 0 {
		return nil
	}
	return l.Frames[len(l.Frames)-1]
}

// Count returns how many frames were shown.
func (l *LED) Count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.Frames)
}

// Button is a button whose edges the test pushes on C.
type Button struct {
	C     chan hardware.Edge
	Clock clock.Clock // stamps Press and Release; the wall clock when nil
}

// NewButton returns a button with a buffered edge channel whose edges
// are stamped with c's time.
func NewButton(c clock.Clock) *Button {
	return &Button{C: make(chan hardware.Edge, 64), Clock: c}
}

// Edges implements hardware.Button.
func (b *Button) Edges() <-chan hardware.Edge { return b.C }

func (b *Button) now() time.Time {
	if b.Clock == nil {
		return time.Now()
	}
	return b.Clock.Now()
}

// Press pushes a down edge at the clock's time.
func (b *Button) Press() { b.C <- hardware.Edge{Down: true, At: b.now()} }

// Release pushes an up edge at the clock's time.
func (b *Button) Release() { b.C <- hardware.Edge{Down: false, At: b.now()} }

// Device is an LED, a button and a count of Halt calls.
type Device struct {
	*LED
	*Button

	mu     sync.Mutex
	halted int
}

// NewDevice returns a device with an LED of pixels pixels and a button
// whose edges c's time stamps.
func NewDevice(pixels int, c clock.Clock) *Device {
	return &Device{LED: &LED{N: pixels}, Button: NewButton(c)}
}

// Halt implements hardware.Halter; the first call closes the edges.
func (d *Device) Halt() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted == 0 {
		close(d.C)
	}
	d.halted++
	return nil
}

// Halted reports how many times Halt was called.
func (d *Device) Halted() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.halted
}
