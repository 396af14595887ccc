package messages

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// Limits on what a light takes (README, "Limits"). Each refusal names the
// limit it hit. They keep one careless or hostile request from filling the
// journal, the memory of a Pi or the replies: a name is a word, not a
// document.
const (
	// MaxName bounds the names of states, rules, transitions, timers,
	// variables, schedules and tools, in characters.
	MaxName = 64
	// MaxValue bounds a variable's value, as JSON, in bytes.
	MaxValue = 64 << 10
	// MaxExpression bounds a condition, an action or a color channel's
	// expression, in bytes.
	MaxExpression = 4 << 10
	// MaxStates and MaxRules bound a light's configuration (the built-in
	// off state is not counted).
	MaxStates = 1000
	MaxRules  = 5000
	// MaxBody bounds a request's body, in bytes, except talk's (audio).
	MaxBody = 1 << 20
	// MaxPhrase bounds a learned intent's phrase, in bytes, and
	// MaxIntents how many intents a light keeps.
	MaxPhrase  = 256
	MaxIntents = 1000
)

// CheckName says what is wrong with a name of a kind ("state",
// "variable" …): empty, longer than MaxName characters, or holding
// whitespace, control or other unprintable characters. The name is quoted
// only as far as it is short enough to read.
func CheckName(kind, name string) error {
	if plainName(name) {
		return nil // the common case, checked on every input: no allocation
	}
	n := utf8.RuneCountInString(name)
	switch {
	case name == "":
		return fmt.Errorf("a %s name is empty; give it a name", kind)
	case n > MaxName:
		return fmt.Errorf("the %s name %s is %d characters long; names are at most %d characters", kind, Clip(name), n, MaxName)
	case !utf8.ValidString(name):
		return fmt.Errorf("the %s name %s is not valid UTF-8", kind, Clip(name))
	}
	for _, r := range name {
		if !unicode.IsPrint(r) || unicode.IsSpace(r) {
			return fmt.Errorf("the %s name %q holds %q; names are printable characters without spaces (use _ or -)", kind, name, r)
		}
	}
	return nil
}

// plainName reports whether name is 1 to MaxName printable ASCII
// characters other than space.
func plainName(name string) bool {
	if name == "" || len(name) > MaxName {
		return false
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c <= ' ' || c >= 0x7f {
			return false
		}
	}
	return true
}

// CheckValue says what is wrong with a variable's value as JSON: longer
// than MaxValue.
func CheckValue(name string, raw []byte) error {
	if len(raw) > MaxValue {
		return fmt.Errorf("the value of variable %s is %d bytes as JSON; a variable holds at most %d KiB", Clip(name), len(raw), MaxValue>>10)
	}
	return nil
}

// CheckExpression says what is wrong with an expression's source (what
// names where it is, e.g. "rule r4's condition"): longer than
// MaxExpression.
func CheckExpression(what, src string) error {
	if len(src) > MaxExpression {
		return fmt.Errorf("%s is %d bytes; an expression is at most %d KiB (move long logic into a tool)", what, len(src), MaxExpression>>10)
	}
	return nil
}

// Clip quotes s for a message, cut to a readable length.
func Clip(s string) string {
	const keep = 40
	if utf8.RuneCountInString(s) <= keep {
		return fmt.Sprintf("%q", s)
	}
	r := []rune(s)
	return fmt.Sprintf("%q…", string(r[:keep]))
}
