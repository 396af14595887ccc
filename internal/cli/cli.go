// Package cli is the lumen command's logic: which light a command is
// for, its requests and their refusals in the user's words, what it
// prints, following events and reading journals. cmd/lumen is the
// commands' flags and help over it.
package cli

import (
	"io"
	"time"
)

// DefaultTimeout is how long a command waits for an answer by default.
const DefaultTimeout = 30 * time.Second

// Term is one command line's terminal and where it talks to: the
// --server, --light, --group, --json and --timeout flags, and the
// standard streams.
type Term struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	Server         string
	Light          string   // --light, settled by pick
	Group          string   // --group
	Several        []string // the lights of --light fleet or --group
	JSON           bool
	Timeout        Duration
	Self           string // this lumen binary, to run as a child; "" in tests
}

// UsageError marks mistakes in how a command was called (exit status 2).
type UsageError struct{ Err error }

func (e UsageError) Error() string { return e.Err.Error() }
func (e UsageError) Unwrap() error { return e.Err }

// Usage marks err as a mistake in how the command was called.
func Usage(err error) error { return UsageError{Err: err} }
