package lumentest

import (
	"os"
	"testing"
)

// Unavailable stops tb because what it needs (FUSE, a tmpfs mount: root)
// cannot be had here: a failure when the CI environment variable is set,
// where the test must run, and a skip that says why elsewhere.
func Unavailable(tb testing.TB, what string, err error) {
	tb.Helper()
	if os.Getenv("CI") != "" {
		tb.Fatalf("%s is needed and not available on this CI machine: %v", what, err)
	}
	tb.Skipf("%s is not available, skipping: %v", what, err)
}
