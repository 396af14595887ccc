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
	deadline := time.Now().Add(d)
	for !ok() {
		if time.Now().After(deadline) {
			tb.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
