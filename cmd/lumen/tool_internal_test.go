package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

func TestPrintTools(t *testing.T) {
	tests := []struct {
		name string
		r    messages.ToolsReply
		want []string
	}{
		{"nothing at all", messages.ToolsReply{}, []string{"light demo has no tools"}},
		{"every kind", messages.ToolsReply{
			Tools: []messages.Tool{{Name: "weather", Description: "the weather", Hosts: []string{"api.example.com"}}, {Name: "hello", Description: "mine"}},
			Plugins: []messages.PluginTool{{Name: "hello", Status: messages.PluginReady},
				{Name: "broken", Status: messages.PluginFailed, Error: "not wasm"}},
			Builtin: []messages.BuiltinTool{{Name: "get_time", Description: "the time"}},
		}, []string{
			"weather              the weather  (hosts: api.example.com)",
			"hello                mine  (hosts: none)  [the plugin hello runs instead]",
			"hello                plugin, ready",
			"broken               plugin, failed: not wasm",
			"get_time             built-in: the time",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printTools(&b, "demo", tt.r)
			if got := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n"); strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("got\n%s\nwant\n%s", b.String(), strings.Join(tt.want, "\n"))
			}
		})
	}
}
