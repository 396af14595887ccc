//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package broker

import (
	"fmt"

	"golang.org/x/sys/unix"
)

// FreeBytes is the space dir's file system has available to this
// process's user (statfs's f_bavail: without the blocks kept for root,
// as nats-server counts it too).
func FreeBytes(dir string) (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, fmt.Errorf("broker: free space of %s: %w", dir, err)
	}
	// The fields' types differ between systems.
	return int64(st.Bavail) * int64(st.Bsize), nil
}
