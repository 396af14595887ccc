package lumentest

import (
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
)

// Events collects every event of light on nc until the test ends.
func Events(tb testing.TB, nc *nats.Conn, light string) chan *nats.Msg {
	tb.Helper()
	return Collect(tb, nc, "lumen."+light+".evt.>", 4096)
}

// Collect gathers the messages on subj, in a channel of n, from the
// moment it returns (the server has the subscription) until the test
// ends.
func Collect(tb testing.TB, nc *nats.Conn, subj string, n int) chan *nats.Msg {
	tb.Helper()
	ch := make(chan *nats.Msg, n)
	sub, err := nc.ChanSubscribe(subj, ch)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		tb.Fatal(err)
	}
	return ch
}

// WaitEvent waits for an event on subj whose body contains contains,
// skipping the others.
func WaitEvent(tb testing.TB, ch chan *nats.Msg, subj, contains string) *nats.Msg {
	tb.Helper()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case m := <-ch:
			if m.Subject == subj && strings.Contains(string(m.Data), contains) {
				return m
			}
		case <-deadline:
			tb.Fatalf("no event on %s containing %q", subj, contains)
		}
	}
}
