package plugins_test

import (
	"strings"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/plugins"
)

// With CheckCommand, a guest that cannot serve a call fails to load, with
// why, and one that can loads as usual.
func TestCheckCommand(t *testing.T) {
	wat := func(body string) []byte {
		t.Helper()
		b, err := wasmtime.Wat2Wasm("(module " + body + ")")
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	tests := []struct {
		name string
		wasm []byte
		want string // "" loads
	}{
		{"example", exampleWasm, ""},
		{"a tiny command", tinyWasm(t, "hi"), ""},
		{"an import the host lacks", wat(`(import "lumen" "secret" (func)) (memory (export "memory") 1) (func (export "_start"))`),
			"cannot be instantiated"},
		{"an import of another module", wat(`(import "env" "f" (func)) (memory (export "memory") 1) (func (export "_start"))`),
			"cannot be instantiated"},
		{"a host function with the wrong signature", wat(`(import "lumen" "now" (func (result i32))) (memory (export "memory") 1) (func (export "_start"))`),
			"cannot be instantiated"},
		{"no _start (a reactor or library)", wat(`(memory (export "memory") 1) (func (export "run"))`), "no _start"},
		{"no memory", wat(`(func (export "_start"))`), "exports no memory"},
		{"a start section that loops", wat(`(memory (export "memory") 1) (func $f (loop (br 0))) (start $f) (func (export "_start"))`),
			"start section failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := plugins.Config{Wasm: tt.wasm, CacheDir: t.TempDir(), CheckCommand: true, Timeout: 100 * time.Millisecond}
			if tt.name == "example" { // compiled once into the shared cache
				cfg.Name, cfg.CacheDir = "example", cacheDir
			}
			e, err := plugins.New(cfg)
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				e.Close()
				return
			}
			if err == nil {
				e.Close()
				t.Fatalf("loaded; want an error with %q", tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want %q", err, tt.want)
			}
		})
	}
}
