package messages_test

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/lumen-home/lumen/messages"
)

// The ids and times of every kind of event, as journaled: replay compares
// outputs byte for byte, and a Nats-Msg-Id derived from what an event is
// keeps it stored once, so none of these may ever change.
func Example_eventIDs() {
	paris := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 24, 23, 8, 53, 281836927, paris)
	data := json.RawMessage(`{"transition":"button_click"}`)
	show := func(e messages.Envelope) { fmt.Printf("%s\n", messages.AppendEnvelope(nil, &e)) }

	show(messages.Input("kitchen", messages.InFired, "uniq", at, data))
	show(messages.Input("kitchen", messages.InConfig, messages.SeedID("kitchen"), at, json.RawMessage(`{}`)))
	fmt.Println(messages.DueID("kitchen", messages.InTimer, "back", at))
	show(messages.Output("kitchen", 42, 1, messages.OutState, at, json.RawMessage(`{"from":"off","to":"red"}`)))
	step, _ := messages.AgentStep("kitchen", messages.OutAgentData{Session: "default", Step: 7, Kind: messages.AgentKindAsk, Text: "red"}, at)
	fmt.Println(step.ID)
	show(messages.Restart("kitchen", messages.OutRestartData{Actor: "lumen/light-kitchen", Reason: "boom", Restarts: 1}, "uniq", at))
	show(messages.Failure("kitchen", messages.OutErrorData{Code: 502, Kind: messages.ErrorSource, Error: "the API is down"}, "uniq", at))
	// Output:
	// {"v":1,"id":"uniq","type":"fired","light":"kitchen","time":"2026-11-24T22:08:53.281836927Z","data":{"transition":"button_click"}}
	// {"v":1,"id":"kitchen:seed","type":"config","light":"kitchen","time":"2026-11-24T22:08:53.281836927Z","data":{}}
	// kitchen:timer:back:1795558133281836927
	// {"v":1,"id":"kitchen:42:1","type":"state","light":"kitchen","time":"2026-11-24T22:08:53.281836927Z","cause":42,"data":{"from":"off","to":"red"}}
	// kitchen:agent:default:7
	// {"v":1,"id":"kitchen:restart:uniq","type":"restart","light":"kitchen","time":"2026-11-24T22:08:53.281836927Z","data":{"actor":"lumen/light-kitchen","reason":"boom","restarts":1}}
	// {"v":1,"id":"kitchen:source:uniq","type":"error","light":"kitchen","time":"2026-11-24T22:08:53.281836927Z","data":{"code":502,"error":"the API is down","kind":"source"}}
}

func TestOutputIDMatchesItsConstructor(t *testing.T) {
	e := messages.Output("desk-light-1", 18446744073709551615, 12, messages.OutVar, time.Unix(0, 0), nil)
	if e.ID != "desk-light-1:18446744073709551615:12" || e.ID != messages.OutputID("desk-light-1", 18446744073709551615, 12) {
		t.Fatalf("id %q", e.ID)
	}
}

// export | apply round-trips: the configured initial state, not the
// current one, and no schedule's next time.
func TestGetReplyConfig(t *testing.T) {
	next := time.Unix(100, 0)
	g := messages.GetReply{State: "red", Initial: "off", Schedules: []messages.Schedule{{Name: "n", Cron: "0 3 * * *", Fires: "x", Next: &next}}}
	c := g.Config()
	if c.Initial != "off" || len(c.Schedules) != 1 || c.Schedules[0].Next != nil || g.Schedules[0].Next == nil {
		t.Fatalf("config %+v (the reply's schedules %+v)", c, g.Schedules)
	}
}

func TestButtonGesture(t *testing.T) {
	at := time.Unix(0, 0)
	ev := func(typ string, d any) []byte {
		b, _ := json.Marshal(d)
		e := messages.Input("k", typ, "id", at, b)
		return messages.AppendEnvelope(nil, &e)
	}
	for _, tt := range []struct {
		name             string
		event            []byte
		gesture, decided bool
	}{
		{"a click", ev(messages.InFired, messages.InFiredData{Transition: "button_click", Source: "button"}), true, false},
		{"a fire from the CLI", ev(messages.InFired, messages.InFiredData{Transition: "button_click", Source: "api"}), false, false},
		{"an approval decided by the button", ev(messages.OutAgent, messages.OutAgentData{Kind: messages.AgentKindDecision, Who: "button"}), false, true},
		{"an approval decided by the CLI", ev(messages.OutAgent, messages.OutAgentData{Kind: messages.AgentKindDecision, Who: "cli"}), false, false},
		{"a bare payload", []byte(`{"transition":"button_click","source":"button"}`), false, false},
	} {
		if g, d := messages.ButtonGesture(tt.event); g != tt.gesture || d != tt.decided {
			t.Errorf("%s: %v %v", tt.name, g, d)
		}
	}
}
