// Package rpi drives Lumen's LED and button from a Raspberry Pi's GPIO
// header with github.com/stianeikeland/go-rpio: an RGB LED on three pins
// (hardware PWM where the pin has it, software PWM otherwise, or plain
// on/off), or a WS2812 strip on SPI0's MOSI, and a button read by polling
// its level.
//
// go-rpio keeps package globals (the mapped registers), so there is one
// Board: Open maps them, Board.Device sets the pins up, Board.Close puts
// every pin it changed back the way it found it. Only the Board and the
// Device are built for linux/arm64 and linux/arm; the configuration, the
// PWM arithmetic, the software-PWM schedule and the button's edge
// detection are plain code, tested on any machine.
//
// go-rpio maps /dev/mem, so the driver runs as root. The edge-detect
// registers are never used (they hang some Pis): the button is polled.
package rpi

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Config is the LED and the button of one light. The zero value, after
// Validate, is an RGB LED on BCM 17, 27, 22 and a button on BCM 4.
type Config struct {
	LED    LEDConfig
	Button ButtonConfig
}

// LEDConfig is the LED: an RGB LED on three pins or a WS2812 strip.
type LEDConfig struct {
	Type string // "rgb" (default) or "ws2812"
	// Pins are the BCM pins of R, G and B for "rgb"; all zero means the
	// default 17, 27, 22.
	Pins [3]int
	// PWM is how the rgb channels are dimmed:
	//   auto      hardware PWM where the pin has it (BCM 12, 13, 18, 19, one pin
	//             per PWM channel), software PWM for the others (default)
	//   hardware  the same, but an error unless the pins allow it: two pins on
	//             one PWM channel, or no pin with hardware PWM
	//   software  software PWM on every pin
	//   off       no dimming: a channel is on iff its value is >= 128 (for QEMU,
	//             which does not model PWM)
	PWM       string
	PWMHz     int  // PWM frequency, default 500
	ActiveLow bool // common-anode LED: a low pin lights it
	Pixels    int  // strip length for "ws2812" (default 1); "rgb" is one pixel
	SPIBus    int  // SPI bus for "ws2812": only 0 (MOSI = BCM 10)
}

// ButtonConfig is the push button.
type ButtonConfig struct {
	// Pin is the button's BCM pin: 0 means the default 4, -1 no button.
	Pin int
	// Poll is how often the level is read (default 1ms). go-rpio's
	// edge-detect registers are never used: they hang some Pis.
	Poll time.Duration
	// ActiveHigh is a button that pulls the pin high when pressed (the pin
	// gets a pull-down). By default it gets a pull-up and pressed is low.
	ActiveHigh bool
}

// Defaults and limits.
const (
	DefaultPWMHz = 500
	DefaultPoll  = time.Millisecond
	// MaxSoftwarePWMHz bounds software PWM: one goroutine wakes up to four
	// times per period.
	MaxSoftwarePWMHz = 2000
	// MaxPWMHz bounds hardware PWM: its clock is PWMHz × a cycle of at
	// least 255 steps, from a 19.2 MHz oscillator.
	MaxPWMHz   = 20000
	MaxPixels  = 1024
	maxBCMPin  = 27
	minPoll    = 100 * time.Microsecond
	maxPoll    = time.Second
	noButton   = -1
	defaultBtn = 4
)

// defaultPins are the R, G, B pins of an RGB LED when none are given.
var defaultPins = [3]int{17, 27, 22}

// spi0Pins are the pins go-rpio's SpiBegin(Spi0) takes: CE1, CE0, MISO,
// MOSI, SCLK.
var spi0Pins = []int{7, 8, 9, 10, 11}

// Validate fills in the defaults, then checks the configuration. Its
// errors start with "rpi: " and name the setting at fault.
func (c *Config) Validate() error {
	l, b := &c.LED, &c.Button
	if l.Type == "" {
		l.Type = "rgb"
	}
	if l.PWM == "" {
		l.PWM = "auto"
	}
	if l.PWMHz == 0 {
		l.PWMHz = DefaultPWMHz
	}
	if l.Pixels == 0 {
		l.Pixels = 1
	}
	if b.Pin == 0 {
		b.Pin = defaultBtn
	}
	if b.Poll == 0 {
		b.Poll = DefaultPoll
	}
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf("rpi: "+format, args...)) }
	taken := map[int]string{} // pin → what uses it
	use := func(pin int, what string) {
		switch other, ok := taken[pin]; {
		case pin < 0 || pin > maxBCMPin:
			bad("%s is BCM %d; GPIO pins are BCM 0–%d", what, pin, maxBCMPin)
		case ok:
			bad("%s and %s are both BCM %d; each needs its own pin", other, what, pin)
		default:
			taken[pin] = what
		}
	}
	switch l.Type {
	case "rgb":
		if l.Pins == [3]int{} {
			l.Pins = defaultPins
		}
		for i, p := range l.Pins {
			use(p, fmt.Sprintf("led.pins[%d] (%s)", i, "RGB"[i:i+1]))
		}
		if l.Pixels != 1 {
			bad("led.pixels is %d, but an rgb LED is one pixel; use led.type ws2812 for a strip", l.Pixels)
		}
		if !slices.Contains([]string{"auto", "hardware", "software", "off"}, l.PWM) {
			bad("led.pwm must be auto, hardware, software or off, not %q", l.PWM)
		} else if l.PWM != "off" {
			if l.PWMHz < 1 || l.PWMHz > MaxPWMHz {
				bad("led.pwm_hz must be 1–%d, not %d", MaxPWMHz, l.PWMHz)
			}
			if len(errs) == 0 {
				drives, err := assignDrives(l.PWM, l.Pins)
				if err != nil {
					errs = append(errs, err)
				} else if slices.Contains(drives[:], driveSoftware) && l.PWMHz > MaxSoftwarePWMHz {
					bad("led.pwm_hz %d is too fast for software PWM (at most %d); lower it, or put the channels on hardware PWM pins (BCM 12 or 18, and 13 or 19)", l.PWMHz, MaxSoftwarePWMHz)
				}
			}
		}
	case "ws2812":
		if l.SPIBus != 0 {
			bad("led.spi_bus is %d; go-rpio drives only SPI0 (MOSI = BCM 10)", l.SPIBus)
		}
		if l.Pixels < 1 || l.Pixels > MaxPixels {
			bad("led.pixels must be 1–%d, not %d", MaxPixels, l.Pixels)
		}
		for _, p := range spi0Pins {
			taken[p] = "SPI0 (BCM 7–11, for the ws2812 strip)"
		}
	default:
		bad("led.type must be rgb or ws2812, not %q", l.Type)
	}
	if b.Pin != noButton {
		use(b.Pin, "button.pin")
	}
	if b.Poll < minPoll || b.Poll > maxPoll {
		bad("button.poll must be %v–%v, not %v", minPoll, maxPoll, b.Poll)
	}
	return errors.Join(errs...)
}

// Reserved names the pins a validated configuration takes, pin → what
// uses it, so that input pins (gpio sources) stay off them.
func (c Config) Reserved() map[int]string {
	out := map[int]string{}
	switch c.LED.Type {
	case "ws2812":
		for _, p := range spi0Pins {
			out[p] = "SPI0, which drives the ws2812 strip (hardware.rpi.led)"
		}
	default:
		for i, p := range c.LED.Pins {
			out[p] = fmt.Sprintf("the LED's %s channel (hardware.rpi.led.pins)", [...]string{"red", "green", "blue"}[i])
		}
	}
	if c.Button.Pin != noButton {
		out[c.Button.Pin] = "the button (hardware.rpi.button.pin)"
	}
	return out
}

// drive is how one channel of an RGB LED is driven.
type drive uint8

const (
	driveSoftware drive = iota // a goroutine toggles the pin
	driveHardware              // the SoC's PWM peripheral
	driveOnOff                 // high or low, no dimming
)

func (d drive) String() string {
	return [...]string{"software PWM", "hardware PWM", "on/off"}[d]
}

// pwmChannel is the hardware PWM channel of a BCM pin: PWM0 for 12 and 18,
// PWM1 for 13 and 19.
func pwmChannel(pin int) (channel int, ok bool) {
	switch pin {
	case 12, 18:
		return 0, true
	case 13, 19:
		return 1, true
	}
	return 0, false
}

// assignDrives decides how each of the R, G, B pins is driven under a PWM
// mode. Two channels at most are hardware PWM, one per PWM channel; in
// auto the first pin (R, then G, then B) gets a shared channel.
func assignDrives(mode string, pins [3]int) ([3]drive, error) {
	var d [3]drive
	switch mode {
	case "off":
		return [3]drive{driveOnOff, driveOnOff, driveOnOff}, nil
	case "software":
		return d, nil
	case "auto", "hardware":
	default:
		return d, fmt.Errorf("rpi: led.pwm must be auto, hardware, software or off, not %q", mode)
	}
	owner := [2]int{-1, -1} // the LED channel holding each PWM channel
	for i, p := range pins {
		ch, ok := pwmChannel(p)
		if !ok {
			continue
		}
		if o := owner[ch]; o >= 0 {
			if mode == "hardware" {
				return d, fmt.Errorf("rpi: led.pwm hardware: BCM %d (%s) and BCM %d (%s) share PWM%d, so only one can have hardware PWM; move %s to %s or use led.pwm auto",
					pins[o], "RGB"[o:o+1], p, "RGB"[i:i+1], ch, "RGB"[i:i+1], otherChannelPins(ch))
			}
			continue
		}
		owner[ch] = i
		d[i] = driveHardware
	}
	if mode == "hardware" && owner == [2]int{-1, -1} {
		return d, fmt.Errorf("rpi: led.pwm hardware: none of BCM %d, %d, %d has hardware PWM (BCM 12, 13, 18, 19); rewire, or use led.pwm auto or software",
			pins[0], pins[1], pins[2])
	}
	return d, nil
}

// otherChannelPins names the pins of the PWM channel that is not ch.
func otherChannelPins(ch int) string {
	if ch == 0 {
		return "BCM 13 or 19 (PWM1)"
	}
	return "BCM 12 or 18 (PWM0)"
}

// String summarises a validated configuration in one line, for logs.
func (c Config) String() string {
	var s strings.Builder
	switch c.LED.Type {
	case "ws2812":
		fmt.Fprintf(&s, "ws2812 strip of %d pixels on SPI0 (MOSI BCM 10)", c.LED.Pixels)
	default:
		drives, _ := assignDrives(c.LED.PWM, c.LED.Pins)
		s.WriteString("RGB LED on")
		for i, p := range c.LED.Pins {
			fmt.Fprintf(&s, " %s=BCM %d (%s)", "RGB"[i:i+1], p, drives[i])
		}
		if c.LED.PWM != "off" {
			fmt.Fprintf(&s, " at %d Hz", c.LED.PWMHz)
		}
		if c.LED.ActiveLow {
			s.WriteString(", active low")
		}
	}
	if c.Button.Pin == noButton {
		s.WriteString("; no button")
	} else {
		level := "low"
		if c.Button.ActiveHigh {
			level = "high"
		}
		fmt.Fprintf(&s, "; button on BCM %d (pressed = %s, polled every %v)", c.Button.Pin, level, c.Button.Poll)
	}
	return s.String()
}
