package cli

import (
	"os/exec"
	"runtime"
	"syscall"
)

// runTied runs cmd, a child that must not outlive lumen, and returns its
// output. The kernel kills it when the thread that started it ends, so
// the goroutine keeps that thread until the child is done: a SIGKILLed
// lumen takes the thread, and the child, with it.
func runTied(cmd *exec.Cmd) ([]byte, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	return cmd.CombinedOutput()
}
