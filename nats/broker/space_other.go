//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package broker

import (
	"errors"
	"fmt"
)

// FreeBytes cannot tell where statfs is unavailable: the budget is then
// the default and inputs are never refused for want of space.
func FreeBytes(dir string) (int64, error) {
	return 0, fmt.Errorf("broker: free space of %s: %w", dir, errors.ErrUnsupported)
}
