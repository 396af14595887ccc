package datasource

import (
	"encoding/json"
	"time"
)

// A gpio source's result is the hardware actor's edge event
// (messages.GPIOEvent): {"pin":23,"level":1,"edge":"rising","at":"…"}.
// The hardware actor owns the pins, debounces them and publishes every
// change of a watched pin; a source stores and fires only on the edges it
// asked for.

// GPIOEdge is the pin, level and edge of a gpio result.
type GPIOEdge struct {
	Pin   int    `json:"pin"`
	Level int    `json:"level"`
	Edge  string `json:"edge"`
}

// Debounce is a gpio source's debounce window.
func (d Def) Debounce() time.Duration {
	if d.DebounceMs == nil {
		return DefaultDebounceMs * time.Millisecond
	}
	return time.Duration(*d.DebounceMs) * time.Millisecond
}

// WantsEdge reports whether a gpio source stores and fires on a change of
// its pin to high (rising) or low (falling).
func (d Def) WantsEdge(high bool) bool {
	switch d.Edge {
	case "both":
		return true
	case "falling":
		return !high
	default:
		return high
	}
}

// GPIOMatch reads an edge event and reports whether def wants it: the
// event is for def's pin and makes an edge def asked for. A malformed
// event is not wanted.
func GPIOMatch(def Def, payload []byte) bool {
	var e GPIOEdge
	if def.Kind() != TypeGPIO || def.Pin == nil || json.Unmarshal(payload, &e) != nil || e.Pin != *def.Pin {
		return false
	}
	return (e.Level == 0 || e.Level == 1) && def.WantsEdge(e.Level == 1)
}

// GPIOConflict checks a gpio source against the pins the hardware already
// uses (reserved: pin → what) and the gpio sources already defined. Two
// sources may watch one pin (e.g. one on rising, one on falling edges)
// when they agree on its pull and debounce, which the pin has once. A
// source replaces its own older definition, so one of the same name is
// no conflict. The error has CodeConflict.
func GPIOConflict(def Def, reserved map[int]string, others []Def) error {
	if def.Kind() != TypeGPIO || def.Pin == nil {
		return nil
	}
	pin := *def.Pin
	if what, ok := reserved[pin]; ok {
		return errorf(CodeConflict, "source %q: BCM %d is %s; wire the sensor to a free pin (e.g. BCM 23, 24 or 25) and use that one, or change hardware.rpi in lumen.yaml", def.Name, pin, what)
	}
	for _, o := range others {
		if o.Name == def.Name || o.Kind() != TypeGPIO || o.Pin == nil || *o.Pin != pin {
			continue
		}
		if o.Pull != def.Pull || o.Debounce() != def.Debounce() {
			return errorf(CodeConflict, "source %q: BCM %d is already watched by source %q with pull %s and debounce_ms %d; a pin has one pull and one debounce, so use the same (%s, %d) or another pin",
				def.Name, pin, o.Name, o.Pull, o.Debounce().Milliseconds(), o.Pull, o.Debounce().Milliseconds())
		}
	}
	return nil
}
