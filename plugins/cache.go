package plugins

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"strings"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

// wasmtimeVersion is the Wasmtime binding this file was written against,
// used when the build carries no module information.
const wasmtimeVersion = "github.com/bytecodealliance/wasmtime-go/v39@v39.0.1"

// fingerprint is everything that makes a compiled module fit an engine:
// the Wasmtime version, the settings that change the code Wasmtime
// generates (epoch interruption; the wasm stack limit is a runtime
// setting, so engines that differ only there share a module) and the
// target, as normTarget spells it. Wasmtime checks the same when it
// loads a module, and refuses one that does not fit; the fingerprint
// also makes the cache key and lets a refusal say why.
func fingerprint(target string) string {
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
	return fmt.Sprintf("%s epoch=1 target=%s", v, normTarget(target))
}

// HostArch is this binary's architecture as Wasmtime names it (x86_64,
// aarch64, …): the only one Precompile compiles for, and the name lumen
// gives a release's precompiled guest (guest-aarch64.cwasm).
func HostArch() string { return normArch(runtime.GOARCH) }

// hostTarget is this machine's target, as normTarget spells it.
func hostTarget() string { return normArch(runtime.GOARCH) + "-" + runtime.GOOS }

// normTarget reduces a target triple to what the cache tells apart, the
// architecture and the operating system: aarch64-unknown-linux-gnu and
// aarch64-linux-gnu are both aarch64-linux. "" is this machine.
func normTarget(triple string) string {
	if triple == "" {
		return hostTarget()
	}
	parts := strings.Split(strings.ToLower(triple), "-")
	sys := "unknown"
	for _, p := range parts[1:] {
		switch p {
		case "linux", "android", "windows", "freebsd", "netbsd", "openbsd", "illumos", "ios":
			sys = p
		case "darwin", "macos", "macosx":
			sys = "darwin"
		default:
			continue
		}
		break
	}
	return normArch(parts[0]) + "-" + sys
}

func normArch(a string) string {
	switch a {
	case "amd64", "x86_64":
		return "x86_64"
	case "arm64", "aarch64":
		return "aarch64"
	case "riscv64", "riscv64gc":
		return "riscv64"
	}
	return a
}

// cacheKey names the compiled module of wasm for target in the cache and
// in a precompiled file's header.
func cacheKey(fp string, wasmSum [32]byte) string {
	key := sha256.Sum256([]byte(fp + "\n" + hex.EncodeToString(wasmSum[:])))
	return hex.EncodeToString(key[:16])
}

// cleanName keeps the letters, digits, '-' and '_' of a guest's name, so
// that a cache file's name is <name>.<key>.cwasm with no other dot.
func cleanName(name string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return -1
	}, name)
}

// cacheFile is the name of the compiled module with key for the guest
// name ("" unnamed).
func cacheFile(name, key string) string {
	if name == "" {
		return key + ".cwasm"
	}
	return name + "." + key + ".cwasm"
}

type loadOpts struct {
	dir, name, precompiled string
	wasmPath               string
	compile                func(ctx context.Context, wasmPath, out string) error
	stop                   <-chan struct{} // closed when the Engine closes
	every                  time.Duration
	start                  time.Time
	report                 func(Progress)
}

// loadModule reads the compiled module for wasm from the cache, or from
// the precompiled file, or compiles it (and writes it to the cache,
// removing the guest's stale entries there).
func loadModule(engine *wasmtime.Engine, wasm []byte, o loadOpts) (*wasmtime.Module, Load, error) {
	start := time.Now()
	sum := sha256.Sum256(wasm)
	fp := fingerprint("")
	key := cacheKey(fp, sum)
	path := ""
	if o.dir != "" {
		path = filepath.Join(o.dir, cacheFile(o.name, key))
		if _, err := os.Stat(path); err == nil {
			if m, err := wasmtime.NewModuleDeserializeFile(engine, path); err == nil {
				o.report(Progress{Stage: StageCacheHit, Path: path})
				return m, Load{Cached: true, Duration: time.Since(start), Path: path}, nil
			}
			// Unreadable: load or compile again and replace it.
		}
	}
	var refused error
	if o.precompiled != "" {
		m, err := loadPrecompiled(engine, o.precompiled, fp, sum, o.dir, path)
		if err == nil {
			if path != "" {
				cleanStale(o.dir, o.name, key)
			}
			o.report(Progress{Stage: StagePrecompiled, Path: o.precompiled})
			return m, Load{Precompiled: true, Duration: time.Since(start), Path: path}, nil
		}
		refused = err
		o.report(Progress{Stage: StagePrecompiledRefused, Path: o.precompiled, Err: err})
		start = time.Now()
	}

	o.report(Progress{Stage: StageCompiling})
	stopTicks := ticks(o.every, o.report)
	if path != "" {
		// One compile per cache at a time: the lumen processes that start
		// together on an empty cache wait for the first one's, and read
		// it, rather than each paying for its own.
		unlock, err := lockCache(o.dir, o.stop)
		if err != nil {
			stopTicks()
			return nil, Load{}, err
		}
		defer unlock()
		if m, err := wasmtime.NewModuleDeserializeFile(engine, path); err == nil {
			stopTicks()
			o.report(Progress{Stage: StageCacheHit, Path: path})
			return m, Load{Cached: true, Duration: time.Since(start), Path: path}, nil
		}
	}
	m, err := compileApart(engine, fp, sum, path, o)
	switch {
	case err == nil:
		stopTicks()
		cleanStale(o.dir, o.name, key)
		o.report(Progress{Stage: StageCached, Path: path})
		return m, Load{Duration: time.Since(start), Path: path, Refused: refused}, nil
	case errors.Is(err, ErrClosed):
		stopTicks()
		return nil, Load{}, err
	}
	m, err = wasmtime.NewModule(engine, wasm)
	stopTicks()
	if err != nil {
		return nil, Load{}, fmt.Errorf("plugins: compiling the guest: %w", err)
	}
	compiled := time.Since(start)
	if path == "" {
		o.report(Progress{Stage: StageCompiled})
		return m, Load{Duration: compiled, Refused: refused}, nil
	}
	b, err := m.Serialize()
	if err == nil {
		err = writeCache(o.dir, path, func(w io.Writer) error {
			_, err := w.Write(b)
			return err
		})
	}
	if err != nil {
		m.Close()
		return nil, Load{}, fmt.Errorf("plugins: module cache: %w", err)
	}
	cleanStale(o.dir, o.name, key)
	o.report(Progress{Stage: StageCached, Path: path})
	return m, Load{Duration: compiled, Path: path, Refused: refused}, nil
}

// errNoCompiler says compileApart was not asked to run.
var errNoCompiler = errors.New("plugins: no compiler process")

// compileApart has o.compile write the guest compiled into a temporary
// file beside path, then loads it as a precompiled file, which copies it
// to path.
func compileApart(engine *wasmtime.Engine, fp string, sum [32]byte, path string, o loadOpts) (*wasmtime.Module, error) {
	if o.compile == nil || o.wasmPath == "" || path == "" {
		return nil, errNoCompiler
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-o.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	if err := os.MkdirAll(o.dir, 0o755); err != nil {
		return nil, err
	}
	// Named as a temporary file of the cache, so that a crash's leftover
	// is cleaned up (cleanStale); the child writes it atomically.
	f, err := os.CreateTemp(o.dir, "."+filepath.Base(path)+".tmp-compile-*")
	if err != nil {
		return nil, err
	}
	tmp := f.Name()
	f.Close()
	defer os.Remove(tmp)
	if err := o.compile(ctx, o.wasmPath, tmp); err != nil {
		select {
		case <-o.stop:
			return nil, ErrClosed // killed because the Engine closes
		default:
		}
		return nil, err
	}
	return loadPrecompiled(engine, tmp, fp, sum, o.dir, path)
}

// ticks reports StageCompiling every d until the function it returns is
// called, which returns once the last report is done.
func ticks(d time.Duration, report func(Progress)) (stop func()) {
	quit, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-quit:
				return
			case <-t.C:
				report(Progress{Stage: StageCompiling})
			}
		}
	}()
	return func() {
		close(quit)
		<-exited
	}
}

// writeCache writes a compiled module to path (atomicfile: another
// process never reads half a module).
func writeCache(dir, path string, write func(io.Writer) error) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, 0o644, write)
}

// staleTemp is how old a temporary file of the cache must be to be
// taken for the leftover of a crash.
const staleTemp = time.Hour

var (
	keyPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)
)

// cleanStale removes the cache entries of the guest name other than key
// (the modules of its previous versions, or of another Wasmtime), and
// temporary files a crash left. It removes only files named as this
// package names them; an unnamed guest's entries are never removed, as
// nothing tells them from another guest's.
func cleanStale(dir, name, key string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, ent := range ents {
		n := ent.Name()
		if !ent.Type().IsRegular() {
			continue
		}
		if atomicfile.IsTemp(n) {
			if info, err := ent.Info(); err == nil && time.Since(info.ModTime()) > staleTemp {
				_ = os.Remove(filepath.Join(dir, n))
			}
			continue
		}
		if name == "" {
			continue
		}
		k, ok := strings.CutPrefix(n, name+".")
		if !ok {
			continue
		}
		if k, ok = strings.CutSuffix(k, ".cwasm"); ok && k != key && keyPattern.MatchString(k) {
			_ = os.Remove(filepath.Join(dir, n))
		}
	}
}

// A precompiled file is a header of four lines, then the module as
// Wasmtime serializes it:
//
//	lumen precompiled guest 1
//	<target as given to Precompile>
//	<fingerprint>
//	<SHA-256 of the wasm, hex>
const precompiledMagic = "lumen precompiled guest 1"

// ErrTargetUnsupported is returned by Precompile for a target whose
// architecture this build of Wasmtime cannot compile for.
var ErrTargetUnsupported = errors.New("plugins: this Wasmtime cannot compile for that target")

// Precompile compiles wasm for target, a target triple such as
// aarch64-unknown-linux-gnu ("" for this machine), with the settings of
// an Engine, and writes it to out for Config.Precompiled: a release for
// a small board carries its guest compiled, so that the board never
// compiles it. The engine that loads it must be the same Wasmtime, and
// be given the same wasm.
//
// The C library wasmtime-go v39 links carries Cranelift's backend for
// its own architecture only (an engine for another one aborts the
// process: "Support for this target is disabled"), so Precompile
// refuses, with ErrTargetUnsupported, a target of another architecture
// than this binary's: precompile for aarch64 with an arm64 build, on an
// aarch64 machine or under qemu-aarch64.
func Precompile(wasm []byte, target string, out io.Writer) error {
	if target != "" {
		arch, _, _ := strings.Cut(strings.ToLower(target), "-")
		if normArch(arch) != normArch(runtime.GOARCH) {
			return fmt.Errorf("%w: %q: this build of Wasmtime compiles for %s only; precompile with a build for %s (on such a machine, or under qemu-user)", ErrTargetUnsupported, target, normArch(runtime.GOARCH), normArch(arch))
		}
	}
	c := newWasmtimeConfig(DefaultMaxWasmStack)
	if target != "" {
		if err := c.SetTarget(target); err != nil {
			return fmt.Errorf("plugins: target %q: %w", target, err)
		}
	}
	engine := wasmtime.NewEngineWithConfig(c)
	defer engine.Close()
	m, err := wasmtime.NewModule(engine, wasm)
	if err != nil {
		return fmt.Errorf("plugins: compiling the guest for %q: %w", target, err)
	}
	defer m.Close()
	b, err := m.Serialize()
	if err != nil {
		return fmt.Errorf("plugins: serializing the guest: %w", err)
	}
	sum := sha256.Sum256(wasm)
	shown := target
	if shown == "" {
		shown = hostTarget()
	}
	if _, err := fmt.Fprintf(out, "%s\n%s\n%s\n%s\n", precompiledMagic, shown, fingerprint(target), hex.EncodeToString(sum[:])); err != nil {
		return err
	}
	_, err = out.Write(b)
	return err
}

// ErrPrecompiled is wrapped by the reasons a precompiled file was
// refused (Load.Refused, Progress.Err).
var ErrPrecompiled = errors.New("plugins: the precompiled guest does not fit")

// loadPrecompiled loads the precompiled file at file if its header says
// it is the wasm whose hash is sum compiled with fingerprint fp. With a
// cache (dir and path), the module is copied to path and read from
// there, as a cache hit would; otherwise from memory.
func loadPrecompiled(engine *wasmtime.Engine, file, fp string, sum [32]byte, dir, path string) (*wasmtime.Module, error) {
	refuse := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s: %s", ErrPrecompiled, file, fmt.Sprintf(format, a...))
	}
	f, err := os.Open(file)
	if err != nil {
		return nil, refuse("%v", err)
	}
	defer f.Close()
	r := bufio.NewReader(f)
	var head [4]string
	for i := range head {
		line, err := r.ReadString('\n')
		if err != nil || len(line) > 1024 {
			return nil, refuse("not a file written by plugins.Precompile")
		}
		head[i] = strings.TrimSuffix(line, "\n")
	}
	switch {
	case head[0] != precompiledMagic:
		return nil, refuse("not a file written by plugins.Precompile")
	case head[3] != hex.EncodeToString(sum[:]):
		return nil, refuse("compiled from another guest (wasm SHA-256 %.12s…, this guest's is %.12s…)", head[3], hex.EncodeToString(sum[:]))
	case !strings.HasSuffix(head[2], " target="+hostTarget()):
		return nil, refuse("compiled for %s, this machine is %s", head[1], hostTarget())
	case head[2] != fp:
		return nil, refuse("compiled by another Wasmtime or with other settings (%s; this engine: %s)", head[2], fp)
	}
	var m *wasmtime.Module
	if path != "" {
		if err := writeCache(dir, path, func(w io.Writer) error {
			_, err := io.Copy(w, r)
			return err
		}); err != nil {
			return nil, refuse("copying it into the cache: %v", err)
		}
		if m, err = wasmtime.NewModuleDeserializeFile(engine, path); err != nil {
			_ = os.Remove(path)
		}
	} else {
		b, rerr := io.ReadAll(r)
		if rerr != nil {
			return nil, refuse("%v", rerr)
		}
		m, err = wasmtime.NewModuleDeserialize(engine, b)
	}
	if err != nil {
		return nil, refuse("Wasmtime refused it: %s", causes(err.Error()))
	}
	return m, nil
}

// causes puts the chain of causes in a Wasmtime error's message on one
// line, without the path it was given.
func causes(msg string) string {
	var out []string
	for line := range strings.Lines(msg) {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "Stack backtrace") {
			break
		}
		if i := strings.Index(line, ": "); i > 0 && strings.Trim(line[:i], "0123456789") == "" {
			line = line[i+2:]
		}
		if line == "" || line == "Caused by:" || strings.HasPrefix(line, "failed deserialization for") {
			continue
		}
		out = append(out, line)
	}
	if len(out) == 0 {
		return firstLine(msg)
	}
	return strings.Join(out, ": ")
}
