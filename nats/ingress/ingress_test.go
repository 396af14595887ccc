package ingress_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/ingress"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// TestIngress: what a client publishes to a light's inputs is journaled
// with the daemon's id, time and by, whatever the client's envelope and
// headers say; a client that asks gets JetStream's answer; other lights'
// inputs are not journaled.
func TestIngress(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := lumentest.StartBus(t, broker.Config{Lights: []string{"demo"}})
	d, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	j := b.Journal
	in, err := ingress.Start(ingress.Config{Conn: d, Journal: j, Lights: []string{"demo"}, Clock: clocktest.New(now)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Stop()
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}

	c, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// An envelope from 2099, with the dedupe id an output would take.
	forged := `{"v":1,"id":"mine","type":"fired","light":"demo","time":"2099-01-01T00:00:00Z","by":"button","data":{"transition":"button_click"}}`
	m := nats.NewMsg(subject.In("demo", "fired"))
	m.Data = []byte(forged)
	m.Header.Set("Nats-Msg-Id", "demo:2:0")
	if err := c.PublishMsg(m); err != nil {
		t.Fatal(err)
	}
	// Not an envelope: journaled as it came.
	if err := c.Publish(subject.In("demo", "fired"), []byte(`{"transition":"x"}`)); err != nil {
		t.Fatal(err)
	}
	// Another light's: not journaled.
	if err := c.Publish(subject.In("other", "fired"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	// A JetStream publish is answered as JetStream answers.
	js, err := jetstream.New(c)
	if err != nil {
		t.Fatal(err)
	}
	ack, err := js.Publish(ctx, subject.In("demo", "fired"), []byte(`{"v":1,"time":"1970-01-01T00:00:00Z","data":{}}`))
	if err != nil || ack.Stream != subject.Stream || ack.Sequence != 3 {
		t.Fatalf("a JetStream publish: %+v, %v; want LUMEN seq 3", ack, err)
	}
	if _, err := js.Publish(ctx, subject.In("other", "fired"), []byte(`{}`)); err == nil {
		t.Error("an input of a light that does not run here was acknowledged")
	}

	var got []journal.Msg
	if err := j.Replay(ctx, "", 0, 0, func(m journal.Msg) error { got = append(got, m); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("journaled %d events, want 3", len(got))
	}
	var env messages.Envelope
	if err := json.Unmarshal(got[0].Data, &env); err != nil {
		t.Fatal(err)
	}
	if env.ID == "mine" || env.ID == "" || !env.Time.Equal(now) || env.By != messages.WhoNATS || string(env.Data) != `{"transition":"button_click"}` {
		t.Errorf("journaled %s; want the daemon's id, time %s and by nats, the client's data", got[0].Data, now)
	}
	if string(got[1].Data) != `{"transition":"x"}` {
		t.Errorf("a bare body was journaled as %s", got[1].Data)
	}
	var late messages.Envelope
	if err := json.Unmarshal(got[2].Data, &late); err != nil || !late.Time.Equal(now) {
		t.Errorf("an envelope from 1970 was journaled as %s", got[2].Data)
	}
	// The output id the client tried to take is still free.
	if _, err := j.Append(ctx, subject.Out("demo", "state"), []byte(`{}`), journal.MsgID("demo:2:0")); err != nil {
		t.Fatal(err)
	}
	if n, err := j.LastSeq(ctx); err != nil || n != 4 {
		t.Errorf("an output with the id the client sent was dropped as a duplicate: last seq %d, %v", n, err)
	}
}
