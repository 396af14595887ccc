package main

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/lumen-home/lumen/internal/cli"
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
				wasm = plugins.FindGuest()
			}
			if wasm == "" {
				return errors.New("the tools' guest (guest.wasm) is not installed: build it with the Taskfile's guest task, or give --wasm")
			}
			if check {
				if out != "" || target != "" {
					return cli.Usage(errors.New("--check takes neither -o nor --target"))
				}
				file := plugins.FindPrecompiled(wasm)
				if len(argv) == 1 {
					file = argv[0]
				}
				if file == "" {
					return fmt.Errorf("no precompiled guest found: give FILE, set $LUMEN_GUEST_CWASM, or put guest-%s.cwasm beside the binary", plugins.HostArch())
				}
				took, err := plugins.CheckPrecompiled(cmd.Context(), wasm, file)
				if err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "lumen: %s loads precompiled for %s (%s, %.1f s)\n", file, plugins.HostArch(), wasm, took.Seconds())
				return nil
			}
			if len(argv) != 0 || out == "" {
				return cli.Usage(errors.New("give -o FILE (or --check [FILE])"))
			}
			return plugins.PrecompileFile(wasm, target, out)
		},
	}
	f := cmd.Flags()
	f.StringVar(&wasm, "wasm", "", "the guest to compile (default: the one 'lumen up' uses)")
	f.StringVarP(&out, "out", "o", "", "where to write the precompiled guest (e.g. guest-aarch64.cwasm)")
	f.StringVar(&target, "target", "", "a target triple of this binary's architecture (default: this machine's; its baseline CPU either way)")
	f.BoolVar(&check, "check", false, "check that FILE loads as lumen up would load it, without compiling")
	return cmd
}
