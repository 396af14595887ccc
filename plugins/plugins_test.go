package plugins_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/plugins"
)

// fakeFetcher answers from a table of URLs, and fails for the others.
type fakeFetcher map[string]plugins.FetchResponse

func (f fakeFetcher) Fetch(_ context.Context, req plugins.FetchRequest) (plugins.FetchResponse, error) {
	r, ok := f[req.Method+" "+req.URL]
	if !ok {
		return plugins.FetchResponse{}, fmt.Errorf("%s is not allowed for this tool", req.URL)
	}
	return r, nil
}

func TestCall(t *testing.T) {
	e := jsEngine(t)
	fetch := fakeFetcher{
		"GET https://api.test/btc": {Status: 200, Headers: map[string]string{"Content-Type": "application/json"}, Body: `{"price": 64000.5}`},
	}
	tests := []struct {
		name, code, params string
		want               string
	}{
		{"params", "return params.a + 1", `{"a": 41}`, `42`},
		{"no params", "return typeof params", ``, `"object"`},
		{"object", "return {ok: true, list: [1, 'two', null], nested: {x: 1.5}}", `{}`, `{"ok":true,"list":[1,"two",null],"nested":{"x":1.5}}`},
		{"await fetch", `
			const r = await fetch('https://api.test/btc');
			const j = await r.json();
			return {status: r.status, price: j.price, type: r.headers['content-type']};`, `{}`,
			`{"status":200,"price":64000.5,"type":"application/json"}`},
		{"fetch body", "const r = await fetch('https://api.test/btc'); return JSON.parse(r.body).price > 60000", `{}`, `true`},
		{"caught fetch error", "try { await fetch('https://evil.test/') } catch (e) { return String(e) }", `{}`,
			`"TypeError: fetch https://evil.test/: https://evil.test/ is not allowed for this tool"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := e.Call(context.Background(), tt.code, json.RawMessage(tt.params), fetch)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

func TestCallErrors(t *testing.T) {
	e := jsEngine(t)
	tests := []struct {
		name, code   string
		want         error
		msg          string // in the message
		line, column int
	}{
		{"throw", "const a = 1;\nthrow new Error('no data')", plugins.ErrException, "Error: no data", 2, 7},
		{"fetch refused", "\nawait fetch('https://evil.test/')", plugins.ErrException, "not allowed for this tool", 2, 12},
		{"no fetcher", "await fetch('https://x.test/')", plugins.ErrException, "fetch is not available", 1, 12},
		{"syntax", "return {", plugins.ErrSyntax, "SyntaxError", 0, 0},
		{"undefined", "const x = 1", plugins.ErrInvalidResult, "returned nothing", 0, 0},
		{"function", "return () => 1", plugins.ErrInvalidResult, "result is a function", 0, 0},
		{"cycle", "const a = {}; a.self = a; return a", plugins.ErrInvalidResult, "result.self refers back to result", 0, 0},
		{"too deep", "let a = []; for (let i = 0; i < 1000; i++) a = [a]; return a", plugins.ErrInvalidResult, "nested more than 256 deep", 0, 0},
		{"too big", "return 'x'.repeat(2 << 20)", plugins.ErrInvalidResult, "more than 1048576", 0, 0},
		{"deep recursion", "function f() { return f() + 1 }\nreturn f()", plugins.ErrException, "maximum call stack size exceeded", 1, 24},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var f plugins.Fetcher = fakeFetcher{}
			if tt.name == "no fetcher" {
				f = nil
			}
			_, err := e.Call(context.Background(), tt.code, nil, f)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			var pe *plugins.Error
			errors.As(err, &pe)
			if !strings.Contains(pe.Message, tt.msg) || (tt.line != 0 && (pe.Line != tt.line || pe.Column != tt.column)) {
				t.Errorf("got %v, want %q at %d:%d", err, tt.msg, tt.line, tt.column)
			}
		})
	}
}

// Every call runs in a fresh instance: nothing a call leaves behind is
// seen by the next.
func TestIsolation(t *testing.T) {
	e := jsEngine(t)
	for i := range 3 {
		got, err := e.Call(context.Background(), "globalThis.n = (globalThis.n || 0) + 1; return globalThis.n", nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != "1" {
			t.Fatalf("call %d returned %s, want 1", i, got)
		}
	}
}

func TestHostile(t *testing.T) {
	e := jsEngine(t)
	tests := []struct {
		name, code string
		timeout    time.Duration // a ctx deadline shorter than the engine's
		want       error
	}{
		{"endless loop", "while (true) {}", 300 * time.Millisecond, plugins.ErrTimeout},
		{"endless async loop", "while (true) { await null }", 300 * time.Millisecond, plugins.ErrTimeout},
		{"memory bomb", "let s = 'x'; while (true) s += s", 0, plugins.ErrOutOfMemory},
		{"array bomb", "const a = []; while (true) a.push({n: a.length})", 0, plugins.ErrOutOfMemory},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			if tt.timeout > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.timeout)
				defer cancel()
			}
			start := time.Now()
			_, err := e.Call(ctx, tt.code, nil, nil)
			if !errors.Is(err, tt.want) {
				t.Fatalf("got %v, want %v", err, tt.want)
			}
			t.Logf("%v after %v", err, time.Since(start).Round(time.Millisecond))
			if tt.timeout > 0 && time.Since(start) > tt.timeout+time.Second {
				t.Errorf("stopped after %v, the deadline was %v", time.Since(start), tt.timeout)
			}
			// The engine goes on.
			got, err := e.Call(context.Background(), "return 7", nil, nil)
			if err != nil || string(got) != "7" {
				t.Fatalf("the next call: %s, %v", got, err)
			}
		})
	}
}

// The JavaScript guest has no module system, no process and no file
// system; under it, WASI shows a guest no arguments, no environment, no
// files and no network (the probe, a plain Go guest, looks).
func TestNothingLeaks(t *testing.T) {
	t.Setenv("LUMEN_SECRET_PROBE", "leaked")
	e := jsEngine(t)
	got, err := e.Call(context.Background(), `return [typeof require, typeof process, typeof Deno, typeof fs, typeof XMLHttpRequest, typeof WebAssembly]`, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["undefined","undefined","undefined","undefined","undefined","undefined"]`; string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}

	p, err := plugins.New(plugins.Config{Wasm: probeWasm, Name: "probe", CacheDir: cacheDir})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{})
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			close(accepted)
		}
	}()
	res, err := p.Run(context.Background(), plugins.Request{Params: json.RawMessage(`{"dial": "` + ln.Addr().String() + `"}`)})
	if err != nil {
		t.Fatal(err)
	}
	var seen struct {
		Args     []string `json:"args"`
		Env      []string `json:"env"`
		Files    []string `json:"files"`
		CreateOK bool     `json:"create_ok"`
		Dial     string   `json:"dial"`
	}
	if err := json.Unmarshal(res.Value, &seen); err != nil {
		t.Fatal(err)
	}
	if len(seen.Args) > 0 || len(seen.Env) > 0 || len(seen.Files) > 0 || seen.CreateOK || seen.Dial == "" {
		t.Errorf("the sandbox let out: %s", res.Value)
	}
	t.Logf("probe saw %s", res.Value)
	select {
	case <-accepted:
		t.Error("the guest connected to a host socket")
	case <-time.After(50 * time.Millisecond):
	}
	// stdout and stderr go to the call's log.
	if want := []string{"stdout: to stdout", "stderr: to stderr"}; !slices.Equal(res.Log, want) {
		t.Errorf("log %q, want %q", res.Log, want)
	}
}

func TestLog(t *testing.T) {
	e := jsEngine(t)
	res, err := e.Run(context.Background(), plugins.Request{Code: "log('price', 3, {a: 1}); console.log('done'); return null"})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{`price 3 {"a":1}`, "done"}; !slices.Equal(res.Log, want) {
		t.Errorf("log %q, want %q", res.Log, want)
	}
	// Bounded.
	res, err = e.Run(context.Background(), plugins.Request{Code: "for (let i = 0; i < 10000; i++) log('x'.repeat(100)); return 1"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(res.Log); n > plugins.DefaultMaxLog/100+1 || !strings.Contains(res.Log[n-1], "log cut") {
		t.Errorf("%d log lines, ending %q", n, res.Log[n-1])
	}
}

// The clock is the host's.
func TestNow(t *testing.T) {
	at := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	e, err := plugins.New(plugins.Config{Wasm: guestWasm, Name: "guest", CacheDir: cacheDir, Clock: clocktest.New(at)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.Call(context.Background(), "return [now(), new Date().toISOString()]", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf(`[%d,"2025-06-01T12:00:00.000Z"]`, at.UnixMilli()); string(got) != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// A plugin in plain Go runs through the same ABI and the same host.
func TestExampleGuest(t *testing.T) {
	e, err := plugins.New(plugins.Config{Wasm: exampleWasm, Name: "example", CacheDir: cacheDir, Clock: clocktest.New(time.UnixMilli(1234))})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	res, err := e.Run(context.Background(), plugins.Request{
		Params: json.RawMessage(`{"name": "lumen", "url": "https://api.test/ping"}`),
		Fetch:  fakeFetcher{"GET https://api.test/ping": {Status: 204}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"greeting":"hello, lumen","now":1234,"status":204}`; string(res.Value) != want {
		t.Errorf("got %s, want %s", res.Value, want)
	}
	if want := []string{"example: called for lumen"}; !slices.Equal(res.Log, want) {
		t.Errorf("log %q, want %q", res.Log, want)
	}
}

// Calls run in parallel, each in its own store.
func TestConcurrent(t *testing.T) {
	e := jsEngine(t)
	errs := make(chan error, 8)
	for i := range 8 {
		go func() {
			got, err := e.Call(context.Background(), "return params.i * 2", json.RawMessage(fmt.Sprintf(`{"i": %d}`, i)), nil)
			if err == nil && string(got) != fmt.Sprint(i*2) {
				err = fmt.Errorf("call %d returned %s", i, got)
			}
			errs <- err
		}()
	}
	for range 8 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// A memory cap below what the guest needs to start is out of memory too.
func TestTinyMemoryLimit(t *testing.T) {
	e, err := plugins.New(plugins.Config{Wasm: guestWasm, Name: "guest", CacheDir: cacheDir, MemoryLimit: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Call(context.Background(), "return 1", nil, nil); !errors.Is(err, plugins.ErrOutOfMemory) {
		t.Errorf("got %v, want out of memory", err)
	}
	_ = e.Close()
	if _, err := e.Call(context.Background(), "return 1", nil, nil); !errors.Is(err, plugins.ErrClosed) {
		t.Errorf("after Close: %v", err)
	}
}

func TestCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := jsEngine(t).Call(ctx, "return 1", nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}
