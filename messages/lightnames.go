package messages

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The names people use for a light: its room and its aliases, read by
// the local understanding of everyday commands ("turn on the bedroom
// lamp"). They are kept as people say them, lower-case with single
// spaces, so that matching an utterance is a plain comparison.
const (
	// MaxLightName bounds a room or an alias, in characters.
	MaxLightName = 40
	// MaxAliases bounds how many aliases a light has.
	MaxAliases = 16
)

// NormalLightName returns a room or an alias as the light keeps it, and
// what is wrong with it: lower-case, each run of spaces one space, no
// space at either end, a typographic apostrophe (’, as phones type it)
// the plain one; 1 to MaxLightName characters of letters, digits,
// spaces, '-', '_' and apostrophes. key names it in the error ("room",
// "aliases[2]").
func NormalLightName(key, name string) (string, error) {
	if !utf8.ValidString(name) {
		return "", fmt.Errorf("%s %s is not valid UTF-8", key, Clip(name))
	}
	var b strings.Builder
	space := false
	for _, r := range strings.ToLower(name) {
		switch {
		case r == ' ':
			space = true
			continue
		case r == '’':
			r = '\''
		case unicode.IsLetter(r), unicode.IsDigit(r), r == '-', r == '_', r == '\'':
		default:
			return "", fmt.Errorf("%s %q holds %q; a room or an alias is letters, digits, spaces, '-', '_' and apostrophes only", key, name, r)
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	norm := b.String()
	switch n := utf8.RuneCountInString(norm); {
	case n == 0:
		what := "is empty"
		if name != "" {
			what = "is only spaces"
		}
		return "", fmt.Errorf("%s %q %s; give it 1 to %d characters, or leave it out", key, name, what, MaxLightName)
	case n > MaxLightName:
		return "", fmt.Errorf("%s %s is %d characters long; a room or an alias is at most %d", key, Clip(name), n, MaxLightName)
	}
	return norm, nil
}

// NormalLightNames checks a light's room ("" for none) and aliases as
// NormalLightName does each, and that there are at most MaxAliases
// aliases, no two the same once normalised; it returns them as the light
// keeps them, the aliases in their order (nil for none). An alias may be
// the room's name.
func NormalLightNames(room string, aliases []string) (string, []string, error) {
	if room != "" {
		r, err := NormalLightName("room", room)
		if err != nil {
			return "", nil, err
		}
		room = r
	}
	if len(aliases) > MaxAliases {
		return "", nil, fmt.Errorf("aliases lists %d names; a light has at most %d", len(aliases), MaxAliases)
	}
	var out []string
	seen := make(map[string]int, len(aliases))
	for i, a := range aliases {
		n, err := NormalLightName(fmt.Sprintf("aliases[%d]", i), a)
		if err != nil {
			return "", nil, err
		}
		if j, dup := seen[n]; dup {
			return "", nil, fmt.Errorf("aliases[%d] %q is aliases[%d] %q again (both are %q); list each name once", i, a, j, aliases[j], n)
		}
		seen[n] = i
		out = append(out, n)
	}
	return room, out, nil
}

// VerbSetNames sets a light's room, its aliases or both, leaving the
// rest of its configuration as it is: NamesRequest.
const VerbSetNames = "set_names"

// OpSetNames is the config op of set_names (InConfigData.Op): Room and
// Aliases as given, KeepRoom and KeepAliases for the part not given.
const OpSetNames = "set_names"

// NamesRequest is the body of set_names:
// {"room":"bedroom","aliases":["bedroom lamp","bedside"]}. Each key
// given replaces that part, checked as apply checks it; a key left out
// keeps it: "room":"" clears the room, "aliases":[] the aliases. {} sets
// nothing and is refused.
type NamesRequest struct {
	Room    *string   `json:"room,omitempty"`
	Aliases *[]string `json:"aliases,omitempty"`
}

// Input is the set_names config input of r, or an error when it sets
// nothing or its names are not names (NormalLightNames's sentences).
// The names stay as given: the light normalises them, so that replay
// does the same.
func (r NamesRequest) Input() (InConfigData, error) {
	if r.Room == nil && r.Aliases == nil {
		return InConfigData{}, fmt.Errorf(`set_names sets nothing; give "room", "aliases" or both, e.g. {"room":"bedroom","aliases":["bedroom lamp","bedside"]} ("room":"" clears the room, "aliases":[] the aliases)`)
	}
	in := InConfigData{Op: OpSetNames, KeepRoom: r.Room == nil, KeepAliases: r.Aliases == nil}
	if r.Room != nil {
		in.Room = *r.Room
	}
	if r.Aliases != nil {
		in.Aliases = *r.Aliases
	}
	if _, _, err := NormalLightNames(in.Room, in.Aliases); err != nil {
		return InConfigData{}, err
	}
	return in, nil
}
