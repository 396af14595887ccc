package machine

import (
	"fmt"
	"slices"
	"strings"

	"github.com/lumen-home/lumen/internal/jsbox"
	"github.com/lumen-home/lumen/messages"
)

// Custom functions are part of the configuration: define_function and
// delete_function config inputs change them, apply replaces them. They
// are compiled together into one library (jsbox.NewLibrary) whenever they
// change; an expression that names one of them is linked to the library
// (compile), and every such expression is linked again to the new one.
// A call runs inside the evaluation of the expression that makes it, so
// the time and memory bounds, the call depth, random() and now() are the
// expression's.

// function is one custom function as accepted.
type function struct {
	messages.Function
	refs jsbox.Refs // what its code names
}

// funcs is a light's functions and their library.
type funcs struct {
	list []*function // in definition order
	idx  map[string]*function
	lib  *jsbox.Library // nil when there are none
}

// has reports whether name is one of the functions.
func (fs *funcs) has(name string) bool { return fs != nil && fs.idx[name] != nil }

func (fs *funcs) names() []string {
	out := make([]string, len(fs.list))
	for i, f := range fs.list {
		out[i] = f.Name
	}
	return out
}

func (c *core) functionList() []messages.Function {
	out := make([]messages.Function, len(c.fns.list))
	for i, f := range c.fns.list {
		out[i] = f.Function
		out[i].Params = slices.Clone(f.Params)
	}
	return out
}

// FunctionList returns the custom functions in definition order, never
// nil.
func (m *Machine) FunctionList() []messages.Function { return m.c.functionList() }

// checkFunctions validates functions given together (apply,
// define_function), each on its own: how they call one another is
// checked by newFuncs.
func (c *core) checkFunctions(list []messages.Function) ([]*function, *rejection) {
	seen := make(map[string]bool, len(list))
	out := make([]*function, 0, len(list))
	for i, mf := range list {
		f, r := checkFunction(i, mf)
		if r != nil {
			return nil, r
		}
		if seen[f.Name] {
			return nil, rejectf(409, "function %q is listed twice; list each function once", f.Name)
		}
		seen[f.Name] = true
		out = append(out, f)
	}
	return out, nil
}

func checkFunction(i int, mf messages.Function) (*function, *rejection) {
	if mf.Name == "" {
		return nil, rejectf(400, "functions[%d] has no name; give every function a name like is_evening", i)
	}
	if err := messages.CheckFunctionName("function", mf.Name); err != nil {
		code := 400
		if messages.ReservedName(mf.Name) {
			code = 409
		}
		return nil, rejectf(code, "%v", err)
	}
	name := mf.Name
	if len(mf.Params) > messages.MaxParams {
		return nil, rejectf(400, "function %q takes %d parameters; a function takes at most %d (pass an object for more)", name, len(mf.Params), messages.MaxParams)
	}
	for j, p := range mf.Params {
		if err := messages.CheckFunctionName("parameter", p); err != nil {
			return nil, rejectf(400, "function %q: params[%d]: %v", name, j, err)
		}
		if slices.Contains(mf.Params[:j], p) {
			return nil, rejectf(400, "function %q: parameter %q is listed twice; give each parameter its own name", name, p)
		}
	}
	switch {
	case strings.TrimSpace(mf.Code) == "":
		return nil, rejectf(400, "function %q: code is empty; write the body of a function of its params, e.g. return h >= 18", name)
	case len(mf.Code) > messages.MaxFunctionCode:
		return nil, rejectf(400, "function %q: the code is %d bytes; keep it at most %d bytes (16 KiB)", name, len(mf.Code), messages.MaxFunctionCode)
	}
	f := &function{Function: messages.Function{Name: name, Params: slices.Clone(mf.Params), Code: mf.Code, Description: mf.Description}}
	if len(f.Params) == 0 {
		f.Params = nil
	}
	refs, se := jsbox.CheckFunc(jsbox.Func{Name: name, Params: f.Params, Code: f.Code})
	if se != nil {
		where := fmt.Sprintf("(%s)", se.Msg)
		switch {
		case se.AtEnd:
			where = fmt.Sprintf("at the end of the code (%s)", se.Msg)
		case se.Line > 0:
			where = fmt.Sprintf("at line %d, column %d (%s)", se.Line, se.Col, se.Msg)
		}
		return nil, rejectf(400, "function %q: the code has a syntax error %s; fix the JavaScript (it is the body of a function of its params: statements, and return gives the value)", name, where)
	}
	f.refs = refs
	return f, nil
}

// newFuncs compiles list, each function checked by checkFunction, into
// a library, after checking how the functions call one another.
func (c *core) newFuncs(list []*function) (*funcs, *rejection) {
	fs := &funcs{list: list, idx: make(map[string]*function, len(list))}
	if len(list) > messages.MaxFunctions {
		return nil, rejectf(400, "the configuration has %d functions; a light has at most %d", len(list), messages.MaxFunctions)
	}
	for _, f := range list {
		fs.idx[f.Name] = f
	}
	for _, f := range list {
		for _, p := range f.Params {
			if fs.has(p) {
				return nil, rejectf(409, "function %q: parameter %q has the name of the function %s, which it would hide inside %s; rename the parameter", f.Name, p, p, f.Name)
			}
		}
		if msg := fs.badCall(f.refs, f.Params); msg != "" {
			return nil, rejectf(400, "function %q %s", f.Name, msg)
		}
	}
	if len(list) == 0 {
		return fs, nil
	}
	js := make([]jsbox.Func, len(list))
	for i, f := range list {
		js[i] = jsbox.Func{Name: f.Name, Params: f.Params, Code: f.Code}
	}
	lib, err := jsbox.NewLibrary(c.vm, js)
	if err != nil {
		return nil, rejectf(400, "the functions do not compile together (%v); check their code", err)
	}
	fs.lib = lib
	return fs, nil
}

// badCall says how refs call one of the functions with more arguments
// than it takes ("calls f with 3 arguments, but f takes 2 (a, b)"), or
// "". A name the source declares itself, or one of its own params, may
// be another thing there and is not checked.
func (fs *funcs) badCall(refs jsbox.Refs, params []string) string {
	for _, name := range refs.Names {
		f := fs.idx[name]
		n, called := refs.Calls[name]
		if f == nil || !called || refs.Declared[name] || slices.Contains(params, name) || n <= len(f.Params) {
			continue
		}
		takes := "no arguments"
		if len(f.Params) > 0 {
			takes = fmt.Sprintf("%d (%s)", len(f.Params), strings.Join(f.Params, ", "))
		}
		args := "arguments"
		if n == 1 {
			args = "argument"
		}
		return fmt.Sprintf("calls %s with %d %s, but %s takes %s; pass what it takes, or change the function", name, n, args, name, takes)
	}
	return ""
}

// users lists what calls function name: rules (ids, layers' too),
// states, the other functions and layers' until conditions, each a
// phrase ("rules r1, r3"), in that order.
func (c *core) users(name string) []string {
	uses := func(e *expr) bool { return e != nil && slices.Contains(e.refs.Names, name) }
	var rules, states, fns, layers []string
	for _, r := range c.allRules() {
		if uses(r.cond) || uses(r.act) {
			rules = append(rules, r.ID)
		}
	}
	for _, l := range c.layers {
		if uses(l.until) {
			layers = append(layers, l.name)
		}
	}
	for _, s := range c.states {
		if slices.ContainsFunc(s.chans, uses) {
			states = append(states, s.Name)
		}
	}
	for _, f := range c.fns.list {
		if f.Name != name && slices.Contains(f.refs.Names, name) {
			fns = append(fns, f.Name)
		}
	}
	var out []string
	for _, u := range []struct {
		kind  string
		names []string
	}{{"rule", rules}, {"state", states}, {"function", fns}, {"layer", layers}} {
		switch len(u.names) {
		case 0:
		case 1:
			out = append(out, u.kind+" "+u.names[0])
		default:
			out = append(out, u.kind+"s "+strings.Join(u.names, ", "))
		}
	}
	return out
}

// relink links the expressions of rules and checks those of states again
// for functions fs: rules whose expressions link differently are copied
// (the same id, place and idp), the others kept. The first expression
// that no longer compiles, or calls a function with more arguments than
// it takes, refuses the change with 409.
func (c *core) relink(rules []*rule, states []*stateDef, fs *funcs, what string) ([]*rule, *rejection) {
	out := make([]*rule, len(rules))
	for i, r := range rules {
		out[i] = r
		cp := *r
		changed := false
		for _, x := range []struct {
			e    **expr
			kind exprKind
			src  string
		}{{&cp.cond, kindCondition, r.Condition}, {&cp.act, kindAction, r.Action}} {
			if *x.e == nil {
				continue
			}
			e, se := c.compile(x.kind, x.src, fs)
			if se != nil {
				return nil, rejectf(409, "%s: rule %s's %s no longer compiles %s; change the rule first", what, r.ID, x.kind, se)
			}
			if msg := fs.badCall(e.refs, nil); msg != "" {
				return nil, rejectf(409, "%s: rule %s's %s %s", what, r.ID, x.kind, msg)
			}
			if e != *x.e {
				*x.e, changed = e, true
			}
		}
		if changed {
			out[i] = &cp
		}
	}
	for _, s := range states {
		for _, e := range s.chans {
			if msg := fs.badCall(e.refs, nil); msg != "" {
				return nil, rejectf(409, "%s: state %q's color %s", what, s.Name, msg)
			}
		}
	}
	return out, nil
}

// relinkLayers links the rules and until conditions of layers again for
// functions fs, as relink does the light's own rules: a layer whose
// rules or condition link differently is copied, the others kept.
func (c *core) relinkLayers(layers []*layer, fs *funcs, what string) ([]*layer, *rejection) {
	out := make([]*layer, len(layers))
	for i, l := range layers {
		out[i] = l
		rules, r := c.relink(l.rules, nil, fs, what)
		if r != nil {
			return nil, r
		}
		until := l.until
		if until != nil {
			e, se := c.compile(kindCondition, l.untilSrc, fs)
			if se != nil {
				return nil, rejectf(409, "%s: layer %s's until condition no longer compiles %s; end the layer first", what, l.name, se)
			}
			if msg := fs.badCall(e.refs, nil); msg != "" {
				return nil, rejectf(409, "%s: layer %s's until condition %s", what, l.name, msg)
			}
			until = e
		}
		if until != l.until || !slices.Equal(rules, l.rules) {
			cp := l.withRules(rules)
			cp.until = until
			out[i] = cp
		}
	}
	return out, nil
}

// ---- the function ops ----

func (c *core) opDefineFunction(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Functions) == 0 {
		return nil, rejectf(400, "define_function needs at least one function in functions")
	}
	add, r := c.checkFunctions(in.Functions)
	if r != nil {
		return nil, r
	}
	names := make([]string, len(add))
	for i, f := range add {
		names[i] = f.Name
	}
	return c.setFunctions(in.Op, mergeByName(c.fns.list, add, func(f *function) string { return f.Name }), names, "function "+strings.Join(names, ", "))
}

func (c *core) opDeleteFunction(in *messages.InConfigData) ([]Output, *rejection) {
	switch {
	case in.Name == "":
		return nil, rejectf(400, "delete_function: name is empty; give the name of the function to delete")
	case !c.fns.has(in.Name):
		return nil, rejectf(404, "function %q does not exist; nothing to delete (get lists the functions)", in.Name)
	}
	if users := c.users(in.Name); len(users) > 0 {
		return nil, rejectf(409, "function %q is used by %s; change or delete those first", in.Name, strings.Join(users, " and "))
	}
	list := slices.DeleteFunc(slices.Clone(c.fns.list), func(f *function) bool { return f.Name == in.Name })
	return c.setFunctions(in.Op, list, []string{in.Name}, "delete_function "+in.Name)
}

// setFunctions makes list the light's functions, relinking every rule,
// state and layer to them (what names the change in a refusal), and
// outputs the config change naming the functions changed.
func (c *core) setFunctions(op string, list []*function, names []string, what string) ([]Output, *rejection) {
	fs, r := c.newFuncs(list)
	if r != nil {
		return nil, r
	}
	rules, r := c.relink(c.rules, c.states, fs, what)
	if r != nil {
		return nil, r
	}
	layers, r := c.relinkLayers(c.layers, fs, what)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.rules, cfg.fns, cfg.layers = rules, fs, layers
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: op, Functions: names}}}, nil
}
