// Package plugins will hold the Wasmtime host that runs JavaScript tools in
// a sandboxed wasm guest (issue: custom tools and data sources).
package plugins
