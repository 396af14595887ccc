//go:build wasip1

// Command example is a minimal plugin in plain Go (no JavaScript engine)
// that speaks Lumen's plugin ABI (plugins/README.md): it reads its call,
// logs, asks the time, fetches params.url when given, and answers
//
//	{"ok":true,"result":{"greeting":"hello, <params.name>","now":<ms>,"status":<HTTP status>}}
//
// Build it with GOOS=wasip1 GOARCH=wasm go build -o example.wasm ./plugins/example.
package main

import (
	"encoding/json"
	"unsafe"
)

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
	var call struct {
		Code   string `json:"code"` // unused: this plugin is its own code
		Params struct {
			Name string `json:"name"`
			URL  string `json:"url"`
		} `json:"params"`
	}
	if err := json.Unmarshal(in, &call); err != nil {
		reply(map[string]any{"ok": false, "error": "bad call: " + err.Error()})
		return
	}
	say("example: called for " + call.Params.Name)
	out := map[string]any{"greeting": "hello, " + call.Params.Name, "now": now()}
	if call.Params.URL != "" {
		req, _ := json.Marshal(map[string]any{"url": call.Params.URL, "method": "GET"})
		resp := make([]byte, fetch(unsafe.Pointer(&req[0]), int32(len(req))))
		if len(resp) > 0 {
			fetchRead(unsafe.Pointer(&resp[0]))
		}
		var r struct {
			Status int    `json:"status"`
			Error  string `json:"error"`
		}
		_ = json.Unmarshal(resp, &r)
		if r.Error != "" {
			reply(map[string]any{"ok": false, "error": "fetch: " + r.Error})
			return
		}
		out["status"] = r.Status
	}
	reply(map[string]any{"ok": true, "result": out})
}

func say(s string) { logLine(unsafe.Pointer(unsafe.StringData(s)), int32(len(s))) }

func reply(v any) {
	b, _ := json.Marshal(v)
	result(unsafe.Pointer(&b[0]), int32(len(b)))
}
