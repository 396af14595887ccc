package machine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/dop251/goja"

	"github.com/lumen-home/lumen/internal/argschema"
	"github.com/lumen-home/lumen/internal/jsbox"
	"github.com/lumen-home/lumen/messages"
)

// Custom tools are part of the model: their definitions are checked here,
// journaled as config inputs and replayed like states. The machine never
// runs them; it only checks that the code parses as the body of the async
// function the tool runner wraps it in (plugins/guest).
const (
	toolHead    = "(async function(params) {\n"
	toolTail    = "\n})"
	toolSrcName = "tool.js"

	maxToolName  = 64       // characters of a tool's name
	maxToolCode  = 64 << 10 // bytes of a tool's code
	maxToolHosts = 32       // hosts a tool may list
	maxHostName  = 253      // characters of a DNS name
	builtinTools = "fetch_json, fetch_text, get_time"
)

// builtinToolNames are the names of the built-in tools, which a custom tool
// cannot take.
var builtinToolNames = []string{"fetch_json", "fetch_text", "get_time"}

// yieldingToolNames are built-ins that came after lights could define
// tools of those names (the seed's weather example defines its own
// get_weather): a custom tool may take the name, and then runs instead.
var yieldingToolNames = []string{"get_weather", "web_search"}

// tool is one custom tool's definition, as accepted: params and returns
// compact JSON objects or nil, hosts as given.
type tool struct {
	messages.Tool
}

// public returns a copy of the definition that shares no memory with t.
func (t *tool) public() messages.Tool {
	d := t.Tool
	d.Params = slices.Clone(t.Params)
	d.Returns = slices.Clone(t.Returns)
	d.Hosts = slices.Clone(t.Hosts)
	return d
}

func (c *core) toolList() []messages.Tool {
	out := make([]messages.Tool, len(c.tools))
	for i, t := range c.tools {
		out[i] = t.public()
	}
	return out
}

// ToolList returns the custom tools' definitions in definition order,
// never nil.
func (m *Machine) ToolList() []messages.Tool { return m.c.toolList() }

func mergeTools(base, add []*tool) []*tool {
	return mergeByName(base, add, func(t *tool) string { return t.Name })
}

// checkTools validates tools given together (apply, define_tool).
func (c *core) checkTools(list []messages.Tool) ([]*tool, *rejection) {
	seen := make(map[string]bool, len(list))
	out := make([]*tool, 0, len(list))
	for i, mt := range list {
		t, r := c.checkTool(i, mt)
		if r != nil {
			return nil, r
		}
		if seen[t.Name] {
			return nil, rejectf(409, "tool %q is listed twice; list each tool once", t.Name)
		}
		seen[t.Name] = true
		out = append(out, t)
	}
	return out, nil
}

func (c *core) checkTool(i int, mt messages.Tool) (*tool, *rejection) {
	if r := checkToolName(i, mt.Name); r != nil {
		return nil, r
	}
	name := mt.Name
	t := &tool{Tool: messages.Tool{Name: name, Description: mt.Description, Code: mt.Code}}
	switch {
	case strings.TrimSpace(mt.Code) == "":
		return nil, rejectf(400, "tool %q: code is empty; write the body of an async function of params, e.g. return {ok: true}", name)
	case len(mt.Code) > maxToolCode:
		return nil, rejectf(400, "tool %q: the code is %d bytes; keep it at most %d bytes (64 KiB)", name, len(mt.Code), maxToolCode)
	}
	if se := checkToolCode(mt.Code); se != nil {
		where := fmt.Sprintf("(%s)", se.msg)
		switch {
		case se.atEnd:
			where = fmt.Sprintf("at the end of the code (%s)", se.msg)
		case se.line > 0:
			where = fmt.Sprintf("at line %d, column %d (%s)", se.line, se.col, se.msg)
		}
		return nil, rejectf(400, "tool %q: the code has a syntax error %s; fix the JavaScript (it is the body of an async function of params: return a value, await fetch(...))", name, where)
	}
	var r *rejection
	if t.Params, r = schemaObject(name, "params", mt.Params); r != nil {
		return nil, r
	}
	if t.Params != nil && c.limited() {
		// Arguments are checked against it before each call.
		if _, err := argschema.Compile(t.Params); err != nil {
			return nil, rejectf(400, "tool %q: params: %v", name, err)
		}
	}
	if t.Returns, r = schemaObject(name, "returns", mt.Returns); r != nil {
		return nil, r
	}
	if len(mt.Hosts) > maxToolHosts {
		return nil, rejectf(400, "tool %q lists %d hosts; list at most %d", name, len(mt.Hosts), maxToolHosts)
	}
	seen := make(map[string]bool, len(mt.Hosts))
	for j, h := range mt.Hosts {
		if msg := checkHost(h); msg != "" {
			return nil, rejectf(400, "tool %q: hosts[%d] %q %s", name, j, h, msg)
		}
		if seen[h] {
			return nil, rejectf(400, "tool %q: host %q is listed twice; list each host once", name, h)
		}
		seen[h] = true
	}
	if len(mt.Hosts) > 0 {
		t.Hosts = slices.Clone(mt.Hosts)
	}
	return t, nil
}

func checkToolName(i int, name string) *rejection {
	switch {
	case name == "":
		return rejectf(400, "tools[%d] has no name; give every tool a name like get_weather", i)
	case slices.Contains(builtinToolNames, name):
		return rejectf(409, "tool name %q is taken by a built-in tool (%s); pick another name", name, builtinTools)
	case !validToolName(name):
		return rejectf(400, "tool name %q is not valid; use a lowercase letter, then at most %d lowercase letters, digits or underscores, e.g. get_weather", name, maxToolName-1)
	}
	return nil
}

// validToolName reports whether name matches [a-z][a-z0-9_]{0,63}.
func validToolName(name string) bool {
	if len(name) == 0 || len(name) > maxToolName || name[0] < 'a' || name[0] > 'z' {
		return false
	}
	for i := 1; i < len(name); i++ {
		if c := name[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// checkToolCode parses and compiles code as the tool runner will, without
// running any of it. Positions are the code's own.
func checkToolCode(code string) *syntaxError {
	prog, err := jsbox.Parse(toolSrcName, toolHead+code+toolTail)
	if err != nil {
		return parseError(code, err)
	}
	if jsbox.Wrapped(prog) == nil {
		return &syntaxError{msg: "it closes a bracket or brace it did not open"}
	}
	if _, err := goja.CompileAST(prog, false); err != nil {
		return parseError(code, err)
	}
	return nil
}

// schemaObject checks that raw, a tool's params or returns, is absent
// (empty or null) or a JSON object, and returns it compacted.
func schemaObject(tool, field string, raw json.RawMessage) (json.RawMessage, *rejection) {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 || string(trimmed) == "null" {
		return nil, nil
	}
	var obj map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &obj) != nil {
		return nil, rejectf(400, "tool %q: %s must be a JSON object (a JSON schema such as {\"type\":\"object\",\"properties\":{…}}), or left out", tool, field)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, trimmed); err != nil {
		return nil, rejectf(400, "tool %q: %s is not valid JSON (%s); give a JSON object or leave it out", tool, field, messages.Explain(err))
	}
	return b.Bytes(), nil
}

// checkHost checks one of a tool's hosts: a lowercase host name or an IP
// address, with an optional :port, and nothing else. It returns what is
// wrong, as the end of a sentence, or "".
func checkHost(h string) string {
	const fix = "; give a lowercase host name like api.example.com or an IP address, with an optional :port"
	switch {
	case h == "":
		return "is empty" + fix
	case strings.Contains(h, "://"):
		return "has a scheme" + fix + ", without http:// or https://"
	case strings.ContainsAny(h, "/?#@"):
		return "has a path or user part" + fix + ", without a path"
	case strings.Contains(h, "*"):
		return "is a wildcard; list each host the tool needs, e.g. api.example.com"
	case strings.TrimSpace(h) != h || strings.ContainsAny(h, " \t\r\n"):
		return "has spaces" + fix
	case strings.ToLower(h) != h:
		return "has capital letters; write it in lowercase"
	}
	host, port, bracketed := h, "", false
	if rest, ok := strings.CutPrefix(h, "["); ok {
		var after string
		host, after, ok = strings.Cut(rest, "]")
		if !ok {
			return "has no ] after the IPv6 address" + fix
		}
		if after != "" {
			if port, ok = strings.CutPrefix(after, ":"); !ok {
				return "has something after ] that is not a :port" + fix
			}
		}
		bracketed = true
	} else if strings.Count(h, ":") == 1 {
		host, port, _ = strings.Cut(h, ":")
	}
	if port != "" || strings.HasSuffix(h, ":") {
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil || n == 0 || port[0] == '0' {
			return fmt.Sprintf("has port %q; give a port from 1 to 65535, or leave it out", port)
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		switch {
		case a.Zone() != "":
			return "has an IPv6 zone; give the address without %" + a.Zone()
		case bracketed && !a.Is6():
			return "puts an IPv4 address in brackets; write it without them, e.g. 192.168.1.10:8080"
		}
		return ""
	}
	if bracketed {
		return "has no IPv6 address between [ and ]" + fix
	}
	return checkHostName(host)
}

// checkHostName checks an ASCII DNS name in lowercase.
func checkHostName(name string) string {
	const fix = "; give a lowercase host name like api.example.com or an IP address, with an optional :port"
	switch {
	case name == "":
		return "has no host" + fix
	case strings.Contains(name, ":"):
		return "is not a host name or an IP address" + fix
	case strings.HasSuffix(name, "."):
		return "ends with a dot; write it without the trailing dot"
	case len(name) > maxHostName:
		return fmt.Sprintf("is longer than %d characters; give a real host name", maxHostName)
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return "is not a host name: each part between dots must have 1 to 63 characters"
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "is not a host name: a part cannot start or end with -"
		}
		for i := 0; i < len(l); i++ {
			switch c := l[i]; {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return "is not an ASCII host name; use its xn-- (punycode) form"
			default:
				return fmt.Sprintf("is not a host name: %q is not allowed", string(c))
			}
		}
	}
	if last := labels[len(labels)-1]; last[0] >= '0' && last[0] <= '9' {
		return "looks like a shortened IP address; write the address in full, e.g. 192.168.1.10"
	}
	return ""
}

// ---- the tool ops ----

func (c *core) opDefineTool(in *messages.InConfigData) ([]Output, *rejection) {
	if len(in.Tools) == 0 {
		return nil, rejectf(400, "define_tool needs at least one tool in tools")
	}
	add, r := c.checkTools(in.Tools)
	if r != nil {
		return nil, r
	}
	cfg := c.current()
	cfg.tools = mergeTools(c.tools, add)
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	data := messages.OutConfigData{Op: in.Op}
	for _, t := range add {
		data.Tools = append(data.Tools, t.Name)
	}
	return []Output{{Type: messages.OutConfig, Data: data}}, nil
}

func (c *core) opDeleteTool(in *messages.InConfigData) ([]Output, *rejection) {
	if in.Name == "" {
		return nil, rejectf(400, "delete_tool: name is empty; give the name of the tool to delete")
	}
	t := c.toolIdx[in.Name]
	if t == nil {
		if slices.Contains(builtinToolNames, in.Name) {
			return nil, rejectf(409, "tool %q is built in and cannot be deleted", in.Name)
		}
		return nil, rejectf(404, "tool %q does not exist; nothing to delete (list_tools lists the tools)", in.Name)
	}
	if users := sourcesUsing(c.sources, in.Name); len(users) > 0 {
		// A custom transition's predicate goes with its transition:
		// delete_source would leave the predicate behind as a tool of
		// its own, delete_transition removes both.
		if c.transitionSource(in.Name) < 0 {
			return nil, rejectf(409, "tool %q is used by data sources %s; delete those sources first (delete_source)", in.Name, strings.Join(users, ", "))
		}
		others := slices.DeleteFunc(users, func(s string) bool { return s == in.Name })
		if len(others) == 0 {
			return nil, rejectf(409, "tool %q is the predicate of custom transition %q; delete the transition instead (delete_transition %q), which deletes its tool too", in.Name, in.Name, in.Name)
		}
		return nil, rejectf(409, "tool %q is the predicate of custom transition %q and is used by data sources %s; delete those sources (delete_source) and the transition (delete_transition %q), which deletes its tool too", in.Name, in.Name, strings.Join(others, ", "), in.Name)
	}
	cfg := c.current()
	cfg.tools = slices.DeleteFunc(slices.Clone(c.tools), func(x *tool) bool { return x == t })
	if err := c.commit(cfg); err != nil {
		return nil, rejectf(500, "%v", err)
	}
	return []Output{{Type: messages.OutConfig, Data: messages.OutConfigData{Op: in.Op, Tools: []string{t.Name}}}}, nil
}
