package daemon

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/wire"
)

// Until a light is served, its commands get a 503 that says it is
// starting, not the silence of a light that does not exist; once served
// (here: not yet subscribed again), the placeholder is gone.
func TestStartingLightsAnswer503(t *testing.T) {
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{})
	nc := b.Conn(t)
	s, err := answerStarting(nc, []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	c := wire.New(nc, wire.WithTimeout(2*time.Second))
	starting := func(light string) {
		t.Helper()
		_, err := c.Request(ctx, light, "fire", map[string]string{"transition": "button_click"})
		var we *wire.Error
		if !errors.As(err, &we) || we.Code != 503 || we.Msg != "light "+light+" is starting (it reads its journal); try again in a moment" {
			t.Fatalf("light %s while starting: %v", light, err)
		}
	}
	gone := func(light string) {
		t.Helper()
		if _, err := c.Request(ctx, light, "get", struct{}{}); !errors.Is(err, wire.ErrNoLight) {
			t.Fatalf("light %s after the placeholder: %v; want no responder", light, err)
		}
	}
	starting("a")
	starting("b")
	gone("c")
	s.served("a")
	gone("a")
	starting("b")
	s.close()
	gone("b")
}
