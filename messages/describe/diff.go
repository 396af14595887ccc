package describe

import (
	"fmt"
	"strings"

	udiff "github.com/aymanbagabas/go-udiff"
)

// diffContext is the unchanged lines shown around a change, as diff -u.
const diffContext = 3

// Diff writes how before turns into after (two configurations as lumen
// export prints them) as a unified diff: a Myers line diff, in hunks of
// the changed lines with diffContext lines around them, under the labels
// of the two sides. It is "" when they are the same.
func Diff(fromLabel, toLabel, before, after string) string {
	if before == after {
		return ""
	}
	before, after = endLine(before), endLine(after)
	out, err := udiff.ToUnified(fromLabel, toLabel, before, udiff.Lines(before, after), diffContext)
	if err != nil { // the edits are made from before: cannot happen
		return err.Error()
	}
	return out
}

// endLine ends a non-empty text with a newline, so that a last line
// without one does not read as a change.
func endLine(s string) string {
	if s != "" && !strings.HasSuffix(s, "\n") {
		return s + "\n"
	}
	return s
}

// ConfigLabel names a side of a diff of a light's configuration: after
// input seq, or before any configuration (seq 0).
func ConfigLabel(light string, seq uint64) string {
	if seq == 0 {
		return fmt.Sprintf("light %s before any configuration", light)
	}
	return fmt.Sprintf("light %s after input %d", light, seq)
}
