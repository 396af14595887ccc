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

// NeedGuest stops tb unless the tools' wasm guest is built
// ($LUMEN_GUEST_WASM, which the Taskfile sets): a failure in CI, a skip
// that says how to build it elsewhere.
func NeedGuest(tb testing.TB) {
	tb.Helper()
	if os.Getenv("LUMEN_GUEST_WASM") != "" {
		return
	}
	if os.Getenv("CI") != "" {
		tb.Fatal("LUMEN_GUEST_WASM is not set; run the tests with the Taskfile")
	}
	tb.Skip("the tools' wasm guest is not built: run the tests with the Taskfile (go run github.com/go-task/task/v3/cmd/task@v3.45.4 guest)")
}
