package machine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/dop251/goja"
)

// Matches reports whether a rule's from (a state name, "*" or
// "prefix/*") matches state.
func Matches(from, state string) bool {
	if from == "*" {
		return true
	}
	if prefix, ok := strings.CutSuffix(from, "*"); ok && strings.HasSuffix(prefix, "/") {
		return len(state) > len(prefix) && strings.HasPrefix(state, prefix)
	}
	return from == state
}

func (r *rule) matches(state string) bool {
	if !r.wild {
		return r.From == state
	}
	return r.prefix == "" || (len(state) > len(r.prefix) && strings.HasPrefix(state, r.prefix))
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
