package main

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/gesture"
	"github.com/lumen-home/lumen/hardware/render"
	"github.com/lumen-home/lumen/hardware/sim"
)

// HardwareConfig is the `hardware:` section of lumen.yaml.
type HardwareConfig struct {
	// Driver is auto (the Pi's GPIO when present, else the simulator),
	// sim or rpi.
	Driver string `yaml:"driver"`
	// Light is the light the Pi's LED and button belong to (default: the
	// first light). Every other light gets a simulated device.
	Light string `yaml:"light"`
	// Pixels is the simulated LED's pixel count (default 1).
	Pixels     int     `yaml:"pixels"`
	Gamma      float64 `yaml:"gamma"`
	Brightness float64 `yaml:"brightness"`
	FadeMs     int     `yaml:"fade_ms"`
	Gestures   struct {
		DebounceMs int `yaml:"debounce_ms"`
		DoubleMs   int `yaml:"double_ms"`
		HoldMs     int `yaml:"hold_ms"`
	} `yaml:"gestures"`
	// RPi configures the GPIO driver.
	RPi RPiConfig `yaml:"rpi"`
}

// RPiConfig is the `hardware.rpi:` section: pins are BCM numbers.
type RPiConfig struct {
	LED struct {
		Type      string `yaml:"type"` // rgb | ws2812
		Pins      []int  `yaml:"pins"` // r, g, b
		PWM       string `yaml:"pwm"`  // auto | hardware | software | off
		PWMHz     int    `yaml:"pwm_hz"`
		ActiveLow bool   `yaml:"active_low"`
		Pixels    int    `yaml:"pixels"`
	} `yaml:"led"`
	Button struct {
		Pin        *int `yaml:"pin"`
		PollMs     int  `yaml:"poll_ms"`
		ActiveHigh bool `yaml:"active_high"`
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
func openDevices(h HardwareConfig, lights []string, logf func(string, ...any)) (*devices, error) {
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
		d.byLight[l] = sim.New(max(h.Pixels, 1), nil)
		if !useGPIO {
			// Simulated input pins, kept off the pins hardware.rpi gives
			// the LED and the button, so a source made here works on the
			// Pi. On a Pi only the GPIO light has pins.
			d.inputs[l] = sim.NewInputs(h.RPi.reservedPins(), nil)
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

// statusLine keeps one line of the terminal showing each light's color.
type statusLine struct {
	mu    sync.Mutex
	w     io.Writer
	order []string
	shown map[string]string
}

// newStatusLine returns nil unless w is a terminal.
func newStatusLine(w io.Writer, lights []string) *statusLine {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	if fi, err := f.Stat(); err != nil || fi.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return &statusLine{w: w, order: lights, shown: map[string]string{}}
}

func (s *statusLine) show(light, state string, raw []hardware.RGB) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shown[light] = render.ANSI(raw) + " " + light + ": " + state
	line := "\r\x1b[K"
	for _, l := range s.order {
		if v, ok := s.shown[l]; ok {
			line += v + "   "
		}
	}
	fmt.Fprint(s.w, line)
}
