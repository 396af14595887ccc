//go:build linux && (arm64 || arm)

package main

import (
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/rpi"
)

func gpioAvailable() bool { return rpi.Available() }

// openGPIO opens the board and sets up the LED and the button of
// lumen.yaml's hardware.rpi section.
func openGPIO(c RPiConfig) (hardware.Device, func() error, error) {
	cfg := rpi.Config{
		LED:    rpi.LEDConfig{Type: c.LED.Type, PWM: c.LED.PWM, PWMHz: c.LED.PWMHz, ActiveLow: c.LED.ActiveLow, Pixels: c.LED.Pixels},
		Button: rpi.ButtonConfig{Poll: time.Duration(c.Button.PollMs) * time.Millisecond, ActiveHigh: c.Button.ActiveHigh},
	}
	copy(cfg.LED.Pins[:], c.LED.Pins)
	if c.Button.Pin != nil {
		cfg.Button.Pin = *c.Button.Pin
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, err
	}
	b, err := rpi.Open()
	if err != nil {
		return nil, nil, err
	}
	dev, err := b.Device(cfg)
	if err != nil {
		_ = b.Close()
		return nil, nil, err
	}
	return dev, b.Close, nil
}
