package plugins

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/internal/clock"
)

// Config configures an Engine. The zero value of a limit takes its
// default.
type Config struct {
	// Wasm is the guest module; WasmPath names a file to read it from
	// when Wasm is empty.
	Wasm     []byte
	WasmPath string

	// Name names the guest's files in CacheDir ("guest" gives
	// guest.<key>.cwasm); the default is WasmPath's base name without
	// its extension. When an Engine writes a new compiled module for a
	// named guest it removes that name's older entries (other keys: a
	// previous guest, Wasmtime or target). An unnamed guest (Wasm given,
	// no Name) is cached as <key>.cwasm and never cleaned up. Only
	// letters, digits, '-' and '_' are kept.
	Name string

	// CacheDir holds compiled modules between runs; "" compiles at
	// every start. Only lumen writes there: a compiled module is native
	// code, trusted when loaded.
	CacheDir string

	// Precompiled names a file written by Precompile (a release can
	// carry the guest compiled for its target). It is used, and copied
	// into CacheDir, when nothing is cached yet and it was made from the
	// same guest, for this machine's target, by this Wasmtime with these
	// settings; otherwise the Engine says why in Load and Progress, and
	// compiles.
	Precompiled string

	// Compile, when set, compiles the guest at wasmPath into a file
	// written by Precompile at out, in another process: Wasmtime's
	// compiler leaves a few hundred MB behind in the process that ran
	// it, which a daemon on a small board should not keep. Its result
	// is then loaded as Precompiled is (and copied into CacheDir); if
	// it fails or does not fit, the Engine compiles in process. It is
	// used only with WasmPath and CacheDir.
	Compile func(ctx context.Context, wasmPath, out string) error

	// Progress, when set, hears how the start goes: from the goroutine
	// that loads the guest, one report at a time (see Stage).
	Progress func(Progress)
	// ProgressEvery is how often Progress hears StageCompiling while
	// the guest compiles (default 500 ms).
	ProgressEvery time.Duration

	MemoryLimit  int64         // bytes of linear memory per call (default 64 MiB)
	Timeout      time.Duration // per call, also bounded by the ctx's deadline (default 5 s)
	MaxWasmStack int           // bytes of native stack wasm may use (default 512 KiB)
	MaxResult    int           // bytes of a call's JSON result (default 1 MiB)
	MaxLog       int           // bytes of log, stdout and stderr kept per call (default 64 KiB)
	Tick         time.Duration // how often the epoch advances: the deadline's resolution (default 10 ms)

	// Clock is the clock the guest's now() and Date read (default the
	// wall clock).
	Clock clock.Clock

	// CheckCommand instantiates the guest once as it loads, without
	// running it, and fails the load (Err) unless it links against the
	// host's imports and exports _start and memory. For guests the
	// operator drops in (precompiled plugins): a wrong one is then
	// reported once, with its reason, instead of trapping at every call.
	CheckCommand bool
}

// The defaults of Config.
const (
	DefaultMemoryLimit   = 64 << 20
	DefaultTimeout       = 5 * time.Second
	DefaultMaxWasmStack  = 512 << 10
	DefaultMaxResult     = 1 << 20
	DefaultMaxLog        = 64 << 10
	DefaultTick          = 10 * time.Millisecond
	DefaultProgressEvery = 500 * time.Millisecond
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
	if c.ProgressEvery <= 0 {
		c.ProgressEvery = DefaultProgressEvery
	}
	if c.Clock == nil {
		c.Clock = clock.System(clock.Trust)
	}
	if c.Name == "" && c.WasmPath != "" {
		base := filepath.Base(c.WasmPath)
		c.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	c.Name = cleanName(c.Name)
}

// Stage is a step of an Engine's start, as Progress reports it.
type Stage string

const (
	// The compiled module was read from CacheDir: the usual start.
	StageCacheHit Stage = "cache hit"
	// The module was read from Config.Precompiled (and copied into
	// CacheDir).
	StagePrecompiled Stage = "precompiled"
	// Config.Precompiled cannot serve this Engine; Err says why. The
	// Engine compiles instead.
	StagePrecompiledRefused Stage = "precompiled refused"
	// The guest is compiling: reported when it starts and every
	// Config.ProgressEvery until it ends, Elapsed counting from Start.
	StageCompiling Stage = "compiling"
	// Compiled and written to CacheDir.
	StageCached Stage = "cached"
	// Compiled, without a CacheDir to keep it in.
	StageCompiled Stage = "compiled"
	// The guest could not be loaded; Err says why, and every call fails
	// with it.
	StageFailed Stage = "failed"
)

// Progress is one report of an Engine's start. Every start ends with
// exactly one of StageCacheHit, StagePrecompiled, StageCached,
// StageCompiled or StageFailed.
type Progress struct {
	Stage   Stage
	Elapsed time.Duration // since Start
	Path    string        // the file read or written, if any
	Err     error         // with StageFailed and StagePrecompiledRefused
}

// Load says how an Engine got its compiled module.
type Load struct {
	Cached      bool          // read from CacheDir
	Precompiled bool          // read from Config.Precompiled
	Duration    time.Duration // to compile, or to read from the cache or the precompiled file
	Path        string        // the cache file, "" without CacheDir
	// Refused says why Config.Precompiled was not used, when it was set
	// and the module was compiled instead.
	Refused error
}

// Engine runs calls in fresh instances of one compiled guest. It is safe
// for concurrent use; each call has its own store.
type Engine struct {
	cfg    Config
	engine *wasmtime.Engine

	// Closed once the guest is loaded or failed to; module, linker, load
	// and err are set before.
	ready  chan struct{}
	module *wasmtime.Module
	linker *wasmtime.Linker
	load   Load
	err    error

	stop chan struct{}
	done chan struct{}

	mu     sync.RWMutex // held shared by each call, exclusively by Close
	closed bool
	loaded bool // the loader is done with engine (under mu)
}

// Start returns an Engine at once and loads its guest in the background:
// from CacheDir, from Config.Precompiled, or by compiling it, which takes
// seconds for the JavaScript guest (far more on a small board). Calls
// wait for the guest (as long as their ctx allows) and fail with Err if
// it could not be loaded. Config.Progress hears how it goes.
func Start(cfg Config) *Engine {
	cfg.setDefaults()
	e := &Engine{
		cfg:    cfg,
		engine: wasmtime.NewEngineWithConfig(newWasmtimeConfig(cfg.MaxWasmStack)),
		ready:  make(chan struct{}),
		stop:   make(chan struct{}),
		done:   make(chan struct{}),
	}
	go e.tick()
	go e.start()
	return e
}

// New is Start that waits for the guest: it returns once the Engine can
// run calls, or the error that keeps it from ever doing so.
func New(cfg Config) (*Engine, error) {
	e := Start(cfg)
	<-e.ready
	if e.err != nil {
		_ = e.Close()
		return nil, e.err
	}
	return e, nil
}

// Ready is closed once the guest is loaded, or failed to load (Err).
func (e *Engine) Ready() <-chan struct{} { return e.ready }

// Err is why the guest could not be loaded: nil while it loads and once
// it has.
func (e *Engine) Err() error {
	select {
	case <-e.ready:
		return e.err
	default:
		return nil
	}
}

// Load says whether the module came from the disk cache and how long it
// took; the zero Load until Ready.
func (e *Engine) Load() Load {
	select {
	case <-e.ready:
		return e.load
	default:
		return Load{}
	}
}

// wait waits for the guest to load, as long as ctx allows.
func (e *Engine) wait(ctx context.Context) error {
	select {
	case <-e.ready:
	default:
		select {
		case <-e.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return e.err
}

// start loads the guest: the Engine's background goroutine.
func (e *Engine) start() {
	t0 := time.Now()
	report := func(p Progress) {
		if e.cfg.Progress != nil {
			p.Elapsed = time.Since(t0)
			e.cfg.Progress(p)
		}
	}
	m, l, load, err := e.prepare(t0, report)
	if err != nil {
		report(Progress{Stage: StageFailed, Err: err})
	}
	e.mu.Lock()
	e.loaded = true
	if e.closed {
		// Close came first and left the engine to us.
		if l != nil {
			l.Close()
		}
		if m != nil {
			m.Close()
		}
		e.engine.Close()
		m, l = nil, nil
		if err == nil {
			err = ErrClosed
		}
	}
	e.module, e.linker, e.load, e.err = m, l, load, err
	e.mu.Unlock()
	close(e.ready)
}

func (e *Engine) prepare(t0 time.Time, report func(Progress)) (*wasmtime.Module, *wasmtime.Linker, Load, error) {
	wasm := e.cfg.Wasm
	if len(wasm) == 0 {
		if e.cfg.WasmPath == "" {
			return nil, nil, Load{}, errors.New("plugins: no guest: set Config.Wasm or Config.WasmPath")
		}
		var err error
		if wasm, err = os.ReadFile(e.cfg.WasmPath); err != nil {
			return nil, nil, Load{}, fmt.Errorf("plugins: reading the guest: %w", err)
		}
	}
	m, load, err := loadModule(e.engine, wasm, loadOpts{
		dir:         e.cfg.CacheDir,
		name:        e.cfg.Name,
		precompiled: e.cfg.Precompiled,
		wasmPath:    e.cfg.WasmPath,
		compile:     e.cfg.Compile,
		stop:        e.stop,
		every:       e.cfg.ProgressEvery,
		start:       t0,
		report:      report,
	})
	if err != nil {
		return nil, nil, Load{}, err
	}
	l, err := newLinker(e.engine)
	if err != nil {
		m.Close()
		return nil, nil, Load{}, err
	}
	if e.cfg.CheckCommand {
		if err := e.checkCommand(m, l); err != nil {
			l.Close()
			m.Close()
			return nil, nil, Load{}, err
		}
	}
	return m, l, load, nil
}

// checkCommand instantiates m in a store with a call's limits, as a call
// would, and looks for the exports a call needs. Instantiating runs no
// guest code but a start section, which the epoch deadline bounds.
func (e *Engine) checkCommand(m *wasmtime.Module, l *wasmtime.Linker) error {
	st := &state{ctx: context.Background(), clock: e.cfg.Clock, maxResult: e.cfg.MaxResult, log: logBuf{max: e.cfg.MaxLog}}
	store := wasmtime.NewStoreWithData(e.engine, st)
	defer store.Close()
	store.Limiter(e.cfg.MemoryLimit, -1, -1, -1, -1)
	store.SetWasi(wasmtime.NewWasiConfig())
	store.SetEpochDeadline(uint64(max((e.cfg.Timeout+e.cfg.Tick-1)/e.cfg.Tick, 1)))
	inst, err := l.Instantiate(store, m)
	var trap *wasmtime.Trap
	if errors.As(err, &trap) {
		return fmt.Errorf("plugins: the guest's start section failed (%s); a plugin does its work in _start, when called", firstLine(trap.Message()))
	}
	if err != nil {
		return fmt.Errorf("plugins: the guest cannot be instantiated (%s); it may use only lumen's imports and WASI preview 1", firstLine(err.Error()))
	}
	if inst.GetFunc(store, "_start") == nil {
		return errors.New("plugins: the guest has no _start; build it as a WASI command (GOOS=wasip1, wasm32-wasip1)")
	}
	if ext := inst.GetExport(store, "memory"); ext == nil || ext.Memory() == nil {
		return errors.New("plugins: the guest exports no memory")
	}
	return nil
}

// ErrClosed is returned by a call on a closed Engine.
var ErrClosed = errors.New("plugins: the engine is closed")

// Close waits for the calls in progress (each ends by its deadline),
// stops the epoch ticker and frees the compiled module. It does not wait
// for a guest still compiling: that is freed when it is done.
func (e *Engine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	close(e.stop)
	<-e.done
	if e.loaded {
		if e.linker != nil {
			e.linker.Close()
		}
		if e.module != nil {
			e.module.Close()
		}
		e.engine.Close()
	}
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

// newWasmtimeConfig is the Wasmtime configuration of every Engine, and
// of Precompile.
func newWasmtimeConfig(maxWasmStack int) *wasmtime.Config {
	c := wasmtime.NewConfig()
	c.SetEpochInterruption(true)
	c.SetMaxWasmStack(maxWasmStack)
	return c
}
