package messages

import "time"

// VerbGPIO sets a simulated input pin's level: GPIORequest → GPIOReply.
// A light on the Pi's real pins answers 409.
const VerbGPIO = "gpio"

// GPIORequest is the body of gpio: {"pin":23,"level":1}. Level is 1
// (high) or 0 (low).
type GPIORequest struct {
	Pin   *int `json:"pin"`
	Level *int `json:"level"`
}

// GPIOReply answers gpio once the level is set. Changed is false when the
// pin already had that level (no edge). The source's store and fire come
// later, through the light's inputs.
type GPIOReply struct {
	OK      bool `json:"ok"`
	Pin     int  `json:"pin"`
	Level   int  `json:"level"`
	Changed bool `json:"changed"`
}

// GPIOEvent is published by the hardware actor on lumen.<light>.gpio.<pin>
// (core NATS, not journaled) for each debounced change of a watched input
// pin; it is a gpio source's result. Level is 1 or 0, Edge rising or
// falling.
type GPIOEvent struct {
	Pin   int       `json:"pin"`
	Level int       `json:"level"`
	Edge  string    `json:"edge"`
	At    time.Time `json:"at"`
}
