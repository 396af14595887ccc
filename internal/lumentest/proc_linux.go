package lumentest

import "syscall"

// childAttr makes a daemon die with the test process, so none is left
// behind by a test binary that is killed or times out.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
