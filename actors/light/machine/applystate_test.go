package machine_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// From level 2 a configuration change keeps the light's state unless
// that state is removed (then the light takes initial) or the input names
// a state to go to; before, apply entered initial, and a deleted current
// state went to off (issue 26, item 1).
func TestApplyKeepsState(t *testing.T) {
	const (
		rgb   = `"states":[{"name":"red","r":255},{"name":"green","g":255},{"name":"blue","b":255}]`
		noRed = `"states":[{"name":"green","g":255},{"name":"blue","b":255}]`
	)
	tests := []struct {
		name  string
		level int
		input string // applied in state red
		want  string // the state after, or the refusal
		moved bool   // a state output
	}{
		{"an export applied again keeps the state", 2,
			`{"op":"apply",` + rgb + `,"initial":"off"}`, "red", false},
		{"initial changes what is configured, not the state", 2,
			`{"op":"apply",` + rgb + `,"initial":"blue"}`, "red", false},
		{"state names where to go", 2,
			`{"op":"apply",` + rgb + `,"initial":"off","state":"green"}`, "green", true},
		{"state may be the current one", 2,
			`{"op":"apply",` + rgb + `,"state":"red"}`, "red", false},
		{"a removed current state gives way to initial", 2,
			`{"op":"apply",` + noRed + `,"initial":"blue"}`, "blue", true},
		{"a removed current state without initial gives way to off", 2,
			`{"op":"apply",` + noRed + `}`, "off", true},
		{"state wins over initial", 2,
			`{"op":"apply",` + noRed + `,"initial":"blue","state":"green"}`, "green", true},
		{"state must be among the states", 2,
			`{"op":"apply",` + rgb + `,"state":"purple"}`, `state names "purple", which is not in states`, false},
		{"deleting the current state gives way to initial", 2,
			`{"op":"delete_state","name":"red"}`, "green", true},
		{"before level 2, apply entered initial", 1,
			`{"op":"apply",` + rgb + `,"initial":"off"}`, "off", true},
		{"before level 2, a removed state went to off", 1,
			`{"op":"apply",` + noRed + `}`, "off", true},
		{"before level 2, deleting the current state went to off", 1,
			`{"op":"delete_state","name":"red"}`, "off", true},
		{"before level 2, state is refused", 1,
			`{"op":"apply",` + rgb + `,"state":"green"}`, "config: apply takes state from check level 2 on", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLight(t)
			l.ok(messages.InUpgrade, fmt.Sprintf(`{"level":%d}`, tt.level))
			l.config(`{"op":"apply",` + rgb + `,"initial":"green"}`)
			l.ok(messages.InState, `{"name":"red"}`)
			r := l.apply(messages.InConfig, tt.input)
			if r.Err != nil {
				if !strings.Contains(r.Err.Error, tt.want) {
					t.Fatalf("refused: %d %s, want %q", r.Err.Code, r.Err.Error, tt.want)
				}
				if s := l.m.State(); s != "red" {
					t.Errorf("a refusal moved the light to %s", s)
				}
				return
			}
			moved := false
			for _, o := range r.Outputs {
				moved = moved || o.Type == messages.OutState
			}
			if s := l.m.State(); s != tt.want || moved != tt.moved {
				t.Errorf("state %s (output: %v), want %s (output: %v)\n%s", s, moved, tt.want, tt.moved, strings.Join(outputs(t, r), "\n"))
			}
		})
	}
}
