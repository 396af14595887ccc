package lumentest

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
)

// AgentEvents are a light's agent events, as they come.
type AgentEvents struct {
	ch chan messages.OutAgentData
}

// WatchAgent follows light's agent events on nc until the test ends.
func WatchAgent(tb testing.TB, nc *nats.Conn, light string) *AgentEvents {
	tb.Helper()
	w := &AgentEvents{ch: make(chan messages.OutAgentData, 256)}
	sub, err := nc.Subscribe("lumen."+light+".evt.out.agent", func(m *nats.Msg) {
		var env messages.Envelope
		if messages.DecodeEnvelope(m.Data, &env) != nil {
			return
		}
		var d messages.OutAgentData
		if json.Unmarshal(env.Data, &d) == nil {
			w.ch <- d
		}
	})
	if err != nil {
		tb.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sub.Unsubscribe() })
	return w
}

// Next waits for the next event of kind (messages.AgentKind*), skipping
// the others.
func (w *AgentEvents) Next(tb testing.TB, kind string) messages.OutAgentData {
	tb.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case d := <-w.ch:
			if d.Kind == kind {
				return d
			}
		case <-timeout:
			tb.Fatalf("no agent event of kind %s", kind)
		}
	}
}
