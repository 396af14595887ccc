//go:build linux && (arm64 || arm)

package rpi

import (
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/stianeikeland/go-rpio/v4"

	"github.com/lumen-home/lumen/hardware"
)

var _ hardware.Inputs = (*Inputs)(nil)

// Inputs are the Board's GPIO input pins besides the button: a PIR sensor,
// a reed switch. Like the button they are polled (every Button.Poll,
// default 1 ms); go-rpio's edge-detect registers are never used, because
// they hang some Pis.
type Inputs struct {
	board    *Board
	reserved map[int]string
	poll     time.Duration

	mu      sync.Mutex
	tracked levelTracker

	levels   chan hardware.Level
	stop     chan struct{}
	wg       sync.WaitGroup
	haltOnce sync.Once
}

// Inputs returns the Board's input pins, kept off the pins of cfg's LED and
// button (cfg is validated first), and starts polling them. A Board has one
// Inputs; Halt it, or Close the Board, to stop it.
func (b *Board) Inputs(cfg Config) (*Inputs, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	switch {
	case b.closed:
		return nil, errors.New("rpi: the GPIO board is closed")
	case b.inputs != nil:
		return nil, errors.New("rpi: the GPIO board already has its inputs")
	}
	in := &Inputs{board: b, reserved: cfg.Reserved(), poll: cfg.Button.Poll, tracked: levelTracker{},
		levels: make(chan hardware.Level, 64), stop: make(chan struct{})}
	b.inputs = in
	in.wg.Add(1)
	go in.run()
	return in, nil
}

// Reserved implements hardware.Inputs.
func (in *Inputs) Reserved() map[int]string { return maps.Clone(in.reserved) }

// Watch implements hardware.Inputs: the pin becomes an input with pull
// (the Board puts its function and pull back on Close).
func (in *Inputs) Watch(pin int, pull hardware.Pull) (bool, error) {
	if what, ok := in.reserved[pin]; ok {
		return false, fmt.Errorf("rpi: BCM %d is %s", pin, what)
	}
	var rp rpio.Pull
	switch pull {
	case hardware.PullUp:
		rp = rpio.PullUp
	case hardware.PullDown:
		rp = rpio.PullDown
	case hardware.PullNone, "":
		rp = rpio.PullOff
	default:
		return false, fmt.Errorf("rpi: pull %q is not up, down or none", pull)
	}
	b := in.board
	b.mu.Lock()
	if err := b.usable(pin); err != nil {
		b.mu.Unlock()
		return false, err
	}
	b.save(pin, true)
	p := rpio.Pin(pin)
	p.Input()
	p.Pull(rp)
	b.mu.Unlock()
	// The bias needs a moment to charge the line before the baseline is
	// read; go-rpio's Pull already waits its 150 cycles, this covers a
	// long wire.
	time.Sleep(time.Millisecond)
	high := p.Read() == rpio.High
	in.mu.Lock()
	in.tracked[pin] = high
	in.mu.Unlock()
	return high, nil
}

// Unwatch implements hardware.Inputs: the pin is no longer polled. It
// stays an input until the Board's Close puts it back.
func (in *Inputs) Unwatch(pin int) error {
	in.mu.Lock()
	defer in.mu.Unlock()
	delete(in.tracked, pin)
	return nil
}

// Levels implements hardware.Inputs.
func (in *Inputs) Levels() <-chan hardware.Level { return in.levels }

// run polls every watched pin each tick and sends their changes.
func (in *Inputs) run() {
	defer in.wg.Done()
	tick := time.NewTicker(in.poll)
	defer tick.Stop()
	var out []hardware.Level
	for {
		select {
		case <-tick.C:
		case <-in.stop:
			return
		}
		now := time.Now()
		out = out[:0]
		in.mu.Lock()
		for pin := range in.tracked {
			if l, ok := in.tracked.sample(pin, rpio.Pin(pin).Read() == rpio.High, now); ok {
				out = append(out, l)
			}
		}
		in.mu.Unlock()
		for _, l := range out {
			select {
			case in.levels <- l:
			case <-in.stop:
				return
			}
		}
	}
}

// Halt implements hardware.Halter: polling stops and Levels closes. The
// pins stay as they are until the Board's Close. Halting twice is a no-op.
func (in *Inputs) Halt() error {
	in.haltOnce.Do(func() {
		close(in.stop)
		in.wg.Wait()
		close(in.levels)
	})
	return nil
}
