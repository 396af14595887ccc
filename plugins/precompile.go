package plugins

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/lumen-home/lumen/internal/atomicfile"
)

// PrecompileFile writes the guest at wasm compiled for target (Precompile)
// to out, atomically: a failed run leaves no partial file that lumen up
// would try. The file is readable by every user, as a release's is.
func PrecompileFile(wasm, target, out string) error {
	b, err := os.ReadFile(wasm)
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	if err := atomicfile.Write(out, 0o644, func(w io.Writer) error { return Precompile(b, target, w) }); err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	return nil
}

// CheckPrecompiled loads wasm with the precompiled file as lumen up does,
// into an empty cache so that nothing cached can stand in for it, and
// says how long that took. A refused file is an error at once: the
// compile the engine falls back to would take minutes on a Pi or under
// emulation, and answers nothing this check asks.
func CheckPrecompiled(ctx context.Context, wasm, file string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "lumen-precompile-check-")
	if err != nil {
		return 0, fmt.Errorf("precompile: %w", err)
	}
	defer os.RemoveAll(dir)
	stages := make(chan Progress, 16)
	e := Start(Config{WasmPath: wasm, Name: "guest", CacheDir: dir, Precompiled: file,
		Progress: func(p Progress) {
			select {
			case stages <- p:
			default:
			}
		}})
	for {
		select {
		case <-ctx.Done():
			return 0, fmt.Errorf("precompile: %w", ctx.Err())
		case p := <-stages:
			switch p.Stage {
			case StagePrecompiled:
				<-e.Ready()
				_ = e.Close()
				if err := e.Err(); err != nil {
					return 0, fmt.Errorf("precompile: %s was read but the guest did not load: %w", file, err)
				}
				return p.Elapsed, nil
			case StagePrecompiledRefused:
				// The engine compiles next: leave it to the process's exit.
				return 0, fmt.Errorf("precompile: lumen up would not use %s: %w", file, p.Err)
			case StageFailed:
				return 0, fmt.Errorf("precompile: the guest %s failed to load: %w", wasm, p.Err)
			case StageCacheHit, StageCompiling:
				return 0, fmt.Errorf("precompile: the guest did not come from %s (stage %q)", file, p.Stage)
			}
		}
	}
}
