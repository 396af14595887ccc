package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/plugins"
)

// newToolPrecompile is `lumen tool precompile`, hidden: release tooling,
// not something a user of the light needs. Wasmtime here compiles for
// this binary's own architecture only (plugins.Precompile), so the
// aarch64 guest of a Pi release is written by the arm64 build of lumen,
// run on an arm64 machine or under qemu-aarch64-static (the Taskfile's
// release task).
func newToolPrecompile() *cobra.Command {
	var (
		wasm, out, target string
		check             bool
	)
	cmd := &cobra.Command{
		Use:    "precompile (-o FILE | --check [FILE])",
		Short:  "Compile the tools' guest ahead of time for a release, or check that a precompiled guest loads",
		Hidden: true,
		Long: `Compile the JavaScript guest of custom tools (guest.wasm) for this
binary's architecture and write it where 'lumen up' finds it, so that the
machine it ships to never compiles it: guest-<arch>.cwasm beside the
binary or beside guest.wasm (or $LUMEN_GUEST_CWASM).

--check loads FILE (default: the file 'lumen up' would find) the way
'lumen up' does, into an empty compile cache, and fails unless the guest
comes from it rather than from compiling.`,
		Example: `  qemu-aarch64-static lumen-linux-arm64 tool precompile -o guest-aarch64.cwasm
  qemu-aarch64-static lumen-linux-arm64 tool precompile --check`,
		Args: args(cobra.MaximumNArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			if wasm == "" {
				wasm = guestWasm()
			}
			if wasm == "" {
				return errors.New("the tools' guest (guest.wasm) is not installed: build it with the Taskfile's guest task, or give --wasm")
			}
			if check {
				if out != "" || target != "" {
					return usageError{errors.New("--check takes neither -o nor --target")}
				}
				file := guestPrecompiled(wasm)
				if len(argv) == 1 {
					file = argv[0]
				}
				if file == "" {
					return fmt.Errorf("no precompiled guest found: give FILE, set $LUMEN_GUEST_CWASM, or put guest-%s.cwasm beside the binary", plugins.HostArch())
				}
				took, err := checkPrecompiled(cmd.Context(), wasm, file)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "lumen: %s loads precompiled for %s (%s, %.1f s)\n", file, plugins.HostArch(), wasm, took.Seconds())
				return nil
			}
			if len(argv) != 0 || out == "" {
				return usageError{errors.New("give -o FILE (or --check [FILE])")}
			}
			return precompileGuest(wasm, target, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&wasm, "wasm", "", "the guest to compile (default: the one 'lumen up' uses)")
	f.StringVarP(&out, "out", "o", "", "where to write the precompiled guest (e.g. guest-aarch64.cwasm)")
	f.StringVar(&target, "target", "", "a target triple of this binary's architecture (default: this machine's; its baseline CPU either way)")
	f.BoolVar(&check, "check", false, "check that FILE loads as lumen up would load it, without compiling")
	return cmd
}

// precompileGuest writes the guest at wasm compiled for target to out,
// through a temporary file so that a failed run leaves no partial file
// that lumen up would try.
func precompileGuest(wasm, target, out string) error {
	b, err := os.ReadFile(wasm)
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	var buf bytes.Buffer
	if err := plugins.Precompile(b, target, &buf); err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(out), ".precompile-*")
	if err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("precompile: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	// CreateTemp makes it 0600; the release's file is read by whichever
	// user runs lumen on the Pi.
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("precompile: %w", err)
	}
	return nil
}

// checkPrecompiled loads wasm with the precompiled file as lumen up
// does, into an empty cache so that nothing cached can stand in for it,
// and says how long that took. A refused file is an error at once: the
// compile the engine falls back to would take minutes on a Pi or under
// emulation, and answers nothing this check asks.
func checkPrecompiled(ctx context.Context, wasm, file string) (time.Duration, error) {
	dir, err := os.MkdirTemp("", "lumen-precompile-check-")
	if err != nil {
		return 0, fmt.Errorf("precompile: %w", err)
	}
	defer os.RemoveAll(dir)
	stages := make(chan plugins.Progress, 16)
	e := plugins.Start(plugins.Config{WasmPath: wasm, Name: "guest", CacheDir: dir, Precompiled: file,
		Progress: func(p plugins.Progress) {
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
			case plugins.StagePrecompiled:
				<-e.Ready()
				_ = e.Close()
				if err := e.Err(); err != nil {
					return 0, fmt.Errorf("precompile: %s was read but the guest did not load: %w", file, err)
				}
				return p.Elapsed, nil
			case plugins.StagePrecompiledRefused:
				// The engine compiles next: leave it to the process's exit.
				return 0, fmt.Errorf("precompile: lumen up would not use %s: %w", file, p.Err)
			case plugins.StageFailed:
				return 0, fmt.Errorf("precompile: the guest %s failed to load: %w", wasm, p.Err)
			case plugins.StageCacheHit, plugins.StageCompiling:
				return 0, fmt.Errorf("precompile: the guest did not come from %s (stage %q)", file, p.Stage)
			}
		}
	}
}
