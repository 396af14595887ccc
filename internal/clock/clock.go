// Package clock is the one clock of Lumen, low enough that every layer
// may take it: the time, whether it can be trusted yet, timers, tickers
// and waits. Code that reads or waits for time takes a Clock instead of
// calling time.Now, time.AfterFunc or time.NewTicker, so that tests move
// time with clocktest instead of sleeping, and so that only a
// synchronized clock fires the light's durable timers. What paces the
// machine's own work (a network's quiet window, a retry's backoff, a
// buffer's drain, a round of journal reading) stays on the wall clock: a
// clock a test or an eval case holds still must not stop it.
package clock

import (
	"fmt"
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Clock is the time as the actors see it.
type Clock interface {
	// Now is the current time.
	Now() time.Time
	// Synced reports whether Now can be trusted: a Raspberry Pi has no
	// real-time clock, so after a power cut it boots at 1970 or at its
	// last shutdown until NTP synchronizes it, and timers must wait.
	Synced() bool
	// AfterFunc calls f in its own goroutine once d has passed.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc.
type Timer interface {
	// Stop prevents the call if it has not run yet, and reports whether
	// it did.
	Stop() bool
}

// Modes of System.
const (
	// Auto trusts the clock unless this is a Raspberry Pi without a
	// battery-backed clock that is not synchronized yet.
	Auto = "auto"
	// Trust always trusts the clock.
	Trust = "trust"
	// Wait trusts the clock only once the kernel or systemd-timesyncd
	// says it is synchronized.
	Wait = "wait"
)

// ParseMode checks a mode given by the operator.
func ParseMode(mode string) error {
	switch mode {
	case Auto, Trust, Wait:
		return nil
	}
	return fmt.Errorf("clock: mode must be %s, %s or %s, not %q", Auto, Trust, Wait, mode)
}

// System is the machine's wall clock, trusted as mode says (ParseMode;
// anything else is Auto).
func System(mode string) Clock { return system{mode: mode} }

type system struct{ mode string }

func (system) Now() time.Time { return time.Now() }

func (system) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

func (c system) Synced() bool {
	switch c.mode {
	case Trust:
		return true
	case Wait:
		return kernelSynced()
	}
	if kernelSynced() {
		return true
	}
	model, err := os.ReadFile("/proc/device-tree/model")
	if err != nil || !strings.Contains(string(model), "Raspberry Pi") {
		return true
	}
	_, err = os.Stat("/dev/rtc0")
	return err == nil
}

func kernelSynced() bool {
	if _, err := os.Stat("/run/systemd/timesync/synchronized"); err == nil {
		return true
	}
	var tx unix.Timex
	state, err := unix.Adjtimex(&tx)
	return err == nil && state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0
}
