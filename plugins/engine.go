package plugins

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"sync"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"
)

// Config configures an Engine. The zero value of a limit takes its
// default.
type Config struct {
	// Wasm is the guest module; WasmPath names a file to read it from
	// when Wasm is empty.
	Wasm     []byte
	WasmPath string

	// CacheDir holds compiled modules between runs; "" compiles at
	// every New. Only lumen writes there: a compiled module is native
	// code, trusted when loaded.
	CacheDir string

	MemoryLimit  int64         // bytes of linear memory per call (default 64 MiB)
	Timeout      time.Duration // per call, also bounded by the ctx's deadline (default 5 s)
	MaxWasmStack int           // bytes of native stack wasm may use (default 512 KiB)
	MaxResult    int           // bytes of a call's JSON result (default 1 MiB)
	MaxLog       int           // bytes of log, stdout and stderr kept per call (default 64 KiB)
	Tick         time.Duration // how often the epoch advances: the deadline's resolution (default 10 ms)

	// Now is the clock the guest's now() and Date read (default time.Now).
	Now func() time.Time
}

// The defaults of Config.
const (
	DefaultMemoryLimit  = 64 << 20
	DefaultTimeout      = 5 * time.Second
	DefaultMaxWasmStack = 512 << 10
	DefaultMaxResult    = 1 << 20
	DefaultMaxLog       = 64 << 10
	DefaultTick         = 10 * time.Millisecond
)

func (c *Config) setDefaults() {
	if c.MemoryLimit <= 0 {
		c.MemoryLimit = DefaultMemoryLimit
	}
	if c.Timeout <= 0 {
		c.Timeout = DefaultTimeout
	}
	if c.MaxWasmStack <= 0 {
		c.MaxWasmStack = DefaultMaxWasmStack
	}
	if c.MaxResult <= 0 {
		c.MaxResult = DefaultMaxResult
	}
	if c.MaxLog <= 0 {
		c.MaxLog = DefaultMaxLog
	}
	if c.Tick <= 0 {
		c.Tick = DefaultTick
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Load says how an Engine got its compiled module.
type Load struct {
	Cached   bool          // read from CacheDir
	Duration time.Duration // to compile, or to read from the cache
	Path     string        // the cache file, "" without CacheDir
}

// Engine runs calls in fresh instances of one compiled guest. It is safe
// for concurrent use; each call has its own store.
type Engine struct {
	cfg    Config
	engine *wasmtime.Engine
	module *wasmtime.Module
	linker *wasmtime.Linker
	load   Load

	stop chan struct{}
	done chan struct{}

	mu     sync.RWMutex // held shared by each call, exclusively by Close
	closed bool
}

// New compiles the guest of cfg (or reads it from the cache) and starts
// the epoch ticker. Compiling the JavaScript guest takes seconds: call New
// off the path that must answer fast.
func New(cfg Config) (*Engine, error) {
	cfg.setDefaults()
	wasm := cfg.Wasm
	if len(wasm) == 0 {
		if cfg.WasmPath == "" {
			return nil, errors.New("plugins: no guest: set Config.Wasm or Config.WasmPath")
		}
		var err error
		if wasm, err = os.ReadFile(cfg.WasmPath); err != nil {
			return nil, fmt.Errorf("plugins: reading the guest: %w", err)
		}
	}
	wcfg := wasmtime.NewConfig()
	wcfg.SetEpochInterruption(true)
	wcfg.SetMaxWasmStack(cfg.MaxWasmStack)
	e := &Engine{
		cfg:    cfg,
		engine: wasmtime.NewEngineWithConfig(wcfg),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	var err error
	if e.module, e.load, err = loadModule(e.engine, wasm, cfg.CacheDir, fingerprint(cfg)); err != nil {
		return nil, err
	}
	if e.linker, err = newLinker(e.engine); err != nil {
		return nil, err
	}
	go e.tick()
	return e, nil
}

// Load says whether the module came from the disk cache and how long it
// took.
func (e *Engine) Load() Load { return e.load }

// ErrClosed is returned by a call on a closed Engine.
var ErrClosed = errors.New("plugins: the engine is closed")

// Close waits for the calls in progress (each ends by its deadline),
// stops the epoch ticker and frees the compiled module.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	close(e.stop)
	<-e.done
	e.linker.Close()
	e.module.Close()
	e.engine.Close()
	return nil
}

func (e *Engine) tick() {
	defer close(e.done)
	t := time.NewTicker(e.cfg.Tick)
	defer t.Stop()
	for {
		select {
		case <-e.stop:
			return
		case <-t.C:
			e.engine.IncrementEpoch()
		}
	}
}

// wasmtimeVersion is the Wasmtime binding this file was written against,
// used when the build carries no module information.
const wasmtimeVersion = "github.com/bytecodealliance/wasmtime-go/v39@v39.0.1"

// fingerprint is everything that makes a compiled module fit an engine:
// the Wasmtime version, the engine's settings and the target.
func fingerprint(cfg Config) string {
	v := wasmtimeVersion
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, d := range bi.Deps {
			if d.Path == "github.com/bytecodealliance/wasmtime-go/v39" {
				v = d.Path + "@" + d.Version
				if d.Replace != nil {
					v += "=>" + d.Replace.Path + "@" + d.Replace.Version
				}
			}
		}
	}
	return fmt.Sprintf("%s epoch=1 max-wasm-stack=%d target=%s/%s", v, cfg.MaxWasmStack, runtime.GOOS, runtime.GOARCH)
}

// loadModule reads the compiled module for wasm from dir, or compiles it
// and writes it there.
func loadModule(engine *wasmtime.Engine, wasm []byte, dir, fp string) (*wasmtime.Module, Load, error) {
	start := time.Now()
	if dir == "" {
		m, err := wasmtime.NewModule(engine, wasm)
		if err != nil {
			return nil, Load{}, fmt.Errorf("plugins: compiling the guest: %w", err)
		}
		return m, Load{Duration: time.Since(start)}, nil
	}
	sum := sha256.Sum256(wasm)
	key := sha256.Sum256([]byte(fp + "\n" + hex.EncodeToString(sum[:])))
	path := filepath.Join(dir, hex.EncodeToString(key[:16])+".cwasm")
	if _, err := os.Stat(path); err == nil {
		if m, err := wasmtime.NewModuleDeserializeFile(engine, path); err == nil {
			return m, Load{Cached: true, Duration: time.Since(start), Path: path}, nil
		}
		// Unreadable: compile again and replace it.
	}
	m, err := wasmtime.NewModule(engine, wasm)
	if err != nil {
		return nil, Load{}, fmt.Errorf("plugins: compiling the guest: %w", err)
	}
	compiled := time.Since(start)
	if err := writeCache(m, dir, path); err != nil {
		return nil, Load{}, err
	}
	return m, Load{Duration: compiled, Path: path}, nil
}

// writeCache writes m to path through a temporary file, so that another
// process never reads half a module.
func writeCache(m *wasmtime.Module, dir, path string) error {
	b, err := m.Serialize()
	if err != nil {
		return fmt.Errorf("plugins: serializing the guest: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("plugins: module cache: %w", err)
	}
	f, err := os.CreateTemp(dir, ".tmp-*.cwasm")
	if err != nil {
		return fmt.Errorf("plugins: module cache: %w", err)
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		_ = os.Remove(f.Name())
		return fmt.Errorf("plugins: module cache: %w", err)
	}
	return nil
}
