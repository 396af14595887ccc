package daemon_test

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// TestFirstClientFindsTheLight: a client that connects at the first
// instant the daemon lets it (it dials without pause while the daemon
// starts) finds the light: a 503 while it starts, or its answer, never
// no responder, which a client reads as "no light named k". Five starts
// of the same data directory on the same port.
func TestFirstClientFindsTheLight(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	data := t.TempDir()
	for round := range 5 {
		got := make(chan error, 1)
		done := make(chan struct{})
		go func() {
			defer close(done)
			// The client's own retries, 100 µs apart, without jitter.
			connected := make(chan struct{})
			nc, err := nats.Connect("nats://"+addr, nats.Timeout(time.Second), nats.RetryOnFailedConnect(true),
				nats.MaxReconnects(-1), nats.ReconnectWait(100*time.Microsecond), nats.ReconnectJitter(0, 0),
				nats.ConnectHandler(func(*nats.Conn) { close(connected) }))
			if err != nil {
				got <- err
				return
			}
			defer nc.Close()
			select {
			case <-connected:
			case <-time.After(time.Minute):
				got <- errors.New("could not connect for a minute")
				return
			}
			_, err = nc.Request(subject.Cmd("k", messages.VerbGet), []byte(`{}`), 5*time.Second)
			got <- err
		}()
		d := startWith(t, func(c *daemon.Config) { c.Data, c.Listen = data, addr }, "k")
		if err := <-got; err != nil {
			t.Fatalf("start %d: the first client's get: %v; want the light's answer or its 503", round+1, err)
		}
		<-done
		if err := d.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
