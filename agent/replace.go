package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// Creating a state, tool, function, data source, schedule or custom
// transition under a name the light has replaces the old one: the old
// one is gone as if deleted, so the call needs what the delete tool
// needs. Otherwise a request could replace a token-protected webhook
// source, unasked, that it could not delete without approval.

// replacer is what a create tool replaces.
type replacer struct {
	what   string // for the person: "data source"
	delete string // the tool that deletes one
	// list: the key of a batch of them in the arguments ("states"), as
	// the light's verb takes it; "" when the verb takes one only.
	list string
	// exists lists the names of the light's ones.
	exists func(m *messages.GetReply) []string
	// makers are the tools whose successful calls make one.
	makers []string
}

// replacerOf is what a call of tool name replaces, if it creates.
func replacerOf(name string) (replacer, bool) {
	t := tools()[name]
	if t.replaces == nil {
		return replacer{}, false
	}
	return *t.replaces, true
}

func namesOf[T any](items []T, name func(T) string) []string {
	out := make([]string, 0, len(items))
	for _, it := range items {
		out = append(out, name(it))
	}
	return out
}

// sourceNames lists the light's data sources, or only its custom
// transitions (sources of type transition).
func sourceNames(m *messages.GetReply, transitions bool) []string {
	var out []string
	for _, raw := range m.Sources {
		var s struct {
			Name string `json:"name"`
			Type string `json:"type"`
		}
		if json.Unmarshal(raw, &s) != nil {
			continue
		}
		if !transitions || datasource.CanonicalType(s.Type) == datasource.TypeTransition {
			out = append(out, s.Name)
		}
	}
	return out
}

// namesIn returns the names a call of a create tool with args makes:
// its "name", and those of a batch ("states": […]) the light's verb
// takes too. The arguments are decoded as the light decodes them (keys
// in any case, the last of repeated ones), so no spelling of a name
// escapes.
func (r replacer) namesIn(args json.RawMessage) []string {
	type named struct {
		Name string `json:"name"`
	}
	var a struct {
		Name      string  `json:"name"`
		States    []named `json:"states"`
		Tools     []named `json:"tools"`
		Functions []named `json:"functions"`
	}
	_ = json.Unmarshal(args, &a) // a value of the wrong type leaves the others decoded
	var out []string
	if a.Name != "" {
		out = append(out, a.Name)
	}
	batch := map[string][]named{"states": a.States, "tools": a.Tools, "functions": a.Functions}[r.list]
	for _, it := range batch {
		if it.Name != "" && !slices.Contains(out, it.Name) {
			out = append(out, it.Name)
		}
	}
	return out
}

// replaces returns the tier a create call needs for what it replaces
// (the strictest tier of the delete tool on each name; autonomous when
// it replaces nothing), and what it replaces in words for the person,
// e.g. `replaces the existing data source "doorbell"`. What calls of
// done (the same request) made is the request's own work: replacing it
// needs nothing more, as switching its own rules does not.
func (t *Tools) replaces(ctx context.Context, name string, args json.RawMessage, done []messages.ToolStep) (tier, note string) {
	r, ok := replacerOf(name)
	if !ok {
		return messages.TierAutonomous, ""
	}
	names := r.namesIn(args)
	if len(names) == 0 {
		return messages.TierAutonomous, "" // the light refuses it
	}
	m, err := t.get(ctx)
	if err != nil {
		// Unknown: the call may replace one, so it needs what a delete
		// needs.
		return t.baseTier(ctx, r.delete, nameArgs(names[0]), done), fmt.Sprintf("may replace an existing %s (the light could not be read: %v)", r.what, err)
	}
	have := r.exists(m)
	own := map[string]bool{}
	for _, c := range done {
		if c.OK && slices.Contains(r.makers, c.Tool) {
			made, _ := replacerOf(c.Tool)
			for _, n := range made.namesIn(c.Args) {
				own[n] = true
			}
		}
	}
	tier = messages.TierAutonomous
	var gone []string
	for _, n := range names {
		if !slices.Contains(have, n) || own[n] {
			continue
		}
		gone = append(gone, fmt.Sprintf("%q", n))
		tier = stricter(tier, t.baseTier(ctx, r.delete, nameArgs(n), done))
	}
	switch len(gone) {
	case 0:
		return tier, ""
	case 1:
		return tier, fmt.Sprintf("replaces the existing %s %s", r.what, gone[0])
	}
	return tier, fmt.Sprintf("replaces the existing %ss %s", r.what, strings.Join(gone, ", "))
}

func nameArgs(name string) json.RawMessage {
	b, _ := json.Marshal(map[string]string{"name": name})
	return b
}

// stricter returns the tier of a and b that needs more permission.
func stricter(a, b string) string {
	rank := func(t string) int {
		switch t {
		case messages.TierForbidden:
			return 2
		case messages.TierConfirm:
			return 1
		}
		return 0
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
