package plugins_test

import (
	"context"
	"encoding/json"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lumen-home/lumen/plugins"
)

// A trivial tool on a fresh instance of the JavaScript guest, the
// compiled module in memory.
func BenchmarkCallWarm(b *testing.B) {
	e := jsEngine(b)
	params := json.RawMessage(`{"a": 1}`)
	for b.Loop() {
		if _, err := e.Call(context.Background(), "return params.a + 1", params, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// The same after a restart: the compiled module read from the disk cache,
// then one call.
func BenchmarkCallCold(b *testing.B) {
	jsEngine(b) // the cache is filled
	for b.Loop() {
		e, err := plugins.New(plugins.Config{Wasm: guestWasm, Name: "guest", CacheDir: cacheDir})
		if err != nil {
			b.Fatal(err)
		}
		if !e.Load().Cached {
			b.Fatal("not from the disk cache")
		}
		if _, err := e.Call(context.Background(), "return 1", nil, nil); err != nil {
			b.Fatal(err)
		}
		_ = e.Close()
	}
}

// The baseline: a store, WASI and an instance of the same module, as a
// call makes them, without running anything.
func BenchmarkInstantiate(b *testing.B) {
	e := jsEngine(b)
	for b.Loop() {
		if err := e.Instantiate(); err != nil {
			b.Fatal(err)
		}
	}
}

// A trivial call of the plain Go example guest, for comparison.
func BenchmarkCallExample(b *testing.B) {
	e, err := plugins.New(plugins.Config{Wasm: exampleWasm, Name: "example", CacheDir: cacheDir})
	if err != nil {
		b.Fatal(err)
	}
	defer e.Close()
	for b.Loop() {
		if _, err := e.Call(context.Background(), "", json.RawMessage(`{"name": "x"}`), nil); err != nil {
			b.Fatal(err)
		}
	}
}

// Memory per live instance: n calls held inside fetch at once; the
// resident set grows by about n instances.
func BenchmarkLiveInstanceMemory(b *testing.B) {
	e := jsEngine(b)
	const n = 20
	for b.Loop() {
		before := rss(b)
		var arrived sync.WaitGroup
		arrived.Add(n)
		release := make(chan struct{})
		hold := plugins.FetcherFunc(func(ctx context.Context, _ plugins.FetchRequest) (plugins.FetchResponse, error) {
			arrived.Done()
			<-release
			return plugins.FetchResponse{Status: 200, Body: "{}"}, nil
		})
		var done sync.WaitGroup
		for range n {
			done.Go(func() {
				if _, err := e.Call(context.Background(), "const a = []; for (let i = 0; i < 1000; i++) a.push({i}); await fetch('https://x.test/'); return a.length", nil, hold); err != nil {
					b.Error(err)
				}
			})
		}
		arrived.Wait()
		during := rss(b)
		close(release)
		done.Wait()
		b.ReportMetric(float64(during-before)/n/(1<<20), "MiB/instance")
	}
}

// rss is the process's resident set size in bytes.
func rss(tb testing.TB) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		tb.Skip("no /proc/self/status")
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb << 10
		}
	}
	tb.Skip("no VmRSS")
	return 0
}
