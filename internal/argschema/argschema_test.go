package argschema_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/lumen-home/lumen/internal/argschema"
)

func TestCheck(t *testing.T) {
	s, err := argschema.Compile(json.RawMessage(`{"type":"object","properties":{
		"add":{"type":"number"},
		"city":{"type":"string","maxLength":3},
		"stops":{"type":"array","items":{"type":"object","properties":{"name":{"type":"string"}}}}},
		"required":["add"],"additionalProperties":false}`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ args, want string }{
		{`{"add":1}`, ""},
		{`{"add":"x"}`, "add: got string, want number"},
		{`{}`, "the arguments: missing property 'add'"},
		{`{"add":1,"zzz":2}`, "the arguments: additional properties 'zzz' not allowed"},
		{`{"add":1,"stops":[{"name":"a"},{"name":2}]}`, "stops[1].name: got number, want string"},
		{`{"add":1,"city":"Paris"}`, "city: maxLength: got 5, want 3"},
		{`{"add":"x","city":"Paris"}`, "add: got string, want number; city: maxLength: got 5, want 3"},
		{`5`, "the arguments: got number, want object"},
		{`{`, "the arguments are not JSON"},
	}
	for _, tt := range tests {
		err := s.Check(json.RawMessage(tt.args))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Check(%s) = %v", tt.args, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Check(%s) = %v, want %q", tt.args, err, tt.want)
		}
	}
}

func TestCompile(t *testing.T) {
	tests := []struct{ schema, want string }{
		{`{"type":"nmber"}`, "the schema is not a valid JSON schema: "},
		{`{"$ref":"file:///etc/passwd"}`, "may only refer to itself"},
		{`{"$ref":"https://example.com/s.json"}`, "may only refer to itself"},
		{`{"type":"object","properties":{"a":{"$ref":"#/$defs/n"}},"$defs":{"n":{"type":"number"}}}`, ""},
	}
	for _, tt := range tests {
		_, err := argschema.Compile(json.RawMessage(tt.schema))
		if tt.want == "" {
			if err != nil {
				t.Errorf("Compile(%s) = %v", tt.schema, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Compile(%s) = %v, want %q", tt.schema, err, tt.want)
		}
	}
}
