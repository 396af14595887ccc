package plugins_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/bytecodealliance/wasmtime-go/v39"

	"github.com/lumen-home/lumen/plugins"
)

// progressLog keeps what Config.Progress heard.
type progressLog struct {
	mu  sync.Mutex
	all []plugins.Progress
}

func (l *progressLog) add(p plugins.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, p)
}

func (l *progressLog) stages() []plugins.Stage {
	l.mu.Lock()
	defer l.mu.Unlock()
	var s []plugins.Stage
	for _, p := range l.all {
		s = append(s, p.Stage)
	}
	return s
}

func (l *progressLog) last() plugins.Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.all[len(l.all)-1]
}

// compact folds the repeated ticks of StageCompiling into one.
func compact(s []plugins.Stage) []plugins.Stage { return slices.Compact(slices.Clone(s)) }

// tinyWasm is a guest that compiles in a few milliseconds and answers
// reply (a JSON string) to any call: for the tests that must miss the
// cache but need no real guest.
func tinyWasm(t *testing.T, reply string) []byte {
	t.Helper()
	out := `{"ok":true,"result":"` + reply + `"}`
	wasm, err := wasmtime.Wat2Wasm(fmt.Sprintf(`(module
		(import "lumen" "result" (func $result (param i32 i32)))
		(memory (export "memory") 1)
		(data (i32.const 16) %q)
		(func (export "_start") (call $result (i32.const 16) (i32.const %d))))`, out, len(out)))
	if err != nil {
		t.Fatal(err)
	}
	return wasm
}

func callTiny(t *testing.T, e *plugins.Engine, want string) {
	t.Helper()
	got, err := e.Call(context.Background(), "", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `"`+want+`"` {
		t.Errorf("got %s, want %q", got, want)
	}
}

func callExample(t *testing.T, e *plugins.Engine) {
	t.Helper()
	got, err := e.Call(context.Background(), "", json.RawMessage(`{"name": "x"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"greeting":"hello, x"`) {
		t.Errorf("got %s", got)
	}
}

// Start returns at once; the guest compiles in the background, reporting
// its progress, and calls wait for it. The next start reads the cache.
func TestStartCompilesInTheBackground(t *testing.T) {
	dir := t.TempDir()
	var log progressLog
	const every = 50 * time.Millisecond
	cfg := plugins.Config{Wasm: exampleWasm, Name: "example", CacheDir: dir, Progress: log.add, ProgressEvery: every}
	t0 := time.Now()
	e := plugins.Start(cfg)
	defer e.Close()
	if d := time.Since(t0); d > 50*time.Millisecond {
		t.Errorf("Start took %v", d)
	}
	if e.Err() != nil {
		t.Errorf("Err before Ready: %v", e.Err())
	}
	// A call waits for the guest as long as its ctx allows.
	ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
	defer cancel()
	if _, err := e.Call(ctx, "", nil, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("got %v, want the ctx's deadline", err)
	}
	callExample(t, e) // waits for the compile
	select {
	case <-e.Ready():
	default:
		t.Fatal("a call ran before Ready")
	}
	l := e.Load()
	if l.Cached || l.Precompiled || l.Duration <= 0 || filepath.Dir(l.Path) != dir || e.Err() != nil {
		t.Errorf("load %+v, err %v", l, e.Err())
	}
	stages := log.stages()
	if want := []plugins.Stage{plugins.StageCompiling, plugins.StageCached}; !slices.Equal(compact(stages), want) {
		t.Fatalf("stages %q, want %q with ticks", stages, want)
	}
	if n := strings.Count(fmt.Sprint(stages), string(plugins.StageCompiling)); l.Duration > 4*every && n < 3 {
		t.Errorf("%d reports of compiling in %v, one every %v", n, l.Duration, every)
	}
	last := log.last()
	if last.Path != l.Path || last.Elapsed < l.Duration {
		t.Errorf("last report %+v, load %+v", last, l)
	}
	for i := 1; i < len(log.all); i++ {
		if log.all[i].Elapsed < log.all[i-1].Elapsed {
			t.Errorf("elapsed goes back: %v after %v", log.all[i].Elapsed, log.all[i-1].Elapsed)
		}
	}
	t.Logf("the example guest (%d bytes) compiled in %v, %d progress reports", len(exampleWasm), l.Duration, len(stages))

	log = progressLog{}
	e2 := plugins.Start(cfg)
	defer e2.Close()
	<-e2.Ready()
	if stages := log.stages(); !slices.Equal(stages, []plugins.Stage{plugins.StageCacheHit}) || !e2.Load().Cached {
		t.Errorf("restart: stages %q, load %+v", stages, e2.Load())
	}
	callExample(t, e2)
}

// A guest that cannot be loaded fails every call, clearly; New says so
// at once.
func TestStartFails(t *testing.T) {
	for _, tt := range []struct {
		name string
		cfg  plugins.Config
		msg  string
	}{
		{"not wasm", plugins.Config{Wasm: []byte("not wasm at all")}, "compiling the guest"},
		{"no file", plugins.Config{WasmPath: filepath.Join(t.TempDir(), "missing.wasm")}, "reading the guest"},
		{"no guest", plugins.Config{}, "no guest"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log progressLog
			cfg := tt.cfg
			cfg.Progress = log.add
			e := plugins.Start(cfg)
			defer e.Close()
			<-e.Ready()
			if err := e.Err(); err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Fatalf("Err %v, want %q", err, tt.msg)
			}
			if last := log.last(); last.Stage != plugins.StageFailed || last.Err != e.Err() {
				t.Errorf("last report %+v", last)
			}
			if _, err := e.Call(context.Background(), "return 1", nil, nil); err != e.Err() {
				t.Errorf("call: %v, want %v", err, e.Err())
			}
			if _, err := plugins.New(tt.cfg); err == nil || !strings.Contains(err.Error(), tt.msg) {
				t.Errorf("New: %v", err)
			}
		})
	}
}

// Close does not wait for a compile in progress; the Engine is closed
// once it ends.
func TestCloseWhileCompiling(t *testing.T) {
	e := plugins.Start(plugins.Config{Wasm: exampleWasm, CacheDir: t.TempDir()})
	t0 := time.Now()
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	closed := time.Since(t0)
	<-e.Ready()
	if !errors.Is(e.Err(), plugins.ErrClosed) {
		t.Errorf("Err %v, want ErrClosed", e.Err())
	}
	if _, err := e.Call(context.Background(), "", nil, nil); !errors.Is(err, plugins.ErrClosed) {
		t.Errorf("call: %v", err)
	}
	t.Logf("Close returned in %v, the compile ended %v later", closed, time.Since(t0)-closed)
}

// Writing a new compiled module removes that guest's stale entries, and
// nothing else.
func TestCacheRemovesStaleEntries(t *testing.T) {
	dir := t.TempDir()
	const otherKey = "0123456789abcdef0123456789abcdef"
	stale := []string{
		"example." + otherKey + ".cwasm", // a previous version of the guest
		".tmp-123456.cwasm",              // a crash's leftover
	}
	kept := []string{
		"other." + otherKey + ".cwasm",         // another guest
		"example-2." + otherKey + ".cwasm",     // another guest, with a name that starts alike
		otherKey + ".cwasm",                    // an unnamed guest
		"example.not-a-key.cwasm",              // not a name of ours
		"example." + otherKey + ".cwasm.bak",   // nor this
		"example." + otherKey[:31] + "X.cwasm", // nor this
		"notes.txt",
		".tmp-789.cwasm", // a write in progress
	}
	for _, n := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(filepath.Join(dir, ".tmp-123456.cwasm"), old, old); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "example."+otherKey[:30]+"ff.cwasm"), 0o755); err != nil {
		t.Fatal(err)
	}
	kept = append(kept, "example."+otherKey[:30]+"ff.cwasm")

	e, err := plugins.New(plugins.Config{Wasm: tinyWasm(t, "tiny"), Name: "example", CacheDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var have []string
	for _, ent := range ents {
		have = append(have, ent.Name())
	}
	want := append(slices.Clone(kept), filepath.Base(e.Load().Path))
	slices.Sort(have)
	slices.Sort(want)
	if !slices.Equal(have, want) {
		t.Errorf("the cache holds\n%q\nwant\n%q", have, want)
	}
	if !strings.HasPrefix(filepath.Base(e.Load().Path), "example.") {
		t.Errorf("cache file %s", e.Load().Path)
	}
}

// The name comes from WasmPath, cleaned.
func TestCacheNameFromWasmPath(t *testing.T) {
	dir := t.TempDir()
	wasm := filepath.Join(dir, "my plugin.v2.wasm")
	if err := os.WriteFile(wasm, tinyWasm(t, "tiny"), 0o600); err != nil {
		t.Fatal(err)
	}
	e, err := plugins.New(plugins.Config{WasmPath: wasm, CacheDir: filepath.Join(dir, "cache")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if base := filepath.Base(e.Load().Path); !strings.HasPrefix(base, "mypluginv2.") || strings.Count(base, ".") != 2 {
		t.Errorf("cache file %s", base)
	}
}

func precompile(t *testing.T, wasm []byte, target string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "guest.cwasm")
	var buf bytes.Buffer
	t0 := time.Now()
	if err := plugins.Precompile(wasm, target, &buf); err != nil {
		t.Fatal(err)
	}
	t.Logf("precompiled %d bytes of wasm for %q in %v: %d bytes", len(wasm), target, time.Since(t0), buf.Len())
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// A guest precompiled for this machine is loaded instead of compiled,
// and copied into the cache; without a cache, it is read into memory.
func TestPrecompiled(t *testing.T) {
	wasm := tinyWasm(t, "precompiled")
	pre := precompile(t, wasm, "")
	for _, dir := range []string{t.TempDir(), ""} {
		var log progressLog
		cfg := plugins.Config{Wasm: wasm, Name: "tiny", CacheDir: dir, Precompiled: pre, Progress: log.add}
		e, err := plugins.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e.Close()
		l := e.Load()
		if stages := log.stages(); !slices.Equal(stages, []plugins.Stage{plugins.StagePrecompiled}) || !l.Precompiled || l.Refused != nil {
			t.Fatalf("cache %q: stages %q, load %+v", dir, stages, l)
		}
		callTiny(t, e, "precompiled")
		if dir == "" {
			continue
		}
		// The next start reads the cache.
		if _, err := os.Stat(l.Path); err != nil {
			t.Fatal(err)
		}
		e2, err := plugins.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer e2.Close()
		if !e2.Load().Cached {
			t.Errorf("restart: %+v", e2.Load())
		}
	}
}

// A precompiled file that does not fit is refused with a clear reason,
// and the engine compiles instead: one for another target (its header
// says so), of another guest, or compiled with other settings (Wasmtime
// itself refuses it: the header cannot vouch for the module).
func TestPrecompiledRefused(t *testing.T) {
	foreignTarget, foreignNorm := "aarch64-unknown-linux-gnu", "aarch64-linux"
	if strings.HasPrefix(plugins.HostTarget(), "aarch64") {
		foreignTarget, foreignNorm = "x86_64-unknown-linux-gnu", "x86_64-linux"
	}
	wasm := tinyWasm(t, "compiled")
	native := precompile(t, wasm, "")
	head := strings.SplitAfter(string(header(t, native)), "\n")
	head[1] = foreignTarget + "\n"
	head[2] = strings.Replace(head[2], "target="+plugins.HostTarget(), "target="+foreignNorm, 1)
	foreign := writeTemp(t, append([]byte(strings.Join(head, "")), body(t, native)...))

	// The example compiled by an engine without epoch interruption.
	we := wasmtime.NewEngine()
	defer we.Close()
	m, err := wasmtime.NewModule(we, wasm)
	if err != nil {
		t.Fatal(err)
	}
	noEpoch, err := m.Serialize()
	m.Close()
	if err != nil {
		t.Fatal(err)
	}
	otherSettings := writeTemp(t, append(header(t, native), noEpoch...))

	for _, tt := range []struct {
		name, file, msg string
	}{
		{"other target", foreign, "compiled for " + foreignTarget + ", this machine is " + plugins.HostTarget()},
		{"other guest", precompile(t, tinyWasm(t, "other"), ""), "compiled from another guest"},
		{"other settings", otherSettings, "Wasmtime refused it: Module was compiled without epoch interruption"},
		{"no header", writeTemp(t, body(t, native)), "not a file written by plugins.Precompile"},
		{"missing", filepath.Join(t.TempDir(), "missing.cwasm"), "no such file"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log progressLog
			dir := t.TempDir() // the compiled example must not be in the cache
			e, err := plugins.New(plugins.Config{Wasm: wasm, Name: "tiny", CacheDir: dir, Precompiled: tt.file, Progress: log.add})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			l := e.Load()
			if !errors.Is(l.Refused, plugins.ErrPrecompiled) || !strings.Contains(l.Refused.Error(), tt.msg) {
				t.Errorf("refused: %v, want %q", l.Refused, tt.msg)
			}
			t.Logf("%v", l.Refused)
			want := []plugins.Stage{plugins.StagePrecompiledRefused, plugins.StageCompiling, plugins.StageCached}
			if stages := log.stages(); !slices.Equal(compact(stages), want) || log.all[0].Err != l.Refused {
				t.Errorf("stages %q, want %q", stages, want)
			}
			if l.Precompiled || l.Cached {
				t.Errorf("load %+v", l)
			}
			callTiny(t, e, "compiled")
			// Only the module it compiled is left in the cache (Wasmtime's
			// refusal removed the copy it was given).
			if ents, _ := os.ReadDir(dir); len(ents) != 1 || filepath.Join(dir, ents[0].Name()) != l.Path {
				t.Errorf("cache: %v", ents)
			}
		})
	}
}

// The Wasmtime library wasmtime-go links compiles for its own
// architecture only: Precompile refuses another one rather than let
// Wasmtime abort the process. For this architecture, an explicit triple
// (baseline CPU features, not this machine's) works.
func TestPrecompileTargets(t *testing.T) {
	host, foreign := "x86_64-unknown-linux-gnu", "aarch64-unknown-linux-gnu"
	if strings.HasPrefix(plugins.HostTarget(), "aarch64") {
		host, foreign = foreign, host
	}
	if !strings.HasSuffix(plugins.HostTarget(), "-linux") {
		t.Skip("not on Linux")
	}
	wasm := tinyWasm(t, "precompiled")
	err := plugins.Precompile(wasm, foreign, &bytes.Buffer{})
	if !errors.Is(err, plugins.ErrTargetUnsupported) {
		t.Errorf("%s: %v", foreign, err)
	}
	t.Log(err)
	pre := precompile(t, wasm, host)
	e, err := plugins.New(plugins.Config{Wasm: wasm, Precompiled: pre})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if !e.Load().Precompiled {
		t.Errorf("load %+v", e.Load())
	}
	callTiny(t, e, "precompiled")
}

func writeTemp(t *testing.T, b []byte) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "*.cwasm")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.Write(b); err != nil {
		t.Fatal(err)
	}
	return f.Name()
}

// header and body split a precompiled file after its fourth line.
func header(t *testing.T, path string) []byte {
	h, _ := split(t, path)
	return h
}

func body(t *testing.T, path string) []byte {
	_, b := split(t, path)
	return b
}

func split(t *testing.T, path string) ([]byte, []byte) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	n := 0
	for range 4 {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		n += len(line)
	}
	return b[:n], b[n:]
}

// tinyWasmFile is tinyWasm in a file, for a Config.WasmPath.
func tinyWasmFile(t *testing.T, reply string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tiny.wasm")
	if err := os.WriteFile(path, tinyWasm(t, reply), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// child compiles wasm into out in a process of its own: this test binary
// run again (see testMain), as lumen up runs lumen tool precompile.
func child(ctx context.Context, wasm, out string) error {
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "PLUGINS_TEST_PRECOMPILE_WASM="+wasm, "PLUGINS_TEST_PRECOMPILE_OUT="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("%w: %s", err, b)
	}
	return nil
}

// TestCompileApart compiles the guest in a process of its own
// (Config.Compile, here this test binary run again), loads what it wrote
// into the cache, and compiles in process when that process fails.
func TestCompileApart(t *testing.T) {
	wasmPath := tinyWasmFile(t, "apart")
	for _, tt := range []struct {
		name    string
		compile func(ctx context.Context, wasm, out string) error
	}{
		{"child", child},
		{"child fails", func(context.Context, string, string) error { return errors.New("no such program") }},
		{"child writes garbage", func(_ context.Context, _, out string) error { return os.WriteFile(out, []byte("garbage"), 0o644) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			calls := 0
			compile := func(ctx context.Context, wasm, out string) error {
				calls++
				if wasm != wasmPath || filepath.Dir(out) != dir {
					t.Errorf("compile %s into %s, want %s into the cache %s", wasm, out, wasmPath, dir)
				}
				return tt.compile(ctx, wasm, out)
			}
			var log progressLog
			e, err := plugins.New(plugins.Config{WasmPath: wasmPath, Name: "tiny", CacheDir: dir, Compile: compile, Progress: log.add})
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			callTiny(t, e, "apart")
			l := e.Load()
			if calls != 1 || l.Cached || l.Precompiled || filepath.Dir(l.Path) != dir {
				t.Errorf("compile called %d times, load %+v", calls, l)
			}
			if want := []plugins.Stage{plugins.StageCompiling, plugins.StageCached}; !slices.Equal(compact(log.stages()), want) {
				t.Errorf("stages %q, want %q", log.stages(), want)
			}
			// Only the compiled module is left: no temporary file.
			if ents, _ := os.ReadDir(dir); len(ents) != 1 || filepath.Join(dir, ents[0].Name()) != l.Path {
				t.Errorf("cache: %v", ents)
			}
			// The next start reads the cache.
			again, err := plugins.New(plugins.Config{WasmPath: wasmPath, Name: "tiny", CacheDir: dir, Compile: compile})
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			callTiny(t, again, "apart")
			if !again.Load().Cached || calls != 1 {
				t.Errorf("second start: load %+v, compile called %d times", again.Load(), calls)
			}
		})
	}
}

// TestCompileApartClosed: closing the Engine while the compiler process
// runs cancels it, and nothing is compiled in process instead.
func TestCompileApartClosed(t *testing.T) {
	wasmPath := tinyWasmFile(t, "apart")
	started, cancelled := make(chan struct{}), make(chan struct{})
	var log progressLog
	e := plugins.Start(plugins.Config{WasmPath: wasmPath, Name: "tiny", CacheDir: t.TempDir(), Progress: log.add,
		Compile: func(ctx context.Context, _, _ string) error {
			close(started)
			<-ctx.Done()
			close(cancelled)
			return ctx.Err()
		}})
	<-started
	_ = e.Close()
	select {
	case <-cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("closing the engine did not cancel the compiler")
	}
	<-e.Ready()
	if !errors.Is(e.Err(), plugins.ErrClosed) {
		t.Errorf("Err = %v, want ErrClosed", e.Err())
	}
	if stages := compact(log.stages()); slices.Contains(stages, plugins.StageCached) {
		t.Errorf("stages %q: compiled after Close", stages)
	}
}

// TestCompileOnce: engines starting together on an empty cache compile
// the guest once; the others wait for it and read it from the cache.
func TestCompileOnce(t *testing.T) {
	wasmPath := tinyWasmFile(t, "once")
	dir := t.TempDir()
	var calls atomic.Int32
	compile := func(ctx context.Context, wasm, out string) error {
		calls.Add(1)
		return child(ctx, wasm, out)
	}
	engines := make([]*plugins.Engine, 3)
	for i := range engines {
		engines[i] = plugins.Start(plugins.Config{WasmPath: wasmPath, Name: "tiny", CacheDir: dir, Compile: compile})
		defer engines[i].Close()
	}
	cached := 0
	for _, e := range engines {
		callTiny(t, e, "once")
		if e.Load().Cached {
			cached++
		}
	}
	if calls.Load() != 1 || cached != len(engines)-1 {
		t.Errorf("%d compiles and %d of %d engines read the cache, want 1 and %d", calls.Load(), cached, len(engines), len(engines)-1)
	}
}
