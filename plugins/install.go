package plugins

import (
	"os"
	"path/filepath"
)

// Where an installed lumen finds its tool engine. The Taskfile lays a
// build out as .cache/bin/lumen and .cache/plugins/guest.wasm; a release
// puts guest.wasm and guest-<arch>.cwasm beside the binary.

// FindGuest returns the tools' JavaScript engine (plugins/guest built for
// WASI): $LUMEN_GUEST_WASM, else ../plugins/guest.wasm from the binary,
// else guest.wasm beside it; "" when there is none.
func FindGuest() string {
	if p := os.Getenv("LUMEN_GUEST_WASM"); p != "" {
		return p
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dir := filepath.Dir(exe)
	for _, p := range []string{filepath.Join(dir, "..", "plugins", "guest.wasm"), filepath.Join(dir, "guest.wasm")} {
		if isFile(p) {
			return p
		}
	}
	return ""
}

// FindPrecompiled returns the guest compiled ahead of time for this
// machine, which a release carries so that a Pi never compiles it:
// $LUMEN_GUEST_CWASM, else guest-<arch>.cwasm (guest-aarch64.cwasm on a
// Pi) beside the binary, else beside guest; "" when there is none. The
// engine checks that a file found fits (same guest, Wasmtime and target)
// and compiles when it does not.
func FindPrecompiled(guest string) string {
	if p := os.Getenv("LUMEN_GUEST_CWASM"); p != "" {
		return p
	}
	name := "guest-" + HostArch() + ".cwasm"
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	if guest != "" {
		dirs = append(dirs, filepath.Dir(guest))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); isFile(p) {
			return p
		}
	}
	return ""
}

// CacheDir is where compiled modules are kept between starts:
// $LUMEN_PLUGIN_CACHE, else the user's cache directory.
func CacheDir() string {
	if d := os.Getenv("LUMEN_PLUGIN_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "lumen")
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}
