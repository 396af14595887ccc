package lumentest

import (
	"fmt"
	"os"
	"strconv"
	"testing"

	"golang.org/x/sys/unix"
)

// Tmpfs mounts a tmpfs of size bytes on a new directory and returns it,
// unmounted when tb ends: a small disk that a test can fill up. Mounting
// needs root (CAP_SYS_ADMIN); where it is refused tb stops as Unavailable
// says.
func Tmpfs(tb testing.TB, size int64) string {
	tb.Helper()
	dir := tb.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "size="+strconv.FormatInt(size, 10)+",mode=0700"); err != nil {
		Unavailable(tb, "a tmpfs mount", fmt.Errorf("mount a %d-byte tmpfs on %s (as root: %t): %w", size, dir, os.Geteuid() == 0, err))
	}
	tb.Cleanup(func() {
		// Lazily: a daemon killed at the test's end may still hold files.
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			tb.Errorf("unmount the tmpfs on %s: %v", dir, err)
		}
	})
	return dir
}
