//go:build !linux

package bench

import (
	"errors"
	"syscall"
)

func childAttr() *syscall.SysProcAttr { return nil }

func procStatusKB(int, ...string) (map[string]int64, error) {
	return nil, errors.New("process status needs /proc (linux)")
}
