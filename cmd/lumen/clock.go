package main

import (
	"os"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// sysClock is the wall clock. A Raspberry Pi has no real-time clock: after
// a power cut it boots at 1970 or at its last shutdown time until NTP
// synchronizes it, so timers must not trust it before then.
type sysClock struct{ mode string }

func newClock(mode string) sysClock { return sysClock{mode: mode} }

func (sysClock) Now() time.Time { return time.Now().UTC() }

// Synced reports whether the time can be trusted: always with "trust",
// only when the kernel or systemd-timesyncd says so with "wait", and with
// "auto" unless this is a Raspberry Pi without a battery-backed clock.
func (c sysClock) Synced() bool {
	switch c.mode {
	case "trust":
		return true
	case "wait":
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
