package main

import (
	"time"

	"github.com/lumen-home/lumen/hardware/rpi"
)

// rpiConfig is lumen.yaml's hardware.rpi section as the driver takes it;
// the simulator reads it too, so that its input pins avoid the pins the
// LED and the button would take on the Pi.
func (c RPiConfig) rpiConfig() rpi.Config {
	cfg := rpi.Config{
		LED:    rpi.LEDConfig{Type: c.LED.Type, PWM: c.LED.PWM, PWMHz: c.LED.PWMHz, ActiveLow: c.LED.ActiveLow, Pixels: c.LED.Pixels},
		Button: rpi.ButtonConfig{Poll: time.Duration(c.Button.PollMs) * time.Millisecond, ActiveHigh: c.Button.ActiveHigh},
	}
	copy(cfg.LED.Pins[:], c.LED.Pins)
	if c.Button.Pin != nil {
		cfg.Button.Pin = *c.Button.Pin
	}
	return cfg
}

// reservedPins are the pins the LED and the button take under c: on the
// simulator as on the Pi, a gpio source cannot have them. A section the
// driver would refuse reserves what it names all the same.
func (c RPiConfig) reservedPins() map[int]string {
	cfg := c.rpiConfig()
	_ = cfg.Validate() // fills the defaults; a bad section fails on the Pi, where it is used
	return cfg.Reserved()
}
