package messages

import "encoding/json"

// Verbs of custom tools.
const (
	VerbDefineTool = "define_tool" // Tool
	VerbDeleteTool = "delete_tool" // NameRequest
	VerbListTools  = "list_tools"  // {} → ToolsReply
	VerbRunTool    = "run_tool"    // RunToolRequest → RunToolReply
)

// Configuration ops of custom tools (InConfigData.Op).
const (
	OpDefineTool = "define_tool" // add or replace Tools
	OpDeleteTool = "delete_tool" // delete tool Name
)

// Tool is a custom tool of a light: JavaScript run in the Wasmtime
// sandbox, reaching only Hosts.
//   - name         [a-z][a-z0-9_]{0,63}; the built-in tools' names are taken.
//   - description  what it does, for people and the agent.
//   - params       a JSON schema (an object) of its arguments; optional.
//   - code         the body of an async function of params: `return {...}`,
//     `await fetch(url, {method, headers, body})`.
//   - returns      a JSON schema of its result; optional, documentation.
//   - hosts        the hosts (host or host:port) its fetch may reach.
type Tool struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Params      json.RawMessage `json:"params,omitempty"`
	Code        string          `json:"code"`
	Returns     json.RawMessage `json:"returns,omitempty"`
	Hosts       []string        `json:"hosts,omitempty"`
}

// ToolsReply answers list_tools.
//   - tools     the light's journaled definitions (define_tool), exactly as
//     in get and export.
//   - builtin   the built-in tools, always there.
//   - plugins   the operator's plugins (<data>/plugins/NAME.wasm), read by
//     the daemon at start; never journaled.
//
// builtin and plugins were added after tools: a client that knows only
// tools keeps working. Both are [] when the daemon runs no tools.
type ToolsReply struct {
	OK      bool          `json:"ok"`
	Tools   []Tool        `json:"tools"`
	Builtin []BuiltinTool `json:"builtin"`
	Plugins []PluginTool  `json:"plugins"`
}

// BuiltinTool is a built-in tool as list_tools shows it: params is the
// JSON schema of its args.
type BuiltinTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Params      json.RawMessage `json:"params"`
}

// Plugin statuses (PluginTool.Status).
const (
	PluginLoading = "loading" // still compiling (first start only)
	PluginReady   = "ready"
	PluginFailed  = "failed" // it cannot run; error says why
)

// PluginTool is one of the operator's plugins as list_tools shows it.
type PluginTool struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
}

// RunToolRequest is the body of run_tool: {"name","args"}.
type RunToolRequest struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// RunToolReply answers run_tool with the tool's result and what it logged.
type RunToolReply struct {
	OK     bool            `json:"ok"`
	Result json.RawMessage `json:"result"`
	Log    []string        `json:"log,omitempty"`
	Ms     float64         `json:"ms"`
}
