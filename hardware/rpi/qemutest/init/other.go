//go:build !linux

// Command init is the /init of the emulated Pi's initramfs; it runs only
// on Linux.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "init: the emulated Pi's /init runs only on Linux")
	os.Exit(2)
}
