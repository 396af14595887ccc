// Package plugins is the Wasmtime host that runs Lumen's custom tools.
//
// A tool's code is JavaScript, but no JavaScript engine runs in the host:
// the engine (goja) is a wasm guest built from plugins/guest with
// GOOS=wasip1 GOARCH=wasm, and every call runs in a fresh instance of it
// with a memory cap, an epoch deadline, a wasm stack limit and WASI
// without preopened directories, environment, arguments or sockets. The
// guest's only way out is the host functions of the "lumen" import
// module (the ABI in README.md), which any WASI module can import: a
// precompiled plugin written in another language runs through the same
// Engine.
//
// An Engine compiles its guest once, caching the compiled module on disk
// (keyed by the Wasmtime version, the engine's settings, the target and
// the guest's hash), so that only the first start pays the compile;
// Start does it in the background, reporting its progress, and
// Precompile lets a release carry the compiled guest.
package plugins
