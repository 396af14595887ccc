package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// tailHistory prints the journal's events of --light from fromSeq, or
// those of the last since, then follows it live.
func (t *Term) tailHistory(ctx context.Context, since time.Duration, fromSeq uint64) error {
	if since < 0 {
		return Usage(errors.New("--since must be a duration into the past, e.g. 1h"))
	}
	var nc *nats.Conn
	var err error
	filter := subject.AllEvents
	if t.Light == "*" {
		nc, err = t.Connect()
	} else if nc, err = t.Open(ctx); err == nil {
		filter = subject.Events(t.Light)
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		return err
	}
	var after time.Time
	if since > 0 {
		after = time.Now().Add(-since)
		if fromSeq, err = j.SeqAt(ctx, filter, after); err != nil {
			return err
		}
	}
	fmt.Fprintln(t.Stderr, describe.FollowingFrom(filter, fromSeq, t.where()))
	var events describe.Events
	err = j.Follow(ctx, filter, fromSeq, func(m journal.Msg) error {
		if m.Time.Before(after) {
			return nil
		}
		if t.JSON {
			fmt.Fprintf(t.Stdout, "%s\n", m.Data)
		} else {
			fmt.Fprintln(t.Stdout, events.Event(m.Subject, m.Data))
		}
		return nil
	}, nil)
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// watchLight connects and subscribes to the events of --light before a
// command acts, so that none of what follows is missed.
func (t *Term) watchLight(ctx context.Context) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := t.Open(ctx)
	if err != nil {
		return nil, nil, err
	}
	return t.subscribe(nc, subject.Events(t.Light))
}

// watchAll follows every running light: one subscription each, since a
// Pi of a house sends the hub only what names its own lights.
func (t *Term) watchAll(ctx context.Context) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := t.Connect()
	if err != nil {
		return nil, nil, err
	}
	running, err := t.client(nc).Discover(ctx)
	if err != nil || len(running) == 0 {
		nc.Close()
		return t.watch(subject.AllEvents)
	}
	ch := make(chan *nats.Msg, 1024)
	for _, r := range running {
		if _, err := nc.ChanSubscribe(subject.Events(r.Light), ch); err != nil {
			nc.Close()
			return nil, nil, err
		}
	}
	return nc, ch, nc.Flush()
}

// watch connects and subscribes to the events matching filter. Closing
// the connection ends the subscription.
func (t *Term) watch(filter string) (*nats.Conn, chan *nats.Msg, error) {
	nc, err := t.Connect()
	if err != nil {
		return nil, nil, err
	}
	return t.subscribe(nc, filter)
}

func (t *Term) subscribe(nc *nats.Conn, filter string) (*nats.Conn, chan *nats.Msg, error) {
	ch := make(chan *nats.Msg, 1024)
	if _, err := nc.ChanSubscribe(filter, ch); err != nil {
		nc.Close()
		return nil, nil, err
	}
	if err := nc.Flush(); err != nil {
		nc.Close()
		return nil, nil, err
	}
	return nc, ch, nil
}

// printEvents prints the light's events from ch as they come, until the
// light has been quiet for quiet once done has said enough, or for wait
// if it never does (0: no limit), or until ctx ends.
func (t *Term) printEvents(ctx context.Context, ch chan *nats.Msg, wait, quiet time.Duration, done func(*nats.Msg) bool) {
	first := time.NewTimer(wait)
	defer first.Stop()
	if wait <= 0 {
		first.Stop()
	}
	var calm <-chan time.Time
	var events describe.Events
	enough := false
	for {
		select {
		case <-ctx.Done():
			return
		case <-first.C:
			if !enough {
				return
			}
		case <-calm:
			return
		case m := <-ch:
			if t.JSON {
				fmt.Fprintf(t.Stdout, "%s\n", m.Data)
			} else {
				fmt.Fprintln(t.Stdout, events.Event(m.Subject, m.Data))
			}
			enough = enough || done(m)
			if enough {
				calm = time.After(quiet)
			}
		}
	}
}

// Tail follows the light's events (every light's for --light '*'), first
// from the journal with since or fromSeq.
func (t *Term) Tail(ctx context.Context, since time.Duration, fromSeq uint64) error {
	if since != 0 && fromSeq != 0 {
		return Usage(errors.New("give --since or --from-seq, not both"))
	}
	if since != 0 || fromSeq != 0 {
		return t.tailHistory(ctx, since, fromSeq)
	}
	var nc *nats.Conn
	var ch chan *nats.Msg
	var err error
	filter := subject.AllEvents
	if t.Light == "*" {
		nc, ch, err = t.watchAll(ctx)
	} else {
		nc, ch, err = t.watchLight(ctx)
		filter = subject.Events(t.Light)
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	fmt.Fprintln(t.Stderr, describe.Following(filter, t.where()))
	t.printEvents(ctx, ch, 0, 0, func(*nats.Msg) bool { return false })
	return nil
}
