//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

// The guest only runs inside Wasmtime; on any other platform it says how
// to build it.
func main() {
	fmt.Fprintln(os.Stderr, "guest: build with GOOS=wasip1 GOARCH=wasm (task guest); it runs inside lumen's Wasmtime host")
	os.Exit(2)
}
