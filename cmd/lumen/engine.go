package main

import (
	"context"
	"os"
	"path/filepath"
	"runtime/debug"
	"sync"
	"time"

	"github.com/lumen-home/lumen/actors/tool"
	"github.com/lumen-home/lumen/plugins"
)

// guestWasm finds the tools' JavaScript engine (plugins/guest built for
// WASI): $LUMEN_GUEST_WASM, else next to the binary as the Taskfile lays
// them out (.cache/bin/lumen and .cache/plugins/guest.wasm), else beside
// it.
func guestWasm() string {
	if p := os.Getenv("LUMEN_GUEST_WASM"); p != "" {
		return p
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	dir := filepath.Dir(exe)
	for _, p := range []string{filepath.Join(dir, "..", "plugins", "guest.wasm"), filepath.Join(dir, "guest.wasm")} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return ""
}

// guestPrecompiled finds the tool engine compiled ahead of time for this
// machine, which a release carries so that a Pi never compiles it
// (`lumen tool precompile`, the Taskfile's release task):
// $LUMEN_GUEST_CWASM, else guest-<arch>.cwasm (guest-aarch64.cwasm on a
// Pi) beside the binary, else beside the guest. "" when there is none;
// the engine checks that a file found fits (same guest, Wasmtime and
// target) and compiles when it does not.
func guestPrecompiled(guest string) string {
	if p := os.Getenv("LUMEN_GUEST_CWASM"); p != "" {
		return p
	}
	name := "guest-" + plugins.HostArch() + ".cwasm"
	var dirs []string
	if exe, err := os.Executable(); err == nil {
		dirs = append(dirs, filepath.Dir(exe))
	}
	if guest != "" {
		dirs = append(dirs, filepath.Dir(guest))
	}
	for _, d := range dirs {
		if p := filepath.Join(d, name); fileExists(p) {
			return p
		}
	}
	return ""
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// compileCacheDir keeps the compiled tool engine between starts:
// $LUMEN_PLUGIN_CACHE, else the user's cache dir.
func compileCacheDir() string {
	if d := os.Getenv("LUMEN_PLUGIN_CACHE"); d != "" {
		return d
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "lumen")
	}
	return ""
}

// lazyEngine is the tool engine, loaded on the first call: the compiled
// engine holds about 30 MB, which a light without tools should not pay.
// At start-up it is only compiled into the disk cache if it is not there
// yet, in the background, with progress shown.
type lazyEngine struct {
	cfg plugins.Config

	mu     sync.Mutex
	e      *plugins.Engine
	closed bool
}

// Run implements tool.Engine.
func (l *lazyEngine) Run(ctx context.Context, req plugins.Request) (plugins.Result, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return plugins.Result{}, plugins.ErrClosed
	}
	if l.e == nil {
		l.e = plugins.Start(l.cfg)
	}
	e := l.e
	l.mu.Unlock()
	return e.Run(ctx, req)
}

// Close releases the engine.
func (l *lazyEngine) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	if l.e != nil {
		l.e.Close()
	}
}

// startToolEngine warms the compile cache in the background, saying how
// it goes, and returns the lazy engine; nil when the engine is not
// installed.
func (m *Main) startToolEngine() *lazyEngine {
	path := guestWasm()
	if path == "" {
		m.logf("tools: the tool engine (guest.wasm) is not installed; custom tools cannot run (build it with the Taskfile's guest task)")
		return nil
	}
	cfg := plugins.Config{WasmPath: path, Name: "guest", CacheDir: compileCacheDir(), Precompiled: guestPrecompiled(path)}
	warm := cfg
	said := false
	warm.ProgressEvery = 2 * time.Second
	warm.Progress = func(p plugins.Progress) {
		switch p.Stage {
		case plugins.StageCompiling:
			if !said {
				m.logf("tools: compiling the tool engine (first start only; it is cached)…")
				said = true
			} else {
				m.logf("tools: still compiling… %.0f s", p.Elapsed.Seconds())
			}
		case plugins.StageCached, plugins.StageCompiled:
			m.logf("tools: the tool engine is ready (compiled in %.1f s)", p.Elapsed.Seconds())
		case plugins.StagePrecompiled:
			m.logf("tools: the tool engine is ready (precompiled, %s, in %.1f s)", p.Path, p.Elapsed.Seconds())
		case plugins.StagePrecompiledRefused:
			m.logf("tools: not using the precompiled tool engine: %v; compiling it instead", p.Err)
		case plugins.StageFailed:
			m.logf("tools: the tool engine failed to load: %v", p.Err)
		}
	}
	e := plugins.Start(warm)
	go func() {
		<-e.Ready()
		e.Close()
		// Reading and hashing the 19 MB guest leaves garbage an idle
		// daemon should not keep.
		debug.FreeOSMemory()
	}()
	return &lazyEngine{cfg: cfg}
}

// openPlugins starts loading the operator's precompiled plugins,
// <data>/plugins/*.wasm, with the JavaScript guest's compile cache and
// limits; what cannot run is logged.
func (m *Main) openPlugins(data string) *tool.Plugins {
	return tool.OpenPlugins(tool.PluginsConfig{
		Dir:    filepath.Join(data, "plugins"),
		Engine: plugins.Config{CacheDir: compileCacheDir()},
		Logf:   m.logf,
	})
}
