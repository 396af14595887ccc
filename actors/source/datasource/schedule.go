package datasource

import (
	"hash/fnv"
	"time"

	"github.com/lumen-home/lumen/internal/splitmix"
)

// Scheduling. A polled source runs once per slot: the next slot is the
// last run plus the interval, moved by a jitter of at most ±JitterPercent
// of the interval so that sources with the same interval (and many lights)
// do not all call out at the same instant. The jitter is a hash of a
// per-source seed and of the last run's time: the same journal gives the
// same schedule on every replay and after every restart.

// JitterPercent bounds the jitter, in percent of the interval.
const JitterPercent = 10

// Backoff bounds: the first retry after a failure comes after
// min(interval, BackoffBase), each further consecutive failure doubles the
// delay, up to max(interval, BackoffCap). A 60 s source retries after 5 s,
// 10 s, 20 s … then every 15 min; an hourly one after 5 s, 10 s … then
// hourly: a failing source never calls out more often than every
// BackoffBase after the first retries, and an hourly source does not wait
// an hour to recover from a blip.
const (
	BackoffBase = 5 * time.Second
	BackoffCap  = 15 * time.Minute
)

// Seed returns the jitter seed of a source of a light: FNV-1a of both
// names, stable forever.
func Seed(light, source string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(light + "\x00" + source))
	return h.Sum64()
}

// mix is one SplitMix64 draw from z: fixed by its definition, so a
// schedule never changes with a Go release.
func mix(z uint64) uint64 {
	r := splitmix.New(z)
	return r.Uint64()
}

// jitterSpan is the largest jitter of an interval.
func jitterSpan(iv time.Duration) time.Duration { return iv * JitterPercent / 100 }

// Jitter returns the offset of the slot after lastRun, within ±10% of the
// interval (both ends included).
func Jitter(def Def, lastRun time.Time, seed uint64) time.Duration {
	span := int64(jitterSpan(def.Interval()))
	if span <= 0 {
		return 0
	}
	h := mix(seed ^ mix(uint64(lastRun.UnixNano())))
	return time.Duration(int64(h%uint64(2*span+1)) - span)
}

// Next returns when a polled source that last ran at lastRun runs next:
// lastRun + interval ± jitter. A source that never ran (zero lastRun) runs
// at once: Next returns the zero Time. A pushed source has no schedule:
// Next returns the zero Time too, and Due is always false.
func Next(def Def, lastRun time.Time, seed uint64) time.Time {
	if !def.Polled() || lastRun.IsZero() {
		return time.Time{}
	}
	return lastRun.Add(def.Interval() + Jitter(def, lastRun, seed))
}

// Due reports whether a polled source that last ran at lastRun (its last
// journaled run) may run at now. After a restart in the middle of an
// interval it is false until the earliest slot (lastRun + 90% of the
// interval), so that the source does not run, and fire, twice for one
// slot; Next(def, lastRun, seed) is never earlier. A source that never ran
// is due at once. If lastRun is more than an interval after now, the
// clock went back: the source is due rather than silent until the clock
// catches up.
func Due(def Def, lastRun, now time.Time) bool {
	if !def.Polled() {
		return false
	}
	if lastRun.IsZero() {
		return true
	}
	iv := def.Interval()
	if lastRun.After(now.Add(iv)) {
		return true
	}
	return !now.Before(lastRun.Add(iv - jitterSpan(iv)))
}

// Backoff returns how long to wait before retrying after failures
// consecutive failures (0 for none), for a source with this interval. See
// BackoffBase and BackoffCap.
func Backoff(failures int, interval time.Duration) time.Duration {
	if failures <= 0 {
		return 0
	}
	d := BackoffBase
	if interval > 0 && interval < d {
		d = interval
	}
	limit := max(interval, BackoffCap)
	for i := 1; i < failures && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}
