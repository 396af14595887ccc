package lumentest

import (
	"testing"
	"time"
)

// WaitFor polls ok until it holds, failing the test after d: for what
// Lumen does asynchronously (a source started after create_source
// answers, a restart, a stream catching up).
func WaitFor(tb testing.TB, d time.Duration, what string, ok func() bool) {
	tb.Helper()
	if !Within(d, ok) {
		tb.Fatalf("timed out waiting for %s", what)
	}
}

// Within polls ok for at most d and reports whether it came to hold: a
// wait that may end either way (a run that may or may not come).
func Within(d time.Duration, ok func() bool) bool {
	deadline := time.Now().Add(d)
	// From a millisecond, doubling to 50 ms: quick for what comes at
	// once, light on what a poll reads (a whole stream) for long waits.
	for pause := time.Millisecond; !ok(); pause = min(2*pause, 50*time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pause)
	}
	return true
}

// WaitEvery is WaitFor polling every pause, without backoff: for a
// benchmark that times the wait, whose figure a backoff would blur.
func WaitEvery(tb testing.TB, d, pause time.Duration, what string, ok func() bool) {
	tb.Helper()
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(pause)
	}
}
