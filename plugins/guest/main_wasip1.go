//go:build wasip1

// Command guest is the JavaScript engine of Lumen's custom tools: goja,
// compiled to wasm (GOOS=wasip1 GOARCH=wasm) and run by the host in
// package plugins, a fresh instance per call. It speaks the ABI in
// plugins/README.md: it reads its call, runs the code, writes its reply
// and exits.
package main

import "unsafe"

//go:wasmimport lumen call_len
func callLen() int32

//go:wasmimport lumen call_read
func callRead(p unsafe.Pointer)

//go:wasmimport lumen result
func result(p unsafe.Pointer, n int32)

//go:wasmimport lumen fetch
func fetch(p unsafe.Pointer, n int32) int32

//go:wasmimport lumen fetch_read
func fetchRead(p unsafe.Pointer)

//go:wasmimport lumen log
func logLine(p unsafe.Pointer, n int32)

//go:wasmimport lumen now
func now() int64

func main() {
	in := make([]byte, callLen())
	if len(in) > 0 {
		callRead(unsafe.Pointer(&in[0]))
	}
	out := run(in, wasmHost{})
	result(unsafe.Pointer(unsafe.SliceData(out)), int32(len(out)))
}

// wasmHost is the host seen through the imports.
type wasmHost struct{}

func (wasmHost) Fetch(req []byte) []byte {
	n := fetch(unsafe.Pointer(unsafe.SliceData(req)), int32(len(req)))
	resp := make([]byte, n)
	if n > 0 {
		fetchRead(unsafe.Pointer(&resp[0]))
	}
	return resp
}

func (wasmHost) Log(line string) {
	logLine(unsafe.Pointer(unsafe.StringData(line)), int32(len(line)))
}

func (wasmHost) Now() int64 { return now() }
