//go:build !linux

package lumentest

import (
	"errors"
	"syscall"
	"time"
)

func childAttr() *syscall.SysProcAttr { return nil }

var errNoProc = errors.New("lumentest: process status needs /proc (linux)")

// ProcStatusKB needs /proc.
func ProcStatusKB(int, ...string) (map[string]int64, error) { return nil, errNoProc }

// OpenFiles needs /proc.
func OpenFiles(int) (int, error) { return 0, errNoProc }

// CPUTime needs /proc.
func CPUTime(int) (time.Duration, error) { return 0, errNoProc }
