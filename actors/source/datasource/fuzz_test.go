package datasource_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/lumen-home/lumen/actors/source/datasource"
)

// FuzzParsePath: a store path that parses prints as one that parses to
// the same steps, and extracting it from any JSON never panics.
func FuzzParsePath(f *testing.F) {
	for _, s := range []string{"result", "result.main.temp", "result.items[0].price", "result.items[-1]", `result["key with space"]`,
		`result['it''s']`, "result.a.b.c[3][\"x\"]", "resul", "result[", `result["\u00e9"]`, "result.$x-y_z"} {
		f.Add(s, []byte(`{"main":{"temp":1},"items":[{"price":2}],"key with space":3,"it's":4}`))
	}
	f.Fuzz(func(t *testing.T, s string, result []byte) {
		p, err := datasource.ParsePath(s)
		if err != nil {
			return
		}
		again, err := datasource.ParsePath(p.String())
		if err != nil || !reflect.DeepEqual(p, again) {
			t.Fatalf("%q prints as %q, which parses to %v (%v)", s, p.String(), again, err)
		}
		if json.Valid(result) {
			_, _ = p.Extract(result)
		}
	})
}

// FuzzDecodeDef: a source definition from anyone (a person, the agent's
// model) is refused with an error or accepted; an accepted one encodes
// and decodes to itself, and its push and webhook results never panic.
func FuzzDecodeDef(f *testing.F) {
	for _, s := range []string{
		`{"name":"w","interval_ms":60000,"fetch":{"tool":"get_weather","args":{"location":"auto"}},"store":{"t":"result.temp"},"fires":"w"}`,
		`{"name":"d","type":"mqtt","topic":"home/+/doorbell","store":{"who":"result.who"},"fires":"ring"}`,
		`{"name":"n","type":"nats","subject":"a.b","fires":"x"}`,
		`{"name":"h","type":"webhook","token":"0123456789abcdef","fires":"x"}`,
		`{"name":"p","type":"gpio","pin":23,"pull":"down","edge":"both","debounce_ms":0,"fires":"m"}`,
		`{"name":"i","type":"internal","tracks":"state_duration","interval_ms":30000}`,
		`{"name":"t","type":"transition","interval_ms":1000,"fetch":{"tool":"door"},"fires":"t"}`,
		`{"name":"x","type":"http_listener"}`, `{}`, `null`, `{"name":"w","interval_ms":1e999}`,
	} {
		f.Add([]byte(s), []byte(`{"who":"Ann","temp":3}`))
	}
	f.Fuzz(func(t *testing.T, b, payload []byte) {
		d, err := datasource.Decode(b)
		if err != nil {
			return
		}
		out, err := json.Marshal(d)
		if err != nil {
			t.Fatalf("%s decodes but does not encode: %v", b, err)
		}
		again, err := datasource.Decode(out)
		if err != nil {
			t.Fatalf("%s decodes, but its encoding %s does not: %v", b, out, err)
		}
		if !reflect.DeepEqual(d, again) {
			t.Fatalf("%s: %+v, then %+v", b, d, again)
		}
		_, _ = datasource.PushResult(d, payload)
		_, _ = datasource.HookResult(d, "application/json", payload)
		_, _ = datasource.HookResult(d, "text/plain", payload)
	})
}
