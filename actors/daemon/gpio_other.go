//go:build !(linux && (arm64 || arm))

package daemon

import (
	"errors"

	"github.com/lumen-home/lumen/hardware"
)

func gpioAvailable() bool { return false }

func openGPIO(RPiConfig) (hardware.Device, hardware.Inputs, func() error, error) {
	return nil, nil, nil, errors.New("this build has no GPIO driver: the Raspberry Pi build is linux/arm64 (or arm); use --hardware sim here")
}
