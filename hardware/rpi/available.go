package rpi

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
)

// Available reports whether this machine looks like a Raspberry Pi whose
// GPIO go-rpio can drive: Linux, /dev/gpiomem or /dev/mem, and a
// device-tree model naming a Raspberry Pi. The Pi 5 family is left out: its
// GPIO sits behind the RP1 chip, which go-rpio does not know.
func Available() bool {
	return runtime.GOOS == "linux" && available("/")
}

// available is Available with the filesystem rooted at root.
func available(root string) bool {
	exists := func(p string) bool {
		_, err := os.Stat(filepath.Join(root, p))
		return err == nil
	}
	if !exists("dev/gpiomem") && !exists("dev/mem") {
		return false
	}
	model, err := os.ReadFile(filepath.Join(root, "proc/device-tree/model"))
	if err != nil || !bytes.Contains(model, []byte("Raspberry Pi")) {
		return false
	}
	for _, rp1 := range []string{"Raspberry Pi 5", "Raspberry Pi Compute Module 5"} {
		if bytes.Contains(model, []byte(rp1)) { // also the Pi 500
			return false
		}
	}
	return true
}
