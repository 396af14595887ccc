package wire_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// HouseLights: no hub is ErrNoHouse; a directory is decoded; a refusal
// is an *Error. (nats/house tests the hub's answer with real Pis.)
func TestHouseLights(t *testing.T) {
	nc := connect(t)
	c := wire.New(nc)
	ctx := context.Background()
	if _, err := c.HouseLights(ctx); !errors.Is(err, wire.ErrNoHouse) {
		t.Fatalf("no hub: %v", err)
	}
	want := messages.HouseLightsReply{OK: true, Lights: []messages.HouseLight{
		{Light: "hall", Pi: "pib", Room: "hall", Aliases: []string{"corridor"}, Groups: []string{"downstairs"}, States: []string{"off", "on"}, Online: true},
	}}
	var refuse atomic.Bool
	sub, err := nc.Subscribe(subject.HouseLights(), func(m *nats.Msg) {
		if refuse.Load() {
			_ = wire.ReplyError(m, 500, "house: encode the directory")
			return
		}
		b, _ := json.Marshal(want)
		_ = m.Respond(b)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sub.Unsubscribe() }()
	got, err := c.HouseLights(ctx)
	if err != nil || len(got) != 1 || got[0].Light != "hall" || got[0].Aliases[0] != "corridor" || !got[0].Online {
		t.Errorf("directory: %+v, %v", got, err)
	}
	refuse.Store(true)
	var we *wire.Error
	if _, err := c.HouseLights(ctx); !errors.As(err, &we) || we.Code != 500 {
		t.Errorf("refusal: %v", err)
	}
}
