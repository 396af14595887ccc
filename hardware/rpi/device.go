//go:build linux && (arm64 || arm)

package rpi

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"github.com/stianeikeland/go-rpio/v4"
	"golang.org/x/sys/unix"

	"github.com/lumen-home/lumen/hardware"
	"github.com/lumen-home/lumen/hardware/ws2812"
)

var _ hardware.Device = (*Device)(nil)

// Device is the LED and the button on the Board's pins.
type Device struct {
	board *Board
	cfg   Config

	mu     sync.Mutex // Show and Halt
	halted bool
	pins   [3]rpio.Pin // rgb: R, G, B
	drives [3]drive
	cycle  uint32   // hardware PWM cycle length
	shown  [3]uint8 // rgb values last set on the hardware and on/off channels
	buf    []byte   // ws2812: the SPI transfer

	soft     [3]bool // channels on software PWM
	softMu   sync.Mutex
	softWant softSchedule
	softWake chan struct{} // a new softWant, capacity 1

	edges    chan hardware.Edge
	stop     chan struct{}
	wg       sync.WaitGroup
	haltOnce sync.Once
	haltErr  error
}

// Device sets the pins of cfg up (cfg is validated first) and starts the
// button's polling and, if a channel needs it, software PWM. The LED starts
// dark. A Board has one Device; Halt it, or Close the Board, to stop it.
func (b *Board) Device(cfg Config) (*Device, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return nil, errors.New("rpi: the GPIO board is closed")
	case b.dev != nil:
		return nil, errors.New("rpi: the GPIO board already has a device")
	}
	d := &Device{
		board:    b,
		cfg:      cfg,
		softWake: make(chan struct{}, 1),
		edges:    make(chan hardware.Edge, 64),
		stop:     make(chan struct{}),
	}
	var err error
	switch cfg.LED.Type {
	case "ws2812":
		err = d.setupStrip(b)
	default:
		err = d.setupRGB(b)
	}
	if err != nil {
		return nil, err
	}
	if cfg.Button.Pin != noButton {
		pin := rpio.Pin(cfg.Button.Pin)
		b.save(cfg.Button.Pin, true)
		pin.Input()
		if cfg.Button.ActiveHigh {
			pin.PullDown()
		} else {
			pin.PullUp()
		}
		d.wg.Add(1)
		go d.poll(pin)
	}
	if d.soft != [3]bool{} {
		d.wg.Add(1)
		go d.runSoftPWM()
	}
	b.dev = d
	return d, nil
}

func (d *Device) setupRGB(b *Board) error {
	l := d.cfg.LED
	drives, err := assignDrives(l.PWM, l.Pins)
	if err != nil {
		return err
	}
	d.drives = drives
	clockHz, cycle := hardwarePWM(l.PWMHz)
	d.cycle = cycle
	clockSet := false
	for ch, p := range l.Pins {
		pin := rpio.Pin(p)
		d.pins[ch] = pin
		b.save(p, false)
		switch drives[ch] {
		case driveHardware:
			if !clockSet { // both PWM channels share the PWM clock
				rpio.SetFreq(pin, clockHz)
				clockSet = true
			}
			rpio.SetDutyCycle(pin, dutyLen(0, cycle, l.ActiveLow), cycle)
			pin.Mode(rpio.Pwm)
			b.pwm = true
		default:
			d.soft[ch] = drives[ch] == driveSoftware
			d.write(pin, pinLevel(false, l.ActiveLow))
			pin.Output()
		}
	}
	d.softWant = newSoftSchedule([3]uint8{}, d.soft, max(l.PWMHz, 1))
	return nil
}

// setupStrip starts SPI0 at ws2812.SPIHz for a strip on MOSI (BCM 10).
// SPI0 takes BCM 7–11, and the kernel's SPI driver must be off. Its clock
// derives from the core clock, which go-rpio takes to be 250 MHz (550 MHz
// on a Pi 4): a Pi 3 needs core_freq=250 in config.txt. go-rpio's
// SpiExchange feeds the FIFO one byte at a time, so the line may pause
// between bytes; the encoding holds up only if those pauses stay short.
// Untested on hardware: QEMU models no SPI.
func (d *Device) setupStrip(b *Board) error {
	for _, p := range spi0Pins {
		b.save(p, false)
	}
	if err := rpio.SpiBegin(rpio.Spi0); err != nil {
		return fmt.Errorf("rpi: start SPI0 for the ws2812 strip: %w (go-rpio needs root, and the kernel's SPI driver off: dtparam=spi=off)", err)
	}
	b.spi = true
	rpio.SpiSpeed(ws2812.SPIHz)
	rpio.SpiMode(0, 0)
	d.buf = make([]byte, 0, ws2812.EncodedLen(d.cfg.LED.Pixels))
	return d.showStrip(make([]hardware.RGB, d.cfg.LED.Pixels))
}

// Pixels implements hardware.LED: 1 for an RGB LED, the strip's length for
// a ws2812 strip.
func (d *Device) Pixels() int {
	if d.cfg.LED.Type == "ws2812" {
		return d.cfg.LED.Pixels
	}
	return 1
}

// Show implements hardware.LED.
func (d *Device) Show(frame []hardware.RGB) error {
	if len(frame) != d.Pixels() {
		return fmt.Errorf("rpi: a frame of %d pixels for an LED of %d", len(frame), d.Pixels())
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.halted {
		return errors.New("rpi: the device is halted")
	}
	return d.show(frame)
}

func (d *Device) show(frame []hardware.RGB) error {
	if d.cfg.LED.Type == "ws2812" {
		return d.showStrip(frame)
	}
	p := frame[0]
	levels := [3]uint8{p.R, p.G, p.B}
	activeLow := d.cfg.LED.ActiveLow
	for ch, v := range levels {
		if v == d.shown[ch] {
			continue
		}
		switch d.drives[ch] {
		case driveHardware:
			rpio.SetDutyCycle(d.pins[ch], dutyLen(v, d.cycle, activeLow), d.cycle)
		case driveOnOff:
			d.write(d.pins[ch], pinLevel(onOff(v), activeLow))
		}
	}
	d.shown = levels
	if d.soft != [3]bool{} {
		d.softMu.Lock()
		d.softWant = newSoftSchedule(levels, d.soft, d.cfg.LED.PWMHz)
		d.softMu.Unlock()
		select {
		case d.softWake <- struct{}{}:
		default: // already woken; it will read the latest
		}
	}
	return nil
}

// showStrip sends a frame down SPI0. go-rpio's SpiExchange overwrites the
// buffer with what it reads, so the frame is encoded afresh each time.
func (d *Device) showStrip(frame []hardware.RGB) error {
	d.buf = ws2812.Encode(d.buf[:0], frame)
	rpio.SpiExchange(d.buf)
	return nil
}

func (d *Device) write(pin rpio.Pin, high bool) {
	if high {
		pin.High()
	} else {
		pin.Low()
	}
}

// Edges implements hardware.Button: raw level changes, closed by Halt.
// Without a button it only closes.
func (d *Device) Edges() <-chan hardware.Edge { return d.edges }

// poll reads the button's level every Poll and sends its changes.
func (d *Device) poll(pin rpio.Pin) {
	defer d.wg.Done()
	det := edgeDetector{activeHigh: d.cfg.Button.ActiveHigh}
	tick := time.NewTicker(d.cfg.Button.Poll)
	defer tick.Stop()
	for {
		if e, ok := det.sample(pin.Read() == rpio.High, time.Now()); ok {
			select {
			case d.edges <- e:
			case <-d.stop:
				return
			}
		}
		select {
		case <-tick.C:
		case <-d.stop:
			return
		}
	}
}

// runSoftPWM toggles the software channels on the latest schedule, on a
// thread of its own with a 1 µs timer slack. Go's timers wake about a
// millisecond late for sub-millisecond sleeps, so it sleeps with
// clock_nanosleep to absolute CLOCK_MONOTONIC deadlines, and spins through
// waits shorter than spinBelow. A static schedule (every channel 0 or 255)
// sleeps until the next Show.
func (d *Device) runSoftPWM() {
	defer d.wg.Done()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1000, 0, 0, 0) // ns; best effort
	activeLow := d.cfg.LED.ActiveLow
	var s softSchedule
	load := func() {
		d.softMu.Lock()
		s = d.softWant
		d.softMu.Unlock()
		for ch, soft := range d.soft {
			if soft {
				d.write(d.pins[ch], pinLevel(s.lit[ch], activeLow))
			}
		}
	}
	load()
	for {
		if s.static() {
			select {
			case <-d.stop:
				return
			case <-d.softWake:
				load()
				continue
			}
		}
		start := monotonic()
		for ch, lit := range s.lit {
			if lit {
				d.write(d.pins[ch], pinLevel(true, activeLow))
			}
		}
		for _, st := range s.steps[:s.n] {
			sleepUntil(start + st.at)
			for ch, off := range st.off {
				if off {
					d.write(d.pins[ch], pinLevel(false, activeLow))
				}
			}
		}
		sleepUntil(start + s.period)
		select {
		case <-d.stop:
			return
		case <-d.softWake:
			load()
		default:
		}
	}
}

// spinBelow is the wait under which the software PWM spins rather than
// sleeps: a sleep overshoots by about this much.
const spinBelow = 20 * time.Microsecond

// monotonic is CLOCK_MONOTONIC as a duration.
func monotonic() time.Duration {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return time.Duration(ts.Nano())
}

// sleepUntil waits until CLOCK_MONOTONIC reaches t.
func sleepUntil(t time.Duration) {
	for {
		left := t - monotonic()
		if left <= 0 {
			return
		}
		if left < spinBelow {
			continue
		}
		ts := unix.NsecToTimespec(int64(t))
		if err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, unix.TIMER_ABSTIME, &ts, nil); err == nil {
			return
		}
		// EINTR: go round again
	}
}

// Halt implements hardware.Halter: it stops the polling and the software
// PWM, turns the LED off and closes Edges. The pins stay as they are until
// the Board's Close. Halting twice is a no-op.
func (d *Device) Halt() error {
	d.haltOnce.Do(func() {
		close(d.stop)
		d.wg.Wait()
		d.mu.Lock()
		defer d.mu.Unlock()
		d.halted = true
		off := make([]hardware.RGB, d.Pixels())
		if d.cfg.LED.Type == "ws2812" {
			d.haltErr = d.showStrip(off)
		} else {
			d.shown = [3]uint8{1, 1, 1} // force every channel to be written
			d.haltErr = d.show(off)
			for ch, soft := range d.soft { // the PWM goroutine is gone
				if soft {
					d.write(d.pins[ch], pinLevel(false, d.cfg.LED.ActiveLow))
				}
			}
		}
		close(d.edges)
	})
	return d.haltErr
}
