package messages_test

import (
	"encoding/json"
	"testing"

	"github.com/lumen-home/lumen/messages"
)

// FuzzApplyFile: a configuration file (lumen apply -f, YAML or JSON) is
// refused with an error or read; one that is read writes back (lumen
// export) as YAML that reads back and exports the same again.
func FuzzApplyFile(f *testing.F) {
	for _, s := range []string{
		"initial: off\nstates:\n  - {name: red, r: 255, g: 0, b: 0}\nrules:\n  - {from: off, on: button_click, to: red}\n",
		"states:\n  - name: p\n    r: sin(frame*0.05)*40+200\n    g: 80\n    b: 0.5\n    speed: 50\nvars: {away: false, n: 0}\n",
		`{"states":[{"name":"a","r":1,"g":2,"b":3}],"rules":[{"from":"*","on":"x","to":"a","condition":"getData('n') > 1"}]}`,
		"states: [{name: \"on\", r: 1, g: 1, b: 1}]\nrules: [{from: 'no', on: yes, to: \"on\", priority: 5, enabled: false}]\n",
		"vars: {}\n", "a: b: c", "- x", "states: !!binary aGVsbG8=", "rules: [{from: *x}]",
	} {
		f.Add([]byte(s), s[0] == '{')
	}
	f.Fuzz(func(t *testing.T, raw []byte, isJSON bool) {
		ext := ".yaml"
		if isJSON {
			ext = ".json"
		}
		j, err := messages.ToJSON(raw, ext)
		if err != nil {
			return
		}
		if !json.Valid(j) {
			t.Fatalf("%q reads as invalid JSON %s", raw, j)
		}
		var c messages.ApplyRequest
		if messages.Decode(j, &c) != nil {
			return
		}
		y, err := messages.ToYAML(c)
		if err != nil {
			return // a number that is not finite: refused, said so
		}
		j2, err := messages.ToJSON(y, ".yaml")
		if err != nil {
			t.Fatalf("%q: its export does not read back: %v\n%s", raw, err, y)
		}
		var back messages.ApplyRequest
		if err := messages.Decode(j2, &back); err != nil {
			t.Fatalf("%q: its export does not decode: %v\n%s", raw, err, y)
		}
		// What a person sees is stable: exporting what was read back
		// writes the same file.
		y2, err := messages.ToYAML(back)
		if err != nil || string(y) != string(y2) {
			t.Fatalf("%q: export, apply, export changed it (%v):\n%s\n%s", raw, err, y, y2)
		}
	})
}
