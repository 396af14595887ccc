// Package clip shortens text that goes into a message, a log line, a
// terminal or a prompt, without cutting a character in half: a cut
// UTF-8 sequence would show as garbage, or as U+FFFD once encoded as JSON.
package clip

import (
	"strings"
	"unicode/utf8"
)

// To returns s if it is at most n bytes long. Otherwise it returns the
// longest start of s of at most n bytes that ends between two characters,
// followed by tail, which marks the cut ("…", " …") and is not counted in n.
func To(s string, n int, tail string) string {
	if len(s) <= n {
		return s
	}
	n = max(n, 0)
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + tail
}

// Line is To for text shown on one line: runs of white space, line breaks
// included, become one space and the ends are trimmed before s is clipped.
func Line(s string, n int, tail string) string {
	return To(strings.Join(strings.Fields(s), " "), n, tail)
}
