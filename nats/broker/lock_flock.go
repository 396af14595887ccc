//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package broker

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// lockName is the file in DataDir that an exclusive flock guards. The
// server itself does not lock its store, and two servers writing one store
// would corrupt it.
const lockName = "lumen.lock"

// dirLock is an exclusive, advisory lock on a data directory. The kernel
// drops it when the process dies, so a crash never leaves a stale lock.
type dirLock struct {
	f *os.File
}

func lockDir(dir string) (*dirLock, error) {
	path := filepath.Join(dir, lockName)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("broker: open lock file: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("broker: data directory %s is in use by another running server: stop it or choose another directory (%w)", dir, ErrDirInUse)
		}
		return nil, fmt.Errorf("broker: lock data directory %s: %w", dir, err)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() {
	if l == nil || l.f == nil {
		return
	}
	// Closing the file drops the flock; the file stays so that locking
	// never races with its removal.
	l.f.Close()
	l.f = nil
}

// InUse reports whether a running server holds the data directory.
func InUse(dir string) bool {
	l, err := lockDir(dir)
	if err != nil {
		return errors.Is(err, ErrDirInUse)
	}
	l.release()
	return false
}
