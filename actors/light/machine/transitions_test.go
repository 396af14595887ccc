package machine_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// A custom transition is defined and deleted as one input: its predicate
// tool and its source, named alike. It never takes over a tool or source
// of the same name, and keeps a predicate another source still polls.
func TestCustomTransitionOps(t *testing.T) {
	const (
		src     = `{"name":"door_open","type":"transition","interval_ms":1000,"fetch":{"tool":"door_open","args":{}},"fires":"door_open"}`
		tool    = `{"name":"door_open","code":"return true"}`
		defineT = `{"op":"define_transition","tools":[` + tool + `],"sources":[` + src + `]}`
		deleteT = `{"op":"delete_transition","name":"door_open"}`
	)
	names := func(l *light) (tools, sources string) {
		var tn, sn []string
		for _, t := range l.m.ToolList() {
			tn = append(tn, t.Name)
		}
		for _, s := range l.m.SourceList() {
			sn = append(sn, string(s))
		}
		return strings.Join(tn, ","), strings.Join(sn, ",")
	}
	tests := []struct {
		name         string
		before       []string // config inputs applied first
		input        string
		code         int // 0: accepted
		tools        string
		srcsContains string
	}{
		{name: "define", input: defineT, tools: "door_open", srcsContains: `"type":"transition"`},
		{name: "redefine", before: []string{defineT}, input: defineT, tools: "door_open", srcsContains: `"fires":"door_open"`},
		{name: "a tool of that name exists", before: []string{`{"op":"define_tool","tools":[` + tool + `]}`}, input: defineT, code: 409, tools: "door_open"},
		{name: "a source of that name exists", before: []string{`{"op":"create_source","sources":[{"name":"door_open","type":"nats","subject":"home.door","fires":"x"}]}`},
			input: defineT, code: 409, srcsContains: `"type":"nats"`},
		{name: "the source must poll the tool", input: `{"op":"define_transition","tools":[` + tool + `],"sources":[{"name":"door_open","interval_ms":1000,"fetch":{"tool":"door_open"},"store":{"x":"result"}}]}`, code: 400},
		{name: "delete", before: []string{defineT}, input: deleteT},
		{name: "delete keeps a predicate another source polls", before: []string{defineT,
			`{"op":"create_source","sources":[{"name":"poll","interval_ms":60000,"fetch":{"tool":"door_open"},"store":{"open":"result"}}]}`},
			input: deleteT, tools: "door_open", srcsContains: `"name":"poll"`},
		{name: "delete an unknown transition", input: deleteT, code: 404},
		{name: "delete_transition does not delete a plain source", before: []string{`{"op":"create_source","sources":[{"name":"door_open","type":"nats","subject":"home.door","fires":"x"}]}`},
			input: deleteT, code: 404, srcsContains: `"type":"nats"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			for _, b := range tt.before {
				l.config(b)
			}
			r := l.apply(messages.InConfig, tt.input)
			switch {
			case tt.code == 0 && r.Err != nil:
				t.Fatalf("rejected: %d %s", r.Err.Code, r.Err.Error)
			case tt.code != 0 && (r.Err == nil || r.Err.Code != tt.code):
				t.Fatalf("got %+v, want code %d", r.Err, tt.code)
			}
			tools, srcs := names(l)
			if tools != tt.tools {
				t.Errorf("tools %q, want %q", tools, tt.tools)
			}
			if tt.srcsContains == "" && srcs != "" || !strings.Contains(srcs, tt.srcsContains) {
				t.Errorf("sources %s, want %q", srcs, tt.srcsContains)
			}
		})
	}
}
