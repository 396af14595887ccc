package machine

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/lumen-home/lumen/actors/source/datasource"
	"github.com/lumen-home/lumen/messages"
)

// Data source definitions are part of the model like custom tools: checked
// here, journaled as config inputs (create_source, delete_source, apply)
// and replayed. The machine never runs a source; the source actors do, and
// journal each run as a data input (dataInput).
//
// The machine checks a definition's structure and that its tool exists at
// that point of the journal, which replay reproduces. The minimum interval
// is the operator's policy, checked by the service before anything is
// journaled, so that replay does not depend on it: here any interval of at
// least machineMinInterval is accepted.
const machineMinInterval = time.Millisecond

// sourceDef is one accepted definition and its canonical JSON.
type sourceDef struct {
	def datasource.Def
	raw json.RawMessage
}

func (c *core) sourceList() []json.RawMessage {
	out := make([]json.RawMessage, len(c.sources))
	for i, s := range c.sources {
		out[i] = slices.Clone(s.raw)
	}
	return out
}

// SourceList returns the data sources' definitions (canonical JSON of
// datasource.Def) in definition order, never nil.
func (m *Machine) SourceList() []json.RawMessage { return m.c.sourceList() }

func mergeSources(base, add []*sourceDef) []*sourceDef {
	return mergeByName(base, add, func(s *sourceDef) string { return s.def.Name })
}

// toolNames returns the names a source may fetch with: the built-in tools,
// the given custom tools and the plugins the input names.
//
// The machine does not know the operator's plugins (<data>/plugins, read
// by the daemon at start, not journaled): the service names those the
// input's sources use in the input itself (InConfigData.Plugins), and the
// machine takes its word. So replay, which reads the same input, accepts
// what was accepted, whatever the plugins directory holds by then; a
// source whose plugin is gone fails at run time (an error event), like
// one whose host is down.
func toolNames(tools []*tool, plugins []string) []string {
	names := slices.Concat(builtinToolNames, yieldingToolNames)
	for _, t := range tools {
		if !slices.Contains(yieldingToolNames, t.Name) {
			names = append(names, t.Name)
		}
	}
	for _, p := range plugins {
		if validToolName(p) {
			names = append(names, p)
		}
	}
	return names
}

// checkSources validates sources given together against tools and
// plugins (InConfigData.Plugins). When restoring a snapshot they are only
// read, not validated again. extra adds the checks of the light's level.
func checkSources(list []json.RawMessage, tools []*tool, plugins []string, restoring bool, extra ...datasource.Option) ([]*sourceDef, *rejection) {
	seen := make(map[string]bool, len(list))
	out := make([]*sourceDef, 0, len(list))
	opts := append([]datasource.Option{datasource.WithTools(toolNames(tools, plugins)...), datasource.WithMinInterval(machineMinInterval)}, extra...)
	for _, raw := range list {
		var (
			d   datasource.Def
			err error
		)
		if restoring {
			err = d.UnmarshalJSON(raw)
		} else {
			d, err = datasource.Decode(raw, opts...)
		}
		if err != nil {
			code, msg := 400, err.Error()
			if se := (*datasource.Error)(nil); errors.As(err, &se) {
				code, msg = se.Code, se.Msg
			}
			return nil, rejectf(code, "%s", msg)
		}
		if seen[d.Name] {
			return nil, rejectf(409, "source %q is listed twice; list each source once", d.Name)
		}
		seen[d.Name] = true
		b, err := json.Marshal(d)
		if err != nil {
			return nil, rejectf(500, "source %q: %v", d.Name, err)
		}
		out = append(out, &sourceDef{def: d, raw: b})
	}
	return out, nil
}

// sourcesUsing returns the names of the sources that fetch with tool name.
func sourcesUsing(list []*sourceDef, name string) []string {
	var out []string
	for _, s := range list {
		if s.def.Fetch.Tool == name {
			out = append(out, s.def.Name)
		}
	}
	return out
}

// lastRuns returns the sources' last runs, nil when none ran.
func (c *core) lastRuns() map[string]time.Time {
	if len(c.runs) == 0 {
		return nil
	}
	return maps.Clone(c.runs)
}

// keepRuns forgets the last runs of the sources that next drops or
// redefines: a new definition starts afresh (it runs at once), an
// unchanged one (apply of an export, say) keeps its schedule.
func (c *core) keepRuns(next []*sourceDef) {
	if len(c.runs) == 0 {
		return
	}
	kept := make(map[string]bool, len(next))
	for _, s := range next {
		i := slices.IndexFunc(c.sources, func(o *sourceDef) bool { return o.def.Name == s.def.Name })
		kept[s.def.Name] = i >= 0 && bytes.Equal(c.sources[i].raw, s.raw)
	}
	maps.DeleteFunc(c.runs, func(name string, _ time.Time) bool { return !kept[name] })
}

// dataInput applies one run of a data source as a whole: every value is
// checked before any is stored, then for each variable, by name, the
// current value goes to <name>_prev and the new one in, then the source's
// transition fires. The run's time is the source's last run.
func (c *core) dataInput(in *messages.InDataData) Result {
	if in.Source == "" {
		return c.reject(400, "data: source is empty; name the data source whose run this is")
	}
	i := slices.IndexFunc(c.sources, func(s *sourceDef) bool { return s.def.Name == in.Source })
	if i < 0 {
		return c.reject(404, "data: source %q does not exist (it may have been deleted); its run is dropped and nothing changes", in.Source)
	}
	def := c.sources[i].def
	names := slices.Sorted(maps.Keys(in.Vars))
	vals := make([]*value, len(names))
	for k, name := range names {
		if name == "" {
			return c.reject(400, "data: source %q: a variable has an empty name; nothing was stored", in.Source)
		}
		v, err := c.parseValue(in.Vars[name])
		if err != nil {
			return c.reject(400, "data: source %q: variable %q: the value %s; nothing was stored", in.Source, name, err)
		}
		if r := c.checkVar(name, v); r != nil {
			return c.reject(r.code, "data: source %q: %s; nothing was stored", in.Source, r.msg)
		}
		vals[k] = v
	}
	out := make([]Output, 0, 2*len(names)+1)
	for k, name := range names {
		if cur, ok := c.vars[name]; ok {
			prev := name + datasource.PrevSuffix
			c.vars[prev] = cur
			out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: prev, Value: cur.raw}})
		}
		c.vars[name] = vals[k]
		out = append(out, Output{Type: messages.OutVar, Data: messages.OutVarData{Name: name, Value: vals[k].raw}})
	}
	c.runs[in.Source] = c.now
	if def.Fires != "" {
		return c.fire(def.Fires, out)
	}
	if len(out) == 0 {
		return c.ignored("", fmt.Sprintf("source %s stored nothing and fires nothing", in.Source), out)
	}
	return Result{Outputs: out, State: c.cur}
}

// ---- the source ops ----

func (c *core) opCreateSource(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Sources) == 0 {
		return nil, rejectf(400, "create_source needs a source definition")
	}
	add, r := checkSources(in.Sources, c.tools, in.Plugins, false, c.sourceChecks()...)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.sources = mergeSources(c.sources, add)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	data := messages.OutConfigData{Op: in.Op}
	for _, s := range add {
		data.Sources = append(data.Sources, s.def.Name)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

func (c *core) opDeleteSource(in *messages.InConfigData) ([]Output, *rejection) {
	if in.Name == "" {
		return nil, rejectf(400, "delete_source: name is empty; give the name of the source to delete")
	}
	i := slices.IndexFunc(c.sources, func(s *sourceDef) bool { return s.def.Name == in.Name })
	if i < 0 {
		return nil, rejectf(404, "source %q does not exist; nothing to delete (list_sources lists the sources)", in.Name)
	}
	cfg := c.current()
	cfg.sources = slices.Delete(slices.Clone(c.sources), i, i+1)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, Sources: []string{in.Name}}}}, nil
}

// ---- custom transitions: a predicate tool and a source that polls it ----

// transitionSource returns the index of the custom transition name's
// source, or -1.
func (c *core) transitionSource(name string) int {
	return slices.IndexFunc(c.sources, func(s *sourceDef) bool {
		return s.def.Name == name && s.def.Kind() == datasource.TypeTransition && s.def.Fetch.Tool == name
	})
}

func (c *core) opDefineTransition(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Tools) != 1 || len(in.Sources) != 1 {
		return nil, rejectf(400, "define_transition takes one tool and one source, the predicate and its poll")
	}
	addT, r := c.checkTools(in.Tools)
	if r != nil {
		return nil, r
	}
	name := addT[0].Name
	tools := mergeTools(c.tools, addT)
	addS, r := checkSources(in.Sources, tools, nil, false, c.sourceChecks()...)
	if r != nil {
		return nil, r
	}
	if d := addS[0].def; d.Kind() != datasource.TypeTransition || d.Name != name || d.Fetch.Tool != name {
		return nil, rejectf(400, "define_transition: the source must be of type transition, named like its tool and polling it")
	}
	// Never take over a tool or a source that is not this transition's.
	mine := c.transitionSource(name) >= 0
	if c.toolIdx[name] != nil && !mine {
		return nil, rejectf(409, "tool %q exists and is not a custom transition; name the transition differently, or delete the tool first (delete_tool)", name)
	}
	if !mine && slices.ContainsFunc(c.sources, func(s *sourceDef) bool { return s.def.Name == name }) {
		return nil, rejectf(409, "data source %q exists and is not a custom transition; name the transition differently, or delete the source first (delete_source)", name)
	}
	cfg := c.current()
	cfg.tools = tools
	cfg.sources = mergeSources(c.sources, addS)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, Tools: []string{name}, Sources: []string{name}}}}, nil
}

func (c *core) opDeleteTransition(in *messages.InConfigData) ([]Output, *rejection) {
	if in.Name == "" {
		return nil, rejectf(400, "delete_transition: name is empty; give the name of the custom transition to delete")
	}
	i := c.transitionSource(in.Name)
	if i < 0 {
		return nil, rejectf(404, "custom transition %q does not exist; nothing to delete (list_sources lists them, with type transition)", in.Name)
	}
	cfg := c.current()
	cfg.sources = slices.Delete(slices.Clone(c.sources), i, i+1)
	data := messages.OutConfigData{Op: in.Op, Sources: []string{in.Name}}
	// The predicate goes too, unless another source polls it as well.
	if len(sourcesUsing(cfg.sources, in.Name)) == 0 {
		cfg.tools = slices.DeleteFunc(slices.Clone(c.tools), func(t *tool) bool { return t.Name == in.Name })
		data.Tools = []string{in.Name}
	}
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}
