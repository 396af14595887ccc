package rpi

import (
	"strings"
	"testing"
	"time"
)

func TestValidateDefaults(t *testing.T) {
	var c Config
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	want := Config{
		LED:    LEDConfig{Type: "rgb", Pins: [3]int{17, 27, 22}, PWM: "auto", PWMHz: 500, Pixels: 1},
		Button: ButtonConfig{Pin: 4, Poll: time.Millisecond},
	}
	if c != want {
		t.Errorf("defaults:\n got %+v\nwant %+v", c, want)
	}
	const summary = "RGB LED on R=BCM 17 (software PWM) G=BCM 27 (software PWM) B=BCM 22 (software PWM) at 500 Hz; button on BCM 4 (pressed = low, polled every 1ms)"
	if got := c.String(); got != summary {
		t.Errorf("String:\n got %s\nwant %s", got, summary)
	}
	strip := Config{LED: LEDConfig{Type: "ws2812"}, Button: ButtonConfig{Pin: -1}}
	if err := strip.Validate(); err != nil {
		t.Fatal(err)
	}
	if strip.LED.Pixels != 1 || strip.Button.Pin != -1 {
		t.Errorf("ws2812 defaults: %+v", strip)
	}
	if got := strip.String(); got != "ws2812 strip of 1 pixels on SPI0 (MOSI BCM 10); no button" {
		t.Errorf("String: %s", got)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name  string
		given Config
		want  string // substring of the error; "" for valid
	}{
		{"hardware pwm pins", Config{LED: LEDConfig{Pins: [3]int{12, 13, 22}, PWM: "hardware"}}, ""},
		{"off at any frequency", Config{LED: LEDConfig{PWM: "off", PWMHz: 1_000_000}}, ""},
		{"active high button", Config{Button: ButtonConfig{Pin: 26, ActiveHigh: true, Poll: 5 * time.Millisecond}}, ""},
		{"strip of 60", Config{LED: LEDConfig{Type: "ws2812", Pixels: 60}}, ""},
		{"BCM 0 as a colour", Config{LED: LEDConfig{Pins: [3]int{0, 27, 22}}}, ""},

		{"unknown type", Config{LED: LEDConfig{Type: "apa102"}}, `rpi: led.type must be rgb or ws2812, not "apa102"`},
		{"pin above 27", Config{LED: LEDConfig{Pins: [3]int{17, 28, 22}}}, "rpi: led.pins[1] (G) is BCM 28; GPIO pins are BCM 0–27"},
		{"negative pin", Config{LED: LEDConfig{Pins: [3]int{-3, 27, 22}}}, "rpi: led.pins[0] (R) is BCM -3"},
		{"same pin twice", Config{LED: LEDConfig{Pins: [3]int{17, 17, 22}}}, "rpi: led.pins[0] (R) and led.pins[1] (G) are both BCM 17"},
		{"button on an LED pin", Config{Button: ButtonConfig{Pin: 22}}, "rpi: led.pins[2] (B) and button.pin are both BCM 22"},
		{"button pin out of range", Config{Button: ButtonConfig{Pin: 40}}, "rpi: button.pin is BCM 40"},
		{"bad pwm mode", Config{LED: LEDConfig{PWM: "fast"}}, `rpi: led.pwm must be auto, hardware, software or off, not "fast"`},
		{"rgb is one pixel", Config{LED: LEDConfig{Pixels: 3}}, "rpi: led.pixels is 3, but an rgb LED is one pixel"},
		{"pwm too fast", Config{LED: LEDConfig{PWMHz: 50_000}}, "rpi: led.pwm_hz must be 1–20000, not 50000"},
		{"negative pwm", Config{LED: LEDConfig{PWMHz: -1}}, "rpi: led.pwm_hz must be 1–20000, not -1"},
		{"software pwm too fast", Config{LED: LEDConfig{PWMHz: 5000}}, "rpi: led.pwm_hz 5000 is too fast for software PWM (at most 2000)"},
		{"fast hardware pwm with a software channel", Config{LED: LEDConfig{Pins: [3]int{12, 13, 22}, PWMHz: 5000}}, "too fast for software PWM"},
		{"hardware pwm on a shared channel", Config{LED: LEDConfig{Pins: [3]int{12, 18, 13}, PWM: "hardware"}}, "rpi: led.pwm hardware: BCM 12 (R) and BCM 18 (G) share PWM0"},
		{"hardware pwm without pwm pins", Config{LED: LEDConfig{PWM: "hardware"}}, "rpi: led.pwm hardware: none of BCM 17, 27, 22 has hardware PWM"},
		{"strip on SPI1", Config{LED: LEDConfig{Type: "ws2812", SPIBus: 1}}, "rpi: led.spi_bus is 1; go-rpio drives only SPI0"},
		{"strip too long", Config{LED: LEDConfig{Type: "ws2812", Pixels: 5000}}, "rpi: led.pixels must be 1–1024, not 5000"},
		{"negative strip", Config{LED: LEDConfig{Type: "ws2812", Pixels: -2}}, "rpi: led.pixels must be 1–1024, not -2"},
		{"button on MOSI with a strip", Config{LED: LEDConfig{Type: "ws2812"}, Button: ButtonConfig{Pin: 10}}, "rpi: SPI0 (BCM 7–11, for the ws2812 strip) and button.pin are both BCM 10"},
		{"poll too fast", Config{Button: ButtonConfig{Poll: time.Microsecond}}, "rpi: button.poll must be 100µs–1s, not 1µs"},
		{"poll too slow", Config{Button: ButtonConfig{Poll: time.Minute}}, "rpi: button.poll must be 100µs–1s, not 1m0s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := tt.given
			err := c.Validate()
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("want valid, got %v", err)
			case tt.want != "" && err == nil:
				t.Errorf("want an error with %q, got none", tt.want)
			case tt.want != "" && !strings.Contains(err.Error(), tt.want):
				t.Errorf("error %q\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

func TestValidateJoinsErrors(t *testing.T) {
	c := Config{LED: LEDConfig{Type: "rgb", PWM: "nope", Pins: [3]int{1, 1, 2}}, Button: ButtonConfig{Pin: 99}}
	err := c.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, "rpi: ") {
			t.Errorf("error line without the rpi: prefix: %q", line)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 3 {
		t.Errorf("want 3 errors (pin twice, pwm mode, button pin), got %d:\n%v", n, err)
	}
}

func TestAssignDrives(t *testing.T) {
	const (
		S = driveSoftware
		H = driveHardware
		O = driveOnOff
	)
	tests := []struct {
		name string
		mode string
		pins [3]int
		want [3]drive
		err  string
	}{
		{"auto without pwm pins", "auto", [3]int{17, 27, 22}, [3]drive{S, S, S}, ""},
		{"auto with both channels", "auto", [3]int{12, 13, 22}, [3]drive{H, H, S}, ""},
		{"auto alt pins", "auto", [3]int{17, 18, 19}, [3]drive{S, H, H}, ""},
		{"auto shared channel: first pin wins", "auto", [3]int{18, 12, 13}, [3]drive{H, S, H}, ""},
		{"auto three pwm pins", "auto", [3]int{12, 13, 19}, [3]drive{H, H, S}, ""},
		{"software", "software", [3]int{12, 13, 22}, [3]drive{S, S, S}, ""},
		{"off", "off", [3]int{12, 13, 22}, [3]drive{O, O, O}, ""},
		{"hardware", "hardware", [3]int{5, 19, 12}, [3]drive{S, H, H}, ""},
		{"hardware shared", "hardware", [3]int{13, 19, 12}, [3]drive{}, "share PWM1"},
		{"hardware none", "hardware", [3]int{5, 6, 26}, [3]drive{}, "none of BCM 5, 6, 26"},
		{"unknown", "pdm", [3]int{5, 6, 26}, [3]drive{}, "led.pwm must be"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := assignDrives(tt.mode, tt.pins)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("want error with %q, got %v", tt.err, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestPWMChannel(t *testing.T) {
	for pin := 0; pin <= 27; pin++ {
		ch, ok := pwmChannel(pin)
		switch pin {
		case 12, 18:
			if !ok || ch != 0 {
				t.Errorf("BCM %d: got %d %v, want PWM0", pin, ch, ok)
			}
		case 13, 19:
			if !ok || ch != 1 {
				t.Errorf("BCM %d: got %d %v, want PWM1", pin, ch, ok)
			}
		default:
			if ok {
				t.Errorf("BCM %d has no hardware PWM, got channel %d", pin, ch)
			}
		}
	}
}
