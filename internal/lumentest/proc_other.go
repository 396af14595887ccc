//go:build !linux

package lumentest

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }
