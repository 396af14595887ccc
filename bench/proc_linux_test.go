package bench

import "syscall"

// childAttr makes a child process die with the benchmark, so a daemon is
// never left behind by a test binary that is killed or times out.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
