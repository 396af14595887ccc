//go:build linux && (arm64 || arm)

package daemon

import (
	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/rpi"
)

func gpioAvailable() bool { return rpi.Available() }

// openGPIO opens the board and sets up the LED, the button and the input
// pins of lumen.yaml's hardware.rpi section.
func openGPIO(c RPiConfig) (hardware.Device, hardware.Inputs, func() error, error) {
	cfg := c.rpiConfig()
	if err := cfg.Validate(); err != nil {
		return nil, nil, nil, err
	}
	b, err := rpi.Open()
	if err != nil {
		return nil, nil, nil, err
	}
	dev, err := b.Device(cfg)
	if err != nil {
		_ = b.Close()
		return nil, nil, nil, err
	}
	in, err := b.Inputs(cfg)
	if err != nil {
		_ = b.Close()
		return nil, nil, nil, err
	}
	return dev, in, b.Close, nil
}
