// Package qemutest tests the real GPIO driver (hardware/rpi) on an emulated
// Raspberry Pi 3B: QEMU's raspi3b machine models the BCM2837's GPIO block
// well enough for go-rpio to drive it.
//
// The test itself (qemu_test.go, build tag qemu) boots Debian's arm64
// kernel in qemu-system-aarch64 with an initramfs holding two static
// binaries: init/ (mounts /proc, /sys and /dev, then runs the guest) and
// guest/ (the real driver, the real renderer and the real gesture detector
// running the Script below, printing what it saw on the serial console).
// The host presses and releases the button by writing the GPSET0/GPCLR0
// registers over QEMU's qtest socket, and compares what the emulated board
// showed with what the simulator path (Simulate) gives for the same script.
//
// This file is the script and the line protocol, shared by the guest and
// the host, so both run exactly the same steps.
package qemutest

import (
	"fmt"
	"strings"
	"time"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/rpi"
	"github.com/lumen-home/lumen/messages"
)

// Prefix starts every line the guest (and its init) prints for the host;
// everything else on the console is the kernel's.
const Prefix = "LQ "

// Lines the guest prints that the host acts on.
const (
	LineInit   = "init"    // init started: the kernel has booted
	LineIdle   = "idle?"   // the guest wants the button released (pin high)
	LineReady  = "ready"   // the button is polled: play the Timeline now
	LineEnd    = "end"     // init: the guest exited, followed by its error
	VerdictOK  = "PASS"    // after "verdict "
	VerdictBad = "FAIL"    //
	Verdict    = "verdict" // "verdict PASS" or "verdict FAIL"
)

// Config is the driver configuration under test: an RGB LED on the default
// pins (BCM 17, 27, 22) without PWM, which QEMU does not model, so each
// channel is on iff its value is at least 128; the button on BCM 4,
// pressed = low, polled every millisecond.
func Config() rpi.Config {
	c := rpi.Config{LED: rpi.LEDConfig{PWM: "off"}}
	if err := c.Validate(); err != nil {
		panic(err) // a constant configuration
	}
	return c
}

// SpectatorPin is a pin the device does not use. The guest drives it (and
// the green LED pin) high as an output before it sets the device up, and
// checks that Close leaves it, and puts the green pin back, that way.
const SpectatorPin = 5

// States are the light states the guest shows one after the other. Colors
// go through the renderer (gamma 2.2), so amber's 150 green is dark.
var States = []messages.State{
	{Name: "red", R: messages.Num(255), G: messages.Num(0), B: messages.Num(0)},
	{Name: "green", R: messages.Num(0), G: messages.Num(255), B: messages.Num(0)},
	{Name: "blue", R: messages.Num(0), G: messages.Num(0), B: messages.Num(255)},
	{Name: "white", R: messages.Num(255), G: messages.Num(255), B: messages.Num(255)},
	{Name: "amber", R: messages.Num(255), G: messages.Num(150), B: messages.Num(20)},
	{Name: "cyan", R: messages.Expr("hsv(180,1,1)"), G: messages.Expr("hsv(180,1,1)"), B: messages.Expr("hsv(180,1,1)")},
	{Name: "magenta", R: messages.Num(230), G: messages.Num(40), B: messages.Num(200)},
	{Name: "off", R: messages.Num(0), G: messages.Num(0), B: messages.Num(0)},
}

// Press is one press of the button: held for Hold, then released for
// Then before the next press.
type Press struct {
	Hold, Then time.Duration
}

// Presses are what the host does to the button once the guest is ready: a
// click, a double click, and a hold (then its release). The margins are
// hundreds of milliseconds against the default gesture timings (debounce
// 20 ms, double window 300 ms, hold 800 ms), far more than the emulated
// board's polling jitter.
var Presses = []Press{
	{Hold: 100 * time.Millisecond, Then: 700 * time.Millisecond},  // click
	{Hold: 100 * time.Millisecond, Then: 150 * time.Millisecond},  // double, first half
	{Hold: 100 * time.Millisecond, Then: 700 * time.Millisecond},  // double, second half
	{Hold: 1300 * time.Millisecond, Then: 100 * time.Millisecond}, // hold, then release
}

// TimedEdge is a raw edge at an offset from the first press.
type TimedEdge struct {
	Down bool
	At   time.Duration
}

// Timeline is Presses as edges.
func Timeline() []TimedEdge {
	var out []TimedEdge
	var at time.Duration
	for _, p := range Presses {
		out = append(out, TimedEdge{Down: true, At: at})
		at += p.Hold
		out = append(out, TimedEdge{Down: false, At: at})
		at += p.Then
	}
	return out
}

// Pattern is which channels of c are lit without PWM (value >= 128), as
// "R-B": a letter for a lit channel, "-" for a dark one.
func Pattern(c hardware.RGB) string {
	return PatternOf([3]bool{c.R >= 128, c.G >= 128, c.B >= 128})
}

// PatternOf writes lit channels (R, G, B) as Pattern does.
func PatternOf(lit [3]bool) string {
	b := []byte("---")
	for i, on := range lit {
		if on {
			b[i] = "RGB"[i]
		}
	}
	return string(b)
}

// Hex writes c as #rrggbb.
func Hex(c hardware.RGB) string { return fmt.Sprintf("#%02x%02x%02x", c.R, c.G, c.B) }

// LEDLine is what the guest prints after showing a state: the frame it
// gave the driver and the pins read back.
type LEDLine struct {
	State string
	Out   string // Hex of the frame shown
	Pins  string // Pattern read back from the GPIO level registers
}

func (l LEDLine) String() string {
	return fmt.Sprintf("led %s out=%s pins=%s", l.State, l.Out, l.Pins)
}

// ParseLED reads an LEDLine (without Prefix).
func ParseLED(s string) (LEDLine, bool) {
	var l LEDLine
	if _, err := fmt.Sscanf(s, "led %s out=%s pins=%s", &l.State, &l.Out, &l.Pins); err != nil {
		return l, false
	}
	return l, true
}

// GestureLine is a gesture the guest's detector decided, at an offset from
// the first edge it saw.
func GestureLine(kind string, at time.Duration) string {
	return fmt.Sprintf("gesture %s +%dms", kind, at.Milliseconds())
}

// ParseGesture reads a GestureLine.
func ParseGesture(s string) (kind string, ms int, ok bool) {
	if !strings.HasPrefix(s, "gesture ") {
		return "", 0, false
	}
	_, err := fmt.Sscanf(s, "gesture %s +%dms", &kind, &ms)
	return kind, ms, err == nil
}

// EdgeLine is a raw edge the guest's driver reported.
func EdgeLine(down bool, at time.Duration) string {
	dir := "up"
	if down {
		dir = "down"
	}
	return fmt.Sprintf("edge %s +%dms", dir, at.Milliseconds())
}
