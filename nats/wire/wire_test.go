package wire_test

import (
	"context"
	"errors"
	"sync/atomic"
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

func connect(t *testing.T) *nats.Conn {
	t.Helper()
	b := lumentest.StartBus(t, broker.Config{})
	nc := b.Conn(t)
	return nc
}

// serve answers light's verbs the way the services do, through Respond.
func serve(t *testing.T, nc *nats.Conn, light string, handlers map[string]func(micro.Request) any) {
	t.Helper()
	svc, err := micro.AddService(nc, micro.Config{Name: "lumen", Version: "0.1.0"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = svc.Stop() })
	grp := svc.AddGroup(subject.CmdPrefix(light))
	for verb, h := range handlers {
		if err := grp.AddEndpoint(verb, micro.HandlerFunc(func(req micro.Request) { wire.Respond(req, h(req)) })); err != nil {
			t.Fatal(err)
		}
	}
}

func TestRequestAndRefusals(t *testing.T) {
	nc := connect(t)
	hung := make(chan struct{})
	serve(t, nc, "kitchen", map[string]func(micro.Request) any{
		"get":    func(micro.Request) any { return &messages.GetReply{OK: true, Light: "kitchen", State: "red"} },
		"fire":   func(micro.Request) any { return &messages.ErrorReply{Code: 400, Error: "fire: say which transition"} },
		"delete": func(micro.Request) any { return &wire.Error{Code: 409, Msg: "rule r2 uses it"} },
		"hang":   func(micro.Request) any { <-hung; return struct{}{} },
	})
	t.Cleanup(func() { close(hung) }) // before the service stops
	c := wire.New(nc, wire.WithTimeout(200*time.Millisecond))
	ctx := context.Background()

	var g messages.GetReply
	if err := c.Call(ctx, "kitchen", "get", nil, &g); err != nil || g.State != "red" {
		t.Fatalf("get = %+v, %v", g, err)
	}
	for verb, want := range map[string]wire.Error{"fire": {Code: 400, Msg: "fire: say which transition"}, "delete": {Code: 409, Msg: "rule r2 uses it"}} {
		_, err := c.Request(ctx, "kitchen", verb, map[string]string{"x": "y"})
		var we *wire.Error
		if !errors.As(err, &we) || *we != want {
			t.Errorf("%s: %v, want %+v", verb, err, want)
		}
	}
	if _, err := c.Request(ctx, "hall", "get", nil); !errors.Is(err, wire.ErrNoLight) {
		t.Errorf("unknown light: %v, want ErrNoLight", err)
	}
	if _, err := c.Request(ctx, "kitchen", "hang", nil); !errors.Is(err, wire.ErrTimeout) {
		t.Errorf("hang: %v, want ErrTimeout", err)
	}
	// A bound light speaks the same.
	if _, err := c.Light("kitchen").Command(ctx, "delete", []byte(`{}`)); err == nil || err.Error() != "rule r2 uses it" {
		t.Errorf("Light.Command: %v", err)
	}
}

func TestCallRetry(t *testing.T) {
	nc := connect(t)
	c := wire.New(nc)
	ctx := context.Background()

	// The light starts serving after the first tries: the call waits for
	// it, and says so once.
	var told atomic.Int32
	go func() {
		// Once the call says it waits, after its first tries.
		if !lumentest.Within(30*time.Second, func() bool { return told.Load() > 0 }) {
			return // the call fails below
		}
		serve(t, nc, "kitchen", map[string]func(micro.Request) any{
			"get":  func(micro.Request) any { return &messages.GetReply{OK: true, State: "green"} },
			"bad":  func(micro.Request) any { return &messages.ErrorReply{Code: 400, Error: "bad input"} },
			"down": func(micro.Request) any { return &messages.ErrorReply{Code: 500, Error: "the light did not answer"} },
		})
	}()
	var g messages.GetReply
	err := c.CallRetry(ctx, "kitchen", "get", nil, &g, wire.Retry{Each: time.Second, Logf: func(string, ...any) { told.Add(1) }, Who: "test"})
	if err != nil || g.State != "green" || told.Load() != 1 {
		t.Fatalf("get = %+v, %v, told %d", g, err, told.Load())
	}
	// A refusal of the request is final; a failure inside is tried again.
	start := time.Now()
	var we *wire.Error
	if err := c.CallRetry(ctx, "kitchen", "bad", nil, nil, wire.Retry{Attempts: 5}); !errors.As(err, &we) || we.Code != 400 || time.Since(start) > 500*time.Millisecond {
		t.Errorf("bad: %v after %v, want the 400 at once", err, time.Since(start))
	}
	if err := c.CallRetry(ctx, "kitchen", "down", nil, nil, wire.Retry{Attempts: 2}); !errors.As(err, &we) || we.Code != 500 {
		t.Errorf("down: %v, want the 500 after two tries", err)
	}
	cctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := c.CallRetry(cctx, "hall", "get", nil, nil, wire.Retry{}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("no light, no limit: %v, want the context's end", err)
	}
}
