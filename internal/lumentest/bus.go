package lumentest

import (
	"context"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
)

// Bus is an embedded broker with JetStream on disk and its journal, for
// tests of what runs on the bus in process (an actor, a service, the
// journal itself). It shuts down when the test ends.
type Bus struct {
	*broker.Broker
	Journal *journal.Journal
}

// StartBus starts a Bus with cfg, whose zero fields get a test's
// defaults: a fresh temporary directory, a free port on loopback, and
// batched syncs (a test does not pay for an fsync per write).
func StartBus(tb testing.TB, cfg broker.Config) *Bus {
	tb.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = tb.TempDir()
	}
	if cfg.Listen == "" {
		cfg.Listen = "127.0.0.1:0"
	}
	if cfg.Sync == "" {
		cfg.Sync = broker.SyncBatch
	}
	b, err := broker.Start(context.Background(), cfg)
	if err != nil {
		tb.Fatalf("start the bus: %v", err)
	}
	tb.Cleanup(b.Shutdown)
	return &Bus{Broker: b, Journal: journal.New(b.JetStream())}
}

// Conn is a client connection to the bus as the daemon's own, closed
// when the test ends.
func (b *Bus) Conn(tb testing.TB, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	nc, err := b.Connect(opts...)
	if err != nil {
		tb.Fatalf("connect to the bus: %v", err)
	}
	tb.Cleanup(nc.Close)
	return nc
}

// Connect connects to url with opts, closed when the test ends.
func Connect(tb testing.TB, url string, opts ...nats.Option) *nats.Conn {
	tb.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		tb.Fatalf("connect to %s: %v", url, err)
	}
	tb.Cleanup(nc.Close)
	return nc
}
