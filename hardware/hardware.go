// Package hardware declares the light's devices by role: an LED that shows
// frames of RGB pixels, a button that reports raw edges, and Halt. The
// go-rpio driver (hardware/rpi), the simulator (hardware/sim) and the test
// fakes (hardware/hwtest) implement them; gesture detection
// (hardware/gesture) and rendering (hardware/render) are pure code over
// them.
package hardware

import (
	"errors"
	"time"
)

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

// Errors of a simulated button given an edge it is at already: a press of
// a button that is down, a release of one that is up.
var (
	ErrButtonDown = errors.New("the simulated button is down already")
	ErrButtonUp   = errors.New("the simulated button is up already")
)

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

// Pull is the bias an input pin gets.
type Pull string

// Biases of an input pin.
const (
	PullNone Pull = "none" // the sensor drives the line (a PIR module)
	PullUp   Pull = "up"   // a contact to GND
	PullDown Pull = "down" // a contact to 3.3 V
)

// Level is one raw level change of a watched input pin.
type Level struct {
	Pin  int       // BCM number
	High bool      // the new level
	At   time.Time // when the driver saw it
}

// Inputs are the GPIO input pins besides the button (a PIR sensor, a reed
// switch). Their raw levels, bounces included, arrive on Levels;
// debouncing is the reader's (hardware/input).
type Inputs interface {
	// Reserved names the pins the LED and the button already use, pin →
	// what uses it, so a source cannot take them.
	Reserved() map[int]string
	// Watch makes pin an input with pull and starts reporting its
	// changes; it returns the level now, the baseline, which is not
	// reported.
	Watch(pin int, pull Pull) (high bool, err error)
	// Unwatch stops reporting pin.
	Unwatch(pin int) error
	// Levels delivers the changes of every watched pin, in order; it is
	// closed by Halt.
	Levels() <-chan Level
	Halter
}
