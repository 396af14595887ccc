//go:build unix

package mic

import "syscall"

// procAttr puts arecord in a process group of its own: Ctrl-C in the
// terminal reaches only lumen, which cancels the recording, rather than
// arecord too, whose exit would end the recording as if the speech were
// over and send it.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }
