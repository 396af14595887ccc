//go:build linux

// Command init is the /init of the emulated Pi's initramfs. It mounts
// /proc, /sys and /dev, runs /lumen-guest (which cannot be /init itself:
// go-rpio reads /proc/device-tree/soc/ranges in its package init, before
// main could mount /proc), prints "LQ end" with how the guest exited, and
// powers the machine off. The host stops QEMU on "LQ end", since the
// raspi3b machine models neither reset nor power-off.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// The lines for the host: qemutest.Prefix with qemutest.LineInit and
// qemutest.LineEnd. Spelled out so that init stays small (qemutest brings
// in the renderer).
const (
	lineInit = "LQ init"
	lineEnd  = "LQ end"
)

func main() {
	for _, m := range []struct{ src, dir, fstype string }{
		{"proc", "/proc", "proc"},
		{"sysfs", "/sys", "sysfs"},
		{"devtmpfs", "/dev", "devtmpfs"},
	} {
		_ = os.MkdirAll(m.dir, 0o755)
		if err := syscall.Mount(m.src, m.dir, m.fstype, 0, ""); err != nil && err != syscall.EBUSY {
			fmt.Printf("%s: mount %s: %v\n", lineInit, m.dir, err)
		}
	}
	fmt.Println(lineInit)
	cmd := exec.Command("/lumen-guest")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	err := cmd.Run()
	fmt.Println(lineEnd, err)
	syscall.Sync()
	_ = syscall.Reboot(syscall.LINUX_REBOOT_CMD_POWER_OFF)
	for { // init must not exit: the kernel would panic
		time.Sleep(time.Hour)
	}
}
