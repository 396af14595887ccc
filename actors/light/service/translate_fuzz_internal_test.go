package service

import (
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// FuzzTranslate: any body of any of the light's verbs, from any client,
// is refused with an error or becomes an input that encodes as JSON.
func FuzzTranslate(f *testing.F) {
	for i, b := range []string{`{"transition":"button_click"}`, `{"name":"red"}`, `{"states":[{"name":"a","r":1,"g":2,"b":3}],"rules":[]}`,
		`{"name":"a","r":"frame","g":0,"b":0,"speed":10}`, `{"name":"red"}`, `{"rules":[{"from":"*","on":"x","to":"red"}]}`, `{"ids":["r1"]}`,
		`{"name":"n","value":1}`, `{"name":"s","cron":"0 19 * * *","fires":"e"}`, `{"name":"s"}`, `{"ids":["r1"],"enabled":false}`,
		`{"phrase":"cosy","verb":"set_state","arg":"red"}`, `{"phrase":"cosy"}`, `{"name":"w","type":"mqtt","topic":"a/b","fires":"x"}`,
		`{"name":"w"}`, `{"source":"w","vars":{"t":1}}`, `{"name":"door","code":"return true","poll_interval_ms":1000}`, `{"name":"door"}`,
		`{"name":"t","code":"return 1"}`, `{"name":"t"}`} {
		f.Add(uint8(i), []byte(b))
	}
	verbs := messages.VerbsOf(messages.PartLight)
	f.Fuzz(func(t *testing.T, verb uint8, body []byte) {
		v := verbs[int(verb)%len(verbs)]
		in, err := translate(v, body)
		if err != nil {
			return
		}
		if _, err := json.Marshal(in); err != nil {
			t.Fatalf("%s %q: the input does not encode: %v", v, body, err)
		}
	})
}
