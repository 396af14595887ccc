package wire_test

import (
	"context"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Changes sees every event published before a request that reaches its
// connection after it: someone changes the light, then asks, and the
// cache behind the answer knows it is stale. Events nobody asks about for
// a while are not lost either, and neither are those past its buffer.
func TestChanges(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	daemon, person := twoConns(ctx, t)

	changes, err := wire.New(daemon).Light("kitchen").Changes(messages.OutConfig, messages.OutIntent)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(changes.Stop)
	serve(t, daemon, "kitchen", map[string]func(micro.Request) any{
		"ask": func(micro.Request) any { return map[string]bool{"changed": changes.Changed()} },
	})
	if err := daemon.Flush(); err != nil { // the subscriptions are in place
		t.Fatal(err)
	}
	c := wire.New(person)
	ask := func() bool {
		t.Helper()
		var r struct{ Changed bool }
		if err := c.Call(ctx, "kitchen", "ask", struct{}{}, &r); err != nil {
			t.Fatal(err)
		}
		return r.Changed
	}
	publish := func(typ string, n int) {
		t.Helper()
		for range n {
			if err := person.Publish(subject.Out("kitchen", typ), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	ask() // whatever came before
	for i := range 200 {
		typ := []string{messages.OutConfig, messages.OutIntent, messages.OutState}[i%3]
		publish(typ, 1)
		if got, want := ask(), typ != messages.OutState; got != want {
			t.Fatalf("round %d: after an %s event Changed is %v", i, typ, got)
		}
	}
	if ask() {
		t.Fatal("Changed twice for one event")
	}
	// More events than the buffer holds, and time for the background
	// drain: one change all the same, then none.
	publish(messages.OutConfig, 5000)
	if err := person.Flush(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	if !ask() || ask() {
		t.Fatal("a burst of events is not one change")
	}
	changes.Stop()
	if !ask() {
		t.Fatal("a stopped Changes says nothing changed")
	}
}

// Gen counts the events; after Sync it counts every event published
// before, for a request that reaches the daemon another way (HTTP).
func TestChangesGenAfterSync(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	daemon, person := twoConns(ctx, t)
	changes, err := wire.New(daemon).Light("kitchen").Changes(messages.OutConfig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(changes.Stop)
	if err := daemon.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 100 {
		if err := person.Publish(subject.Out("kitchen", messages.OutConfig), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
		if err := person.Flush(); err != nil { // the server has it
			t.Fatal(err)
		}
		if err := changes.Sync(ctx); err != nil {
			t.Fatal(err)
		}
		if got := changes.Gen(); got != uint64(i+1) {
			t.Fatalf("after %d events and a Sync, Gen is %d", i+1, got)
		}
	}
	if !changes.Changed() || changes.Changed() {
		t.Fatal("Changed does not follow Gen")
	}
}

// twoConns starts a broker and connects the daemon and a person to it.
func twoConns(ctx context.Context, t *testing.T) (daemon, person *nats.Conn) {
	t.Helper()
	b := lumentest.StartBus(t, broker.Config{})
	conn := func() *nats.Conn {
		nc := b.Conn(t)
		return nc
	}
	return conn(), conn()
}
