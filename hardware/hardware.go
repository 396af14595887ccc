// Package hardware declares the light's devices by role: an LED that shows
// frames of RGB pixels, a button that reports raw edges, and Halt. The
// go-rpio driver (hardware/rpi), the simulator (hardware/sim) and the test
// fakes (hardware/hwtest) implement them; gesture detection
// (hardware/gesture) and rendering (hardware/render) are pure code over
// them.
package hardware

import "time"

// RGB is one pixel, 0–255 per channel.
type RGB struct {
	R uint8 `json:"r"`
	G uint8 `json:"g"`
	B uint8 `json:"b"`
}

// LED shows frames: one pixel for an RGB LED, one per LED for a strip.
type LED interface {
	// Pixels is how many pixels a frame has.
	Pixels() int
	// Show displays frame, which has Pixels() pixels and is already
	// gamma-corrected and brightness-capped.
	Show(frame []RGB) error
}

// Edge is one raw change of the button's level.
type Edge struct {
	Down bool      // pressed
	At   time.Time // when the driver saw it
}

// Button reports raw edges, bounces included.
type Button interface {
	// Edges delivers every level change in order; it is closed by Halt.
	Edges() <-chan Edge
}

// Halter stops a device and releases what it holds (pins, SPI).
type Halter interface {
	Halt() error
}

// Device is everything a light has: an LED, a button, and Halt.
type Device interface {
	LED
	Button
	Halter
}
