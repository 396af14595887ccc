//go:build unix

package plugins

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockCache takes the cache's compile lock (a flock on its directory,
// which leaves no file behind), waiting for another process's compile to
// end, until stop is closed (ErrClosed). The kernel drops the lock of a
// process that dies. A cache that does not exist yet is not locked (nor
// made before there is something to keep in it): only a first start ever
// compiles there, and it writes the directory when it is done.
func lockCache(dir string, stop <-chan struct{}) (unlock func(), err error) {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return func() {}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("plugins: module cache: %w", err)
	}
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		if err == nil {
			return func() { _ = f.Close() }, nil
		}
		if !errors.Is(err, unix.EWOULDBLOCK) && !errors.Is(err, unix.EINTR) {
			f.Close()
			return nil, fmt.Errorf("plugins: module cache lock: %w", err)
		}
		select {
		case <-stop:
			f.Close()
			return nil, ErrClosed
		case <-time.After(100 * time.Millisecond):
		}
	}
}
