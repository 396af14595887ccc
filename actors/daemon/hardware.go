package daemon

import (
	"fmt"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/hardware/rpi"
	"github.com/lumen-home/lumen/hardware/sim"
	"github.com/lumen-home/lumen/internal/clock"
)

// HardwareConfig is the `hardware:` section of lumen.yaml.
type HardwareConfig struct {
	// Driver is auto (the Pi's GPIO when present, else the simulator),
	// sim or rpi.
	Driver string `yaml:"driver"`
	// The doc tags are the configuration reference's (docs/configuration.md).
	Light      string  `yaml:"light" doc:"the light the Pi's LED and button belong to (default: the first --light); every other light gets a simulated LED and button"`
	Pixels     int     `yaml:"pixels" doc:"the simulated LED's pixel count (default 1)"`
	Gamma      float64 `yaml:"gamma" doc:"gamma correction of every color sent to the LED, above 0 and at most 5 (default 2.2; 1: none)"`
	Brightness float64 `yaml:"brightness" doc:"a cap on the LED's brightness from 0 to 1, a power budget (default 1)"`
	FadeMs     int     `yaml:"fade_ms" doc:"milliseconds of fade from one state's color to the next, in Oklab (even to the eye), 30 frames a second (default 0: a cut)"`
	Gestures   struct {
		DebounceMs int `yaml:"debounce_ms" doc:"milliseconds a button's level must hold to count (default 20)"`
		DoubleMs   int `yaml:"double_ms" doc:"milliseconds within which a second click makes a double click (default 300)"`
		HoldMs     int `yaml:"hold_ms" doc:"milliseconds down that make a hold (default 800)"`
	} `yaml:"gestures"`
	// RPi configures the GPIO driver.
	RPi RPiConfig `yaml:"rpi"`
}

// RPiConfig is the `hardware.rpi:` section: pins are BCM numbers.
type RPiConfig struct {
	LED struct {
		Type      string `yaml:"type" doc:"rgb (an RGB LED on three pins, the default) or ws2812 (a strip on SPI0, MOSI = BCM 10)"`
		Pins      []int  `yaml:"pins" doc:"the BCM pins of R, G and B (default [17, 27, 22])"`
		PWM       string `yaml:"pwm" doc:"how rgb channels dim: auto (hardware PWM where the pin has it, BCM 12, 13, 18, 19; software for the others; the default), hardware, software, or off (on iff a channel is at least 128)"`
		PWMHz     int    `yaml:"pwm_hz" doc:"the PWM frequency in Hz (default 500; software PWM at most 2000)"`
		ActiveLow bool   `yaml:"active_low" doc:"a common-anode LED: a low pin lights it"`
		Pixels    int    `yaml:"pixels" doc:"a ws2812 strip's length (default 1, at most 1024)"`
	} `yaml:"led"`
	Button struct {
		Pin        *int `yaml:"pin" doc:"the button's BCM pin (default 4; -1: no button)"`
		PollMs     int  `yaml:"poll_ms" doc:"how often the button is read, in milliseconds (default 1)"`
		ActiveHigh bool `yaml:"active_high" doc:"a button that pulls the pin high when pressed (it gets a pull-down); by default it gets a pull-up and pressed is low"`
	} `yaml:"button"`
}

func (h HardwareConfig) renderOptions(pixels int) render.Options {
	return render.Options{Pixels: pixels, Gamma: h.Gamma, Brightness: h.Brightness, FadeMs: h.FadeMs}
}

func (h HardwareConfig) gestures() gesture.Config {
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	return gesture.Config{Debounce: ms(h.Gestures.DebounceMs), DoubleWindow: ms(h.Gestures.DoubleMs), Hold: ms(h.Gestures.HoldMs)}
}

// validate checks the section against the lights being run.
func (h *HardwareConfig) validate(lights []string) error {
	switch h.Driver {
	case "":
		h.Driver = "auto"
	case "auto", "sim", "rpi":
	default:
		return fmt.Errorf("--hardware must be auto, sim or rpi, not %q", h.Driver)
	}
	if h.Light == "" && len(lights) > 0 {
		h.Light = lights[0]
	}
	found := false
	for _, l := range lights {
		found = found || l == h.Light
	}
	if !found {
		return fmt.Errorf("hardware.light %q is not one of the lights being run", h.Light)
	}
	if h.Pixels < 0 || h.Pixels > 1024 {
		return fmt.Errorf("hardware.pixels must be 1–1024, not %d", h.Pixels)
	}
	if _, err := render.New(h.renderOptions(max(h.Pixels, 1))); err != nil {
		return fmt.Errorf("hardware: %w", err)
	}
	if _, err := gesture.New(h.gestures()); err != nil {
		return fmt.Errorf("hardware.gestures: %w", err)
	}
	return nil
}

// devices are the daemon's LEDs and buttons, one per light, and the input
// pins of the lights that have them.
type devices struct {
	byLight map[string]hardware.Device
	inputs  map[string]hardware.Inputs // the GPIO light on a Pi, every light on the simulator
	close   func() error               // releases the GPIO board, if one was opened
}

// openDevices gives the hardware light the Pi's GPIO when the driver says
// so (or auto finds a Pi), and every light a simulator otherwise.
func openDevices(h HardwareConfig, lights []string, c clock.Clock, logf func(string, ...any)) (*devices, error) {
	d := &devices{byLight: map[string]hardware.Device{}, inputs: map[string]hardware.Inputs{}, close: func() error { return nil }}
	useGPIO := h.Driver == "rpi" || (h.Driver == "auto" && gpioAvailable())
	for _, l := range lights {
		if l == h.Light && useGPIO {
			dev, in, closeBoard, err := openGPIO(h.RPi)
			if err != nil {
				_ = d.halt()
				return nil, fmt.Errorf("hardware: %w", err)
			}
			d.byLight[l], d.inputs[l], d.close = dev, in, closeBoard
			logf("light %s: LED and button on the GPIO pins", l)
			continue
		}
		d.byLight[l] = sim.New(max(h.Pixels, 1), c)
		if !useGPIO {
			// Simulated input pins, kept off the pins hardware.rpi gives
			// the LED and the button, so a source made here works on the
			// Pi. On a Pi only the GPIO light has pins.
			d.inputs[l] = sim.NewInputs(h.RPi.reservedPins(), c)
		}
	}
	if !useGPIO {
		logf("no GPIO here: simulated LED and button (lumen press clicks, lumen.<light>.cmd.led shows the color)")
	}
	return d, nil
}

// halt stops every device, then releases the board.
func (d *devices) halt() error {
	var first error
	for _, dev := range d.byLight {
		if err := dev.Halt(); err != nil && first == nil {
			first = err
		}
	}
	for _, in := range d.inputs {
		if err := in.Halt(); err != nil && first == nil {
			first = err
		}
	}
	if err := d.close(); err != nil && first == nil {
		first = err
	}
	return first
}

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
