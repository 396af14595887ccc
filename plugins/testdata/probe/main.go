//go:build wasip1

// Command probe is a test guest that looks for a way out of the sandbox:
// it reports what WASI shows it (arguments, environment, files, the
// network: it dials params.dial) in its result, and writes to stdout and stderr.
package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"unsafe"
)

//go:wasmimport lumen call_len
func callLen() int32

//go:wasmimport lumen call_read
func callRead(p unsafe.Pointer)

//go:wasmimport lumen result
func result(p unsafe.Pointer, n int32)

func main() {
	in := make([]byte, callLen())
	callRead(unsafe.Pointer(&in[0]))
	var call struct {
		Params struct {
			Dial string `json:"dial"`
		} `json:"params"`
	}
	_ = json.Unmarshal(in, &call)
	fmt.Println("to stdout")
	fmt.Fprintln(os.Stderr, "to stderr")
	out := map[string]any{"args": os.Args, "env": os.Environ()}
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	var files []string
	for _, p := range []string{"/etc/passwd", "/", ".", "/proc/self/environ"} {
		if _, err := os.ReadFile(p); err == nil {
			files = append(files, p)
		}
		if _, err := os.ReadDir(p); err == nil {
			files = append(files, p+" (dir)")
		}
	}
	out["files"] = files
	_, err := os.Create("/tmp/escape")
	out["create_ok"] = err == nil
	_, err = net.Dial("tcp", call.Params.Dial)
	out["dial"] = errText(err)
	wd, _ := os.Getwd()
	out["wd"] = wd
	b, _ := json.Marshal(map[string]any{"ok": true, "result": out})
	result(unsafe.Pointer(&b[0]), int32(len(b)))
}
