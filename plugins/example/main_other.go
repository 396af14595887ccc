//go:build !wasip1

package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "example: build with GOOS=wasip1 GOARCH=wasm; it is a plugin run by lumen's Wasmtime host")
	os.Exit(2)
}
