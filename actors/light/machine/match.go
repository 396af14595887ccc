package machine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// Where a rule is matched: a rule's from is a state name, "*" for any
// state, or "prefix/*" for the states under prefix/. wildcard reads it,
// rule.matches applies it, and a transIndex gives, for a transition and a
// state, the rules to try in order.

// wildcard reports whether from is "*" or "prefix/*", and the prefix
// ("prefix/", or "" for "*"). No state may be named so.
func wildcard(from string) (prefix string, ok bool) {
	if from == "*" {
		return "", true
	}
	if p, ok := strings.CutSuffix(from, "*"); ok && strings.HasSuffix(p, "/") {
		return p, true
	}
	return "", false
}

// matches reports whether the rule's from matches state. A prefix matches
// the states under it, not itself.
func (r *rule) matches(state string) bool {
	if !r.wild {
		return r.From == state
	}
	return underPrefix(r.prefix, state)
}

func underPrefix(prefix, state string) bool {
	return prefix == "" || (len(state) > len(prefix) && strings.HasPrefix(state, prefix))
}

// FromMatches reports whether a rule's from (a state, "*", or
// "prefix/*") matches state, as the machine matches it.
func FromMatches(from, state string) bool {
	if prefix, ok := wildcard(from); ok {
		return underPrefix(prefix, state)
	}
	return from == state
}

// transIndex holds the enabled rules of one transition, by exact from
// state and as one list of wildcard rules, and caches per state the merged
// candidates in trial order. Any configuration change rebuilds it.
type transIndex struct {
	js    goja.Value // the transition name as a JS string
	exact map[string][]*rule
	wild  []*rule
	cache map[string][]*rule
}

func newTransIndex(js goja.Value) *transIndex {
	return &transIndex{js: js, exact: make(map[string][]*rule), cache: make(map[string][]*rule)}
}

// add indexes an enabled rule, in insertion order.
func (ti *transIndex) add(r *rule) {
	if r.wild {
		ti.wild = append(ti.wild, r)
	} else {
		ti.exact[r.From] = append(ti.exact[r.From], r) // matches: From == state
	}
}

// candidates returns the rules whose from matches state, by priority
// (highest first), then insertion order.
func (ti *transIndex) candidates(state string) []*rule {
	if l, ok := ti.cache[state]; ok {
		return l
	}
	ex := ti.exact[state]
	l := make([]*rule, 0, len(ex)+len(ti.wild))
	l = append(l, ex...)
	for _, r := range ti.wild {
		if r.matches(state) {
			l = append(l, r)
		}
	}
	slices.SortFunc(l, func(a, b *rule) int {
		if a.Priority != b.Priority {
			return cmp.Compare(b.Priority, a.Priority)
		}
		return cmp.Compare(a.ord, b.ord)
	})
	ti.cache[state] = l
	return l
}
