package machine_test

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/lumen-home/lumen/actors/light/machine"
	"github.com/lumen-home/lumen/messages"
)

func Example() {
	m := machine.New()
	defer m.Close()
	at := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	seq := uint64(0)
	next := func() machine.Event {
		seq++
		return machine.Event{Seq: seq, Time: at.Add(time.Duration(seq) * time.Second)}
	}

	cfg, _ := json.Marshal(struct {
		Op string `json:"op"`
		messages.ApplyRequest
	}{messages.OpApply, machine.Demo()})
	m.Apply(next(), messages.InConfig, cfg)

	for _, tr := range []string{"button_click", "button_click", "button_hold", "button_double_click"} {
		r := m.Apply(next(), messages.InFired, []byte(`{"transition":"`+tr+`"}`))
		for _, o := range r.Outputs {
			b, _ := json.Marshal(o.Data)
			fmt.Println(o.Type, string(b))
		}
	}
	// Output:
	// state {"from":"off","to":"red","rule":"r1","transition":"button_click","changed":true}
	// state {"from":"red","to":"green","rule":"r2","transition":"button_click","changed":true}
	// state {"from":"green","to":"off","rule":"r5","transition":"button_hold","changed":true}
	// ignored {"transition":"button_double_click","reason":"no rule matches button_double_click in state off"}
}

func ExampleMachine_Apply_counter() {
	m := machine.New()
	defer m.Close()
	at := time.Date(2026, 3, 28, 12, 0, 0, 0, time.UTC)
	m.Apply(machine.Event{Seq: 1, Time: at}, messages.InConfig, []byte(`{"op":"apply",
		"states":[{"name":"red","r":255,"g":0,"b":0}],
		"rules":[
			{"from":"*","on":"button_click","to":"red","condition":"getData('counter') === undefined","action":"setData('counter', 2)"},
			{"from":"red","on":"button_click","to":"red","condition":"getData('counter') > 0","action":"setData('counter', getData('counter') - 1)"},
			{"from":"red","on":"button_click","to":"off","condition":"getData('counter') === 0","action":"setData('counter', undefined)"}]}`))
	for i := range 4 {
		r := m.Fire(machine.Event{Seq: uint64(i + 2), Time: at}, "button_click")
		fmt.Println(r.State, m.Model().Vars)
	}
	// Output:
	// red map[counter:[50]]
	// red map[counter:[49]]
	// red map[counter:[48]]
	// off map[]
}
