package messages_test

import (
	"errors"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// A decoding error names the field by its path from the top, so that a
// person (or a model) knows where to look.
func TestDecodeNamesTheField(t *testing.T) {
	tests := []struct{ body, want string }{
		{`{"rules":[{"from":"off","on":"c","to":"x"},{"from":"off","on":"c","to":"x","priority":"high"}]}`,
			`rules[1].priority: must be an integer between -1000000 and 1000000, not "high"`},
		{`{"states":[{"name":"x","speed":"fast"}]}`, `states[0].speed: must be a number, not a JSON string`},
		{`{"states":[{"name":"x","colour":1}]}`, `states[0].colour: unknown field; check the spelling against the documented fields: b, description, g, name, r, speed`},
		{`{"states":[{"name":"x","r":null,"g":""}]}`, `states[0].g: a color channel must be a number 0-255 or a JavaScript expression, not an empty string`},
		{`{"rules":[{"from":"a","state1":"b","on":"c","to":"d"}]}`, `rules[0].state1: disagrees with "from", of which it is an alias; give only one`},
		{`{"rules":[{"from":1}]}`, `rules[0].from: must be a string, not a JSON number`},
		{`{"rules":{"from":"off"}}`, `rules: must be an array, not a JSON object`},
		{`{"schedules":[{"name":"s","cron":"@hourly","fires":"t","tz":5}]}`, `schedules[0].tz: must be a string, not a JSON number`},
		// Nothing narrower than the whole to blame.
		{`[1]`, `expected an object, not a JSON array`},
		{`{"states":[}`, `malformed JSON at byte 12: invalid character '}' looking for beginning of value`},
	}
	for _, tt := range tests {
		var r messages.ApplyRequest
		err := messages.Decode([]byte(tt.body), &r)
		if err == nil || err.Error() != tt.want {
			t.Errorf("Decode(%s)\n got  %v\n want %s", tt.body, err, tt.want)
		}
	}
	var fe *messages.FieldError
	if err := messages.Decode([]byte(`{"rules":[{"priority":1.5}]}`), new(messages.RulesRequest)); !errors.As(err, &fe) || fe.Path != "rules[0].priority" {
		t.Errorf("RulesRequest: %#v", err)
	}
	// A quoted integer priority has always been taken; it still is.
	var rr messages.RulesRequest
	if err := messages.Decode([]byte(`{"rules":[{"from":"a","on":"b","to":"c","priority":"5"}]}`), &rr); err != nil || rr.Rules[0].Priority != 5 {
		t.Errorf("quoted priority: %v %+v", err, rr)
	}
}

// A YAML mistake is reported on the line it is on, not where the block
// around it began.
func TestToJSONLine(t *testing.T) {
	tests := []struct {
		name, yaml string
		line       int
		msg        string
	}{
		{"bad indent", "states:\n  - name: red\n    r: 255\n   g: 0\n    b: 0\n", 4, "invalid YAML: did not find expected '-' indicator"},
		{"tab", "states:\n\t- name: red\n", 2, "invalid YAML: found character that cannot start any token"},
		{"unclosed quote", "states:\n  - name: \"red\n    r: 1\n", 2, "invalid YAML: found unexpected end of stream"},
		{"key twice", "initial: off\nrules: []\ninitial: red\n", 3, `invalid YAML: mapping key "initial" already defined at line 1`},
	}
	for _, tt := range tests {
		_, err := messages.ToJSON([]byte(tt.yaml), ".yaml")
		var se *messages.SourceError
		if !errors.As(err, &se) || se.Line != tt.line || se.Msg != tt.msg {
			t.Errorf("%s: got %#v, want line %d %q", tt.name, err, tt.line, tt.msg)
		}
	}
	if b, err := messages.ToJSON([]byte("rules:\n  - {from: off, on: click, to: on}\n"), ".yml"); err != nil || string(b) != `{"rules":[{"from":"off","on":"click","to":"on"}]}` {
		t.Errorf("valid YAML: %s %v", b, err)
	}
}

// Line finds where, in the file a person wrote, the field or the thing a
// light's refusal names is.
func TestLine(t *testing.T) {
	file := []byte(`states:
  - name: red
    r: 255
  - name: blue
    b: "vars.x +"
rules:
  - from: off
    on: click
    to: red
  - id: r9
    from: red
    on: click
    to: off
    priority: high
schedules:
  - {name: evening, cron: "0 19 * * *", fires: evening}
functions:
  - name: is_evening
    code: return (
`)
	tests := []struct {
		msg  string
		line int
	}{
		{"apply: rules[1].priority: must be an integer", 14},
		{"apply: rules[0].condition: must be a string", 7}, // not written: its rule
		{`state "blue": channel b has a syntax error`, 5},  // the channel's line
		{"rule r9: to names state \"x\"", 10},
		{"rule r6 (rules[0]): on is empty", 7},
		{`schedule "evening": cron is not valid`, 16},
		{`function "is_evening": the code has a syntax error`, 19},
		{"config: functions[0].param: unknown field", 18},
		{`state "green" is unknown`, 0},
		{"the light is busy", 0},
	}
	for _, tt := range tests {
		if got := messages.Line(file, tt.msg); got != tt.line {
			t.Errorf("Line(%q) = %d, want %d", tt.msg, got, tt.line)
		}
	}
	if got := messages.Line([]byte(`{"rules":[{"from":"off",`+"\n"+`"priority":1.5}]}`), "rules[0].priority: no"); got != 2 {
		t.Errorf("JSON file: line %d, want 2", got)
	}
}

// Locate narrows a refusal to the character of the file it is about: an
// unknown key where it is written, a syntax error of an expression at
// its line and column in the file, whatever the quoting.
func TestLocate(t *testing.T) {
	file := []byte(`initial: off
states:
  - name: red
    r: 255
    b: (frame * 2
  - name: pulse
    g: "sin(frame) ) 1"
    r: |
      128 +
        60 * sin(frame
rules:
  - from: off
    on: click
    to: red
    condition: getData('n') >
stats:
  - x
layers:
  - name: party
    until: "a b"
`)
	tests := []struct {
		msg  string
		want messages.Pos
	}{
		{"stats: unknown field; check the spelling against the documented fields: initial, rules, states", messages.Pos{Line: 16}},
		{`state "red": channel b has a syntax error at the end (it stops before it is complete)`, messages.Pos{Line: 5, Col: 17}},
		{`state "pulse": channel g has a syntax error at line 1, column 12 (Unexpected token ))`, messages.Pos{Line: 7, Col: 20}},
		{`state "pulse": channel r has a syntax error at line 2, column 12 (Unexpected token))`, messages.Pos{Line: 10, Col: 18}},
		{`state "pulse": channel r has a syntax error at the end (no)`, messages.Pos{Line: 10, Col: 22}},
		{"rule r3 (rules[0]): the condition has a syntax error at the end (no)", messages.Pos{Line: 15, Col: 29}},
		{`layer "party"'s until has a syntax error at line 1, column 3 (Unexpected identifier)`, messages.Pos{Line: 20, Col: 15}},
		{`state "red": channel g is 300`, messages.Pos{Line: 3}},
		{"the light is busy", messages.Pos{}},
	}
	for _, tt := range tests {
		if got := messages.Locate(file, tt.msg); got != tt.want {
			t.Errorf("Locate(%q) = %+v, want %+v", tt.msg, got, tt.want)
		}
	}
	json := []byte("{\"states\":[{\"name\":\"a\",\n  \"r\":\"1 +\\n  (2 a\"}]}")
	if got := messages.Locate(json, `state "a": channel r has a syntax error at line 2, column 6 (Unexpected identifier)`); got != (messages.Pos{Line: 2, Col: 18}) {
		t.Errorf("JSON file: %+v, want 2:18", got)
	}
}
