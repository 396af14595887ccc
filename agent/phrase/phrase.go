// Package phrase reads a spoken request the way the agent's direct
// commands do, with no model: its words, the filler words around a
// command, the words that make a request more than a command (time,
// conditions, the past), and the normal form under which a learned
// intent is kept, so that "Make it cosy please!" and "make it cosy" are
// one phrase. It is pure: the agent matches requests with it, and the
// light's service normalizes the phrases of learn_intent and
// delete_intent with it.
package phrase

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
)

// fillers are words a direct command may carry around what it names.
var fillers = set("please", "now", "can", "could", "would", "will", "you", "the", "light", "lamp", "it", "its",
	"make", "turn", "set", "switch", "go", "to", "a", "an", "me", "just", "kindly", "hey", "lumen", "be",
	"change", "color", "colour", "mode", "state", "thanks", "thank", "ok", "okay", "into", "of", "on")

// toModel are words that make a request more than a direct command:
// time, conditions, counts, references to the past or to what was said.
var toModel = set("back", "again", "undo", "that", "this", "for", "until", "then", "when", "whenever", "if",
	"after", "before", "every", "each", "times", "clicks", "minutes", "minute", "seconds", "second", "hours", "hour",
	"while", "unless", "and", "or", "but", "not", "dont", "don't", "never", "always", "later", "tomorrow", "tonight",
	"in", "at", "is", "why", "what", "how", "which", "who", "create", "add", "delete", "remove", "rule", "rules",
	"schedule", "timer", "weather", "slowly", "fade", "blink", "flash", "pulse", "random")

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// Words returns text's words, lowercased: letters and digits, with _, -
// and inner apostrophes ("i'm") kept in a word.
func Words(text string) []string {
	var words []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' && r != '-' && r != '\''
	}) {
		if w = strings.Trim(w, "'"); w != "" {
			words = append(words, w)
		}
	}
	return words
}

// Filler reports whether w (a word of Words) is a polite or filler word
// a command may carry: please, it, the light, make, turn …
func Filler(w string) bool { return fillers[w] }

// NeedsModel reports whether w (a word of Words) makes a request more
// than a direct command: a time or a count (a digit, "minutes"), a
// condition, a reference to the past or to what was said ("back",
// "again", "that"), or a change of the configuration.
func NeedsModel(w string) bool {
	return toModel[w] || strings.IndexFunc(w, unicode.IsDigit) >= 0
}

// Normal is text's normal form: its words without the filler words,
// joined by one space. Normal(Normal(s)) == Normal(s).
func Normal(text string) string {
	var kept []string
	for _, w := range Words(text) {
		if !fillers[w] {
			kept = append(kept, w)
		}
	}
	return strings.Join(kept, " ")
}

// MaxWords bounds a learned phrase, in words of its normal form: a
// command is a few words, not a story.
const MaxWords = 12

// ErrEmpty is a phrase with nothing but filler words.
var ErrEmpty = errors.New("phrase: nothing but filler words")

// Learnable returns text's normal form when a request of these words may
// be learned as an intent, or says why not: it is empty, too long, or
// holds a word that ties it to its moment or its context (NeedsModel:
// back, again, undo, that, for, until, then, a number …), so the same
// words would not mean the same thing next time.
func Learnable(text string) (string, error) {
	p := Normal(text)
	words := strings.Fields(p)
	switch {
	case len(words) == 0:
		return "", ErrEmpty
	case len(words) > MaxWords:
		return "", fmt.Errorf("phrase: %q has %d words besides the filler words; a learned phrase has at most %d", p, len(words), MaxWords)
	}
	for _, w := range words {
		if NeedsModel(w) {
			return "", fmt.Errorf("phrase: %q says %q: a time, a count, a condition or a reference to what came before, so it is never learned", p, w)
		}
	}
	return p, nil
}
