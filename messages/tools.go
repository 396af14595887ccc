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
type ToolsReply struct {
	OK    bool   `json:"ok"`
	Tools []Tool `json:"tools"`
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
