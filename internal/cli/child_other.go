//go:build !linux

package cli

import "os/exec"

// runTied runs cmd as is: only Linux ties a child's life to lumen's.
func runTied(cmd *exec.Cmd) ([]byte, error) { return cmd.CombinedOutput() }
