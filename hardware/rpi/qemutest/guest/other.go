//go:build !(linux && arm64)

// Command lumen-guest runs inside the emulated Pi (see package qemutest);
// it is built only for linux/arm64.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "lumen-guest runs only inside the emulated Pi (linux/arm64)")
	os.Exit(2)
}
