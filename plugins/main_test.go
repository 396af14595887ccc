package plugins_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"github.com/lumen-home/lumen/plugins"
)

// The guests the tests run. The JavaScript guest is LUMEN_GUEST_WASM (set
// by task test to the one task guest built) or built here; the others are
// always built here. Compiled modules go to one cache shared by every
// run (LUMEN_PLUGIN_CACHE, or .cache/plugins/compiled at the repository's
// root), so only the first run pays the compile.
var (
	guestWasm, exampleWasm, probeWasm []byte
	cacheDir                          string

	engineOnce sync.Once
	engine     *plugins.Engine
	engineErr  error
)

func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	if out := os.Getenv("PLUGINS_TEST_PRECOMPILE_OUT"); out != "" {
		// The compiler process of TestCompileApart.
		if err := plugins.PrecompileFile(os.Getenv("PLUGINS_TEST_PRECOMPILE_WASM"), "", out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		return 0
	}
	tmp, err := os.MkdirTemp("", "plugins-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	guest := os.Getenv("LUMEN_GUEST_WASM")
	if guest == "" {
		guest = filepath.Join(tmp, "guest.wasm")
		if err := buildGuest("./guest", guest); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	for _, g := range []struct {
		pkg, out string
		dst      *[]byte
	}{
		{"", guest, &guestWasm},
		{"./example", filepath.Join(tmp, "example.wasm"), &exampleWasm},
		{"./testdata/probe", filepath.Join(tmp, "probe.wasm"), &probeWasm},
	} {
		if g.pkg != "" {
			if err := buildGuest(g.pkg, g.out); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
		if *g.dst, err = os.ReadFile(g.out); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	if cacheDir = os.Getenv("LUMEN_PLUGIN_CACHE"); cacheDir == "" {
		if cacheDir, err = filepath.Abs("../.cache/plugins/compiled"); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	// The JavaScript guest loads in the background, as the daemon's
	// does, while the tests that do not need it run.
	said := false // Progress hears one report at a time
	engine = plugins.Start(plugins.Config{Wasm: guestWasm, Name: "guest", CacheDir: cacheDir, Progress: func(p plugins.Progress) {
		switch p.Stage {
		case plugins.StageCompiling:
			if !said {
				said = true
				fmt.Fprintf(os.Stderr, "plugins: compiling the JavaScript guest (first run only)…\n")
			}
		case plugins.StageCached, plugins.StageFailed:
			fmt.Fprintf(os.Stderr, "plugins: %s after %.1f s\n", p.Stage, p.Elapsed.Seconds())
		}
	}})
	code := m.Run()
	if engine != nil {
		_ = engine.Close()
	}
	return code
}

func buildGuest(pkg, out string) error {
	cmd := exec.Command("go", "build", "-o", out, pkg)
	cmd.Env = append(os.Environ(), "GOOS=wasip1", "GOARCH=wasm")
	if b, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("building %s: %v\n%s", pkg, err, b)
	}
	return nil
}

// jsEngine is the JavaScript guest's engine shared by the tests, with the
// default limits, once it is ready.
func jsEngine(tb testing.TB) *plugins.Engine {
	tb.Helper()
	engineOnce.Do(func() {
		<-engine.Ready()
		if engineErr = engine.Err(); engineErr == nil {
			l := engine.Load()
			fmt.Fprintf(os.Stderr, "plugins: JavaScript guest (%d bytes) loaded in %v (from the disk cache: %v)\n", len(guestWasm), l.Duration, l.Cached)
		}
	})
	if engineErr != nil {
		tb.Fatal(engineErr)
	}
	return engine
}
