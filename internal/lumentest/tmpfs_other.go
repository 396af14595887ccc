//go:build !linux

package lumentest

import (
	"errors"
	"testing"
)

// Tmpfs needs Linux: elsewhere tb stops as Unavailable says.
func Tmpfs(tb testing.TB, size int64) string {
	tb.Helper()
	Unavailable(tb, "a tmpfs mount", errors.New("tmpfs mounts need Linux"))
	return ""
}
