//go:build !unix

package mic

import "syscall"

func procAttr() *syscall.SysProcAttr { return nil }
