package machine_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
)

func TestScratch(t *testing.T) {
	m := machine.New(machine.WithEvalTimeout(20 * time.Millisecond))
	t0 := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	seq := uint64(0)
	do := func(typ, payload string) {
		seq++
		r := m.Apply(machine.Event{Seq: seq, Time: t0.Add(time.Duration(seq) * time.Second)}, typ, []byte(payload))
		for _, o := range r.Outputs {
			b, _ := json.Marshal(o.Data)
			fmt.Printf("  %s %s\n", o.Type, b)
		}
		fmt.Printf("-> %s changed=%v\n", r.State, r.Changed)
	}
	do("config", `{"op":"create_state","states":[{"name":"red","r":255,"g":0,"b":0}]}`)
	do("config", `{"op":"append_rules","rules":[
	{"from": "*", "on": "button_click", "to": "red", "condition": "getData('counter') === undefined", "action": "setData('counter', 2)"},
	{"from": "red", "on": "button_click", "to": "red", "condition": "getData('counter') > 0", "action": "setData('counter', getData('counter') - 1)"},
	{"from": "red", "on": "button_click", "to": "off", "condition": "getData('counter') === 0", "action": "setData('counter', undefined)"}]}`)
	for i := 0; i < 4; i++ {
		do("fired", `{"transition":"button_click"}`)
	}
	do("config", `{"op":"append_rules","rules":[{"from":"*","on":"x","to":"red","priority":5,"condition":"(() => { while(true){} })()"},
	{"from":"*","on":"x","to":"red","priority":4,"action":"setData('o', {a:[1,2.5,'x']}); startTimer('t', 500); null.foo"},
	{"from":"*","on":"x","to":"off","action":"setData('o', {a:[1,2.5,'x']}); startTimer('t', 500); startTimer('t', 100); setData('r', random()); setData('n', now())"}]}`)
	do("fired", `{"transition":"x"}`)
	do("fired", `{"transition":"x"}`)
	do("config", `{"op":"append_rules","rules":[{"from":"*","on":"y","to":"red","condition":"getData('a' +)"}]}`)
	do("config", `{"op":"append_rules","rules":[{"from":"*","on":"y","to":"red","condition":"1)}); (function(){ return (1"}]}`)
	do("config", `{"op":"append_rules","rules":[{"from":"*","on":"y","to":"red","action":"if (x) {\n  foo(;\n}"}]}`)
	do("var", `{"name":"z","value":{"b":1.0,"a":[1e2]}}`)
	do("config", `{"op":"create_schedule","schedules":[{"name":"ev","cron":"0 19 * * *","tz":"Europe/Paris","fires":"x"}]}`)
	fmt.Println(m.Model())
	b, _ := m.Snapshot()
	fmt.Println(string(b))
}
