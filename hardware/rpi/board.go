//go:build linux && (arm64 || arm)

package rpi

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"github.com/stianeikeland/go-rpio/v4"
)

// open guards go-rpio's globals: one Board at a time per process.
var (
	openMu sync.Mutex
	isOpen bool
)

// Board is the Pi's GPIO, mapped once. It remembers every pin it changes
// and puts it back on Close.
type Board struct {
	mu     sync.Mutex
	closed bool
	fsel   []uint32 // read-only view of the GPIO registers, for pin functions
	fselB  []byte   // its mapping, to unmap
	saved  []savedPin
	dev    *Device
	inputs *Inputs
	spi    bool // SPI0 begun
	pwm    bool // the PWM peripheral used
}

// savedPin is a pin as the Board found it.
type savedPin struct {
	pin  int
	fn   PinFunc
	high bool
	pull rpio.Pull // rpio.PullNone: not changed by us, or unreadable
}

// Open maps the GPIO registers (go-rpio's rpio.Open, which needs root for
// /dev/mem) and returns the Board. A second Open before Close is an error.
func Open() (*Board, error) {
	openMu.Lock()
	defer openMu.Unlock()
	if isOpen {
		return nil, errors.New("rpi: the GPIO board is already open in this process; Close it first")
	}
	if err := rpio.Open(); err != nil {
		return nil, fmt.Errorf("rpi: map the GPIO registers: %w (go-rpio needs /dev/mem: run as root)", err)
	}
	b := &Board{}
	if err := b.mapFsel(); err != nil {
		_ = rpio.Close()
		return nil, err
	}
	isOpen = true
	return b, nil
}

// mapFsel maps the GPIO block read-only a second time, the way go-rpio
// found it, because go-rpio cannot read a pin's function back and Close
// must restore it.
func (b *Board) mapFsel() error {
	ranges, _ := os.ReadFile("/proc/device-tree/soc/ranges")
	f, err := os.OpenFile("/dev/mem", os.O_RDONLY|os.O_SYNC, 0)
	offset := periphBase(ranges) + gpioOffset
	if os.IsPermission(err) {
		f, err = os.OpenFile("/dev/gpiomem", os.O_RDONLY|os.O_SYNC, 0)
		offset = 0
	}
	if err != nil {
		return fmt.Errorf("rpi: read the GPIO registers: %w", err)
	}
	defer f.Close()
	mem, err := syscall.Mmap(int(f.Fd()), offset, 4096, syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return fmt.Errorf("rpi: map the GPIO registers at %#x: %w", offset, err)
	}
	b.fselB = mem
	b.fsel = unsafe.Slice((*uint32)(unsafe.Pointer(&mem[0])), len(mem)/4)
	return nil
}

// Func reads a pin's function, e.g. to check that Close restored it.
func (b *Board) Func(pin int) (PinFunc, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(pin); err != nil {
		return 0, err
	}
	return b.funcOf(pin), nil
}

// Level reads a pin's level (true = high) through go-rpio.
func (b *Board) Level(pin int) (bool, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if err := b.usable(pin); err != nil {
		return false, err
	}
	return rpio.Pin(pin).Read() == rpio.High, nil
}

func (b *Board) usable(pin int) error {
	if b.closed {
		return errors.New("rpi: the GPIO board is closed")
	}
	if pin < 0 || pin > maxBCMPin {
		return fmt.Errorf("rpi: BCM %d is not a GPIO pin (0–%d)", pin, maxBCMPin)
	}
	return nil
}

func (b *Board) funcOf(pin int) PinFunc { return decodeFunc(b.fsel[fselReg(pin)], pin) }

// save records a pin's state before its first change; with pull it also
// records the pull, which Close then restores.
func (b *Board) save(pin int, pull bool) {
	for i, s := range b.saved {
		if s.pin == pin {
			if pull && s.pull == rpio.PullNone {
				b.saved[i].pull = originalPull(pin)
			}
			return
		}
	}
	s := savedPin{pin: pin, fn: b.funcOf(pin), high: rpio.Pin(pin).Read() == rpio.High, pull: rpio.PullNone}
	if pull {
		s.pull = originalPull(pin)
	}
	b.saved = append(b.saved, s)
}

// originalPull is a pin's pull before we change it: read back on the Pi 4;
// the earlier SoCs cannot say, so it is their reset default, pull-up for
// BCM 0–8 and pull-down above.
func originalPull(pin int) rpio.Pull {
	if p := rpio.Pin(pin).ReadPull(); p != rpio.PullNone {
		return p
	}
	if pin <= 8 {
		return rpio.PullUp
	}
	return rpio.PullDown
}

// rpioModes maps a PinFunc to the go-rpio mode that selects it.
var rpioModes = [...]rpio.Mode{
	FuncInput: rpio.Input, FuncOutput: rpio.Output,
	FuncAlt0: rpio.Alt0, FuncAlt1: rpio.Alt1, FuncAlt2: rpio.Alt2, FuncAlt3: rpio.Alt3, FuncAlt4: rpio.Alt4, FuncAlt5: rpio.Alt5,
}

// Close halts the Device and the Inputs, if any, ends SPI, stops the PWM peripheral if it
// was used, puts every pin it changed back to its function (and output
// level, and pull), and unmaps the registers. Closing twice is a no-op.
func (b *Board) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	dev, inputs := b.dev, b.inputs
	b.mu.Unlock()
	var errs []error
	if dev != nil {
		if err := dev.Halt(); err != nil {
			errs = append(errs, err)
		}
	}
	if inputs != nil {
		if err := inputs.Halt(); err != nil {
			errs = append(errs, err)
		}
	}

	b.mu.Lock()
	defer b.mu.Unlock()
	if b.spi {
		rpio.SpiEnd(rpio.Spi0)
	}
	if b.pwm {
		rpio.StopPwm()
	}
	for i := len(b.saved) - 1; i >= 0; i-- {
		s := b.saved[i]
		p := rpio.Pin(s.pin)
		if s.fn == FuncOutput {
			if s.high {
				p.High()
			} else {
				p.Low()
			}
		}
		p.Mode(rpioModes[s.fn])
		if s.pull != rpio.PullNone {
			p.Pull(s.pull)
		}
	}
	b.saved = nil
	if err := syscall.Munmap(b.fselB); err != nil {
		errs = append(errs, fmt.Errorf("rpi: unmap the GPIO registers: %w", err))
	}
	b.fsel, b.fselB = nil, nil
	if err := rpio.Close(); err != nil {
		errs = append(errs, fmt.Errorf("rpi: unmap go-rpio's registers: %w", err))
	}
	b.closed = true
	openMu.Lock()
	isOpen = false
	openMu.Unlock()
	return errors.Join(errs...)
}
