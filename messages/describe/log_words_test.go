package describe_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
)

// Every event type a light journals has words of its own: none reaches
// the fallback that quotes its data, so a person never reads JSON (the
// page's log shows these words).
func TestEveryEventHasWords(t *testing.T) {
	at := `"2026-11-29T08:00:00Z"`
	tests := []struct {
		dir, typ, data string
	}{
		{"in", messages.InFired, `{"transition":"button_click","source":"button"}`},
		{"in", messages.InState, `{"name":"red"}`},
		{"in", messages.InVar, `{"name":"guests","value":{"n":3,"who":["a","b"]}}`},
		{"in", messages.InVar, `{"name":"guests","unset":true}`},
		{"in", messages.InConfig, `{"op":"append_rules","rules":[{"id":"r9","from":"*","on":"button_click","to":"red","condition":"getData('n') > {a:1}.a","enabled":true}]}`},
		{"in", messages.InConfig, `{"op":"apply","states":[{"name":"red","r":255,"g":0,"b":0}],"vars":{"n":1}}`},
		{"in", messages.InConfig, `{"op":"create_schedule","schedules":[{"name":"evening","cron":"0 19 * * *","fires":"evening"}]}`},
		{"in", messages.InConfig, `{"op":"delete_rules","ids":["r1"]}`},
		{"in", messages.InConfig, `{"op":"set_names","room":"kitchen"}`},
		{"in", messages.InTimer, `{"name":"t1","deadline":` + at + `}`},
		{"in", messages.InSchedule, `{"name":"evening","at":` + at + `}`},
		{"in", messages.InData, `{"source":"btc","vars":{"btc":{"usd":67012.5}}}`},
		{"in", messages.InUpgrade, `{"level":2}`},
		{"in", messages.InIntent, `{"phrase":"movie time","verb":"set_state","arg":"dim"}`},
		{"in", messages.InLayer, `{"name":"party","deadline":` + at + `}`},
		{"in", messages.InPower, `{"on":false}`},
		{"in", messages.InBrightness, `{"percent":40}`},
		{"in", messages.InColor, `{"r":255,"g":165,"b":0,"as":"orange"}`},
		{"out", messages.OutState, `{"from":"off","to":"red","rule":"r1","transition":"button_click","changed":true}`},
		{"out", messages.OutState, `{"from":"off","to":"color","rule":null,"changed":true,"color":{"r":255,"g":0,"b":0}}`},
		{"out", messages.OutVar, `{"name":"n","value":{"a":[1,2]}}`},
		{"out", messages.OutTimer, `{"op":"set","name":"t1","deadline":` + at + `}`},
		{"out", messages.OutSchedule, `{"op":"set","schedule":{"name":"evening","cron":"0 19 * * *","fires":"evening"},"next":` + at + `}`},
		{"out", messages.OutConfig, `{"op":"append_rules","rules":["r9"]}`},
		{"out", messages.OutIgnored, `{"transition":"button_click","reason":"no rule matches button_click from red"}`},
		{"out", messages.OutError, `{"code":500,"error":"rule r9: ReferenceError: undefinedFn is not defined","kind":"exception","rule":"r9"}`},
		{"out", messages.OutError, `{"code":400,"error":"no state named {blue}","kind":"rejected"}`},
		{"out", messages.OutRestart, `{"actor":"light/demo","reason":"panic: {boom}","restarts":1}`},
		{"out", messages.OutUpgrade, `{"from":1,"to":2}`},
		{"out", messages.OutGap, `{"from":10,"to":20,"reason":"the Pi's disk was full"}`},
		{"out", messages.OutIntent, `{"phrase":"movie time","verb":"set_state","arg":"dim"}`},
		{"out", messages.OutLayer, `{"name":"party","ended_by":"ms","restored":true}`},
		{"out", messages.OutBrightness, `{"percent":40,"from":100}`},
		{"out", messages.OutAgent, `{"session":"page","step":1,"kind":"ask","who":"page","text":"turn it off"}`},
		{"out", messages.OutAgent, `{"session":"page","step":2,"kind":"call","call":{"tool":"power","args":{"on":false},"tier":"act","ok":true}}`},
		{"out", messages.OutAgent, `{"session":"page","step":3,"kind":"tool","call":{"tool":"power","args":{"on":false},"tier":"act","ok":true,"result":{"ok":true}}}`},
		{"out", messages.OutAgent, `{"session":"page","step":4,"kind":"model","message":{"role":"assistant","content":"done"}}`},
		{"out", messages.OutAgent, `{"session":"page","step":5,"kind":"end","status":"done","text":"turned it off"}`},
	}
	var words describe.Events
	for _, tt := range tests {
		env := messages.Envelope{V: messages.Version, Type: tt.typ, Light: "demo", Time: time.Now(), Cause: 7, By: "http", Data: json.RawMessage(tt.data)}
		var got string
		if tt.dir == "in" {
			got = describe.Input(env)
		} else {
			got = words.Output(env)
		}
		// Data that carries braces of its own (an error's text, a
		// condition) may quote them; the JSON around them must not show.
		quoted := strings.NewReplacer("{a:1}", "", "{blue}", "", "{boom}", "").Replace(got)
		if got == "" || strings.ContainsAny(quoted, "{}") || strings.Contains(got, `":`) {
			t.Errorf("%s.%s %s: %q", tt.dir, tt.typ, tt.data, got)
		}
	}
}
