package rpi

import (
	"time"
)

// Hardware PWM runs in mark-space mode: the pin is high for duty of every
// cycle clock ticks, and the PWM clock runs at PWMHz × cycle.
//
// The cycle is a multiple of 255 so that a channel value v maps to an exact
// duty of v × cycle/255; the multiple is the smallest that keeps the clock
// above what both clock sources can divide down to (19.2 MHz / 4095 on the
// Pi 1–3, 52 MHz / 4095 on the Pi 4 as go-rpio assumes it).
const minPWMClockHz = 13_000

// hardwarePWM returns the PWM clock frequency to give rpio.SetFreq and the
// cycle length (range) to give rpio.SetDutyCycle for a PWM of hz.
func hardwarePWM(hz int) (clockHz int, cycle uint32) {
	k := 1
	if hz*255 < minPWMClockHz {
		k = (minPWMClockHz + hz*255 - 1) / (hz * 255)
	}
	cycle = uint32(255 * k)
	return hz * int(cycle), cycle
}

// dutyLen is the duty (ticks high per cycle) that lights a channel at v of
// 255. An active-low channel is lit while the pin is low, so its duty is
// the rest of the cycle.
func dutyLen(v uint8, cycle uint32, activeLow bool) uint32 {
	d := uint32(v) * (cycle / 255)
	if activeLow {
		return cycle - d
	}
	return d
}

// onOff is whether an undimmed channel is lit at v: from half brightness on.
func onOff(v uint8) bool { return v >= 128 }

// pinLevel is the level (true = high) that makes a channel lit or dark.
func pinLevel(lit, activeLow bool) bool { return lit != activeLow }

// softSchedule is one period of software PWM over the software-driven
// channels: at the start of the period the channels in lit go on, then each
// step turns some off. Channels at 0 stay dark and channels at 255 stay lit
// without any step; a schedule with no steps needs no goroutine wake-ups.
type softSchedule struct {
	period time.Duration
	lit    [3]bool // lit at the start of the period
	steps  [3]softStep
	n      int // steps in use, in time order
}

// softStep turns the channels in off dark at at into the period.
type softStep struct {
	at  time.Duration
	off [3]bool
}

// newSoftSchedule plans the software channels (soft) showing levels at hz.
func newSoftSchedule(levels [3]uint8, soft [3]bool, hz int) softSchedule {
	s := softSchedule{period: time.Second / time.Duration(hz)}
	for ch, v := range levels {
		if !soft[ch] || v == 0 {
			continue
		}
		s.lit[ch] = true
		if v == 255 {
			continue
		}
		at := s.period * time.Duration(v) / 255
		i := 0
		for i < s.n && s.steps[i].at < at {
			i++
		}
		if i < s.n && s.steps[i].at == at {
			s.steps[i].off[ch] = true
			continue
		}
		copy(s.steps[i+1:s.n+1], s.steps[i:s.n])
		s.steps[i] = softStep{at: at}
		s.steps[i].off[ch] = true
		s.n++
	}
	return s
}

// static reports whether the schedule holds every pin at one level.
func (s softSchedule) static() bool { return s.n == 0 }

// litAt reports which channels are lit at t into a period, for tests and
// for a reader of the schedule.
func (s softSchedule) litAt(t time.Duration) [3]bool {
	lit := s.lit
	for _, st := range s.steps[:s.n] {
		if st.at > t {
			break
		}
		for ch, off := range st.off {
			if off {
				lit[ch] = false
			}
		}
	}
	return lit
}
