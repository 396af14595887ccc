package journal

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/subject"
)

// Replay calls fn with every event of the range [from, to] whose subject
// matches filter (wildcards allowed; empty matches every subject), in
// stream order, and returns once the range is delivered. from 0 means the
// first event; to 0 means the stream's last sequence when Replay is called,
// so events appended meanwhile are not waited for. An empty range returns
// at once. The first error from fn stops the replay and is returned as is.
//
// It reads by batched direct gets (directget.go), so a client that may
// create no consumer replays too.
func (j *Journal) Replay(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) error {
	str, err := j.streamHandle(ctx)
	if err != nil {
		return err
	}
	// Read through a copy, the range is the origin's sequences: read the
	// whole copy and keep the range's events.
	keep := func(Msg) bool { return true }
	if j.origin != nil {
		lo, hi := from, to
		keep = func(m Msg) bool { return m.Seq >= lo && (hi == 0 || m.Seq <= hi) }
		from, to = 0, 0
	}
	if from == 0 {
		from = 1
	}
	if to == 0 {
		info, err := str.Info(ctx)
		if err != nil {
			return fmt.Errorf("journal: replay %q: stream info: %w", filter, err)
		}
		to = info.State.LastSeq
	}
	if to < from {
		return nil
	}
	g := newGetter(j.js, j.stream, int(min(getBatch, to-from+1)))
	defer g.close()
	var fnErr error
	_, _, err = g.read(ctx, filter, from, to, func(m Msg) error {
		if msg, ok := j.own(m); ok && keep(msg) {
			fnErr = fn(msg)
		}
		return fnErr
	})
	switch {
	case fnErr != nil:
		return fnErr
	case err != nil:
		return fmt.Errorf("journal: replay %q: %w", filter, err)
	}
	return nil
}

// How Follow learns of new events: a message on the filter's subjects
// wakes it; since that can come before the stream has stored the event
// (or, through a copy, long before), a wake-up that finds nothing reads
// again after followRetry, doubling up to followPoll. Without wake-ups
// (a subject this client may not subscribe) it reads every followPoll.
const (
	followPoll  = time.Second
	followRetry = 10 * time.Millisecond
)

// Follow calls fn with every event whose subject matches filter, from
// stream sequence from (0: the first) on, in stream order, then with each
// event appended after, until ctx ends (it then returns ctx's error) or
// fn returns an error (returned as is). caughtUp, when set, is called
// once, as soon as every matching event stored when Follow began has
// been given to fn (at once when there is none): what comes after is
// live.
//
// It reads by batched direct gets from the sequence after the last event
// read, whenever a core NATS message on filter's subjects says there may
// be more, and every followPoll: nothing is missed or given twice. A read
// that fails (the server silent for longer than getWait) ends it with an
// error; start over after the last event seen.
func (j *Journal) Follow(ctx context.Context, filter string, from uint64, fn func(Msg) error, caughtUp func()) error {
	if _, err := j.streamHandle(ctx); err != nil {
		return err
	}
	// Through a copy, from is an origin's sequence: read the whole copy.
	origin := from
	if j.origin != nil {
		from = 0
	}
	g := newGetter(j.js, j.stream, getBatch)
	defer g.close()
	// Subscribed before the first read, so a wake-up for anything that
	// read misses comes after it.
	wake := make(chan struct{}, 1)
	wakeOn := filter
	if wakeOn == "" {
		wakeOn = subject.AllEvents
	}
	sub, err := j.js.Conn().Subscribe(wakeOn, func(*nats.Msg) {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
	}
	defer func() { _ = sub.Unsubscribe() }()

	timer := time.NewTimer(followPoll)
	defer timer.Stop()
	var (
		fnErr error
		told  bool
		woke  bool
		retry time.Duration
		next  = max(from, 1)
	)
	for {
		start := next
		n, done, err := g.read(ctx, filter, next, 0, func(m Msg) error {
			if msg, ok := j.own(m); ok && msg.Seq >= origin {
				fnErr = fn(msg)
			}
			return fnErr
		})
		next = n
		switch {
		case fnErr != nil:
			return fnErr
		case ctx.Err() != nil:
			return ctx.Err()
		case err != nil:
			return fmt.Errorf("journal: follow %q: %w", filter, err)
		case !done:
			continue
		}
		if !told {
			told = true
			if caughtUp != nil {
				caughtUp()
			}
		}
		wait := followPoll
		if woke && next == start {
			retry = min(max(2*retry, followRetry), followPoll)
			wait = retry
		} else {
			retry = 0
		}
		timer.Reset(wait)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-wake:
			woke = true
		case <-timer.C:
			// A retry after a wake-up goes on retrying until it finds
			// the event; a plain poll does not.
			woke = woke && retry > 0
		}
		timer.Stop()
	}
}

// SeqAt is the sequence of the first event matching filter stored at or
// after t, or the next sequence when none is: where to Follow or Replay
// from to start at t. Through a copy (WithOrigin) it is 0, the start:
// the copy's order is not its origins'.
func (j *Journal) SeqAt(ctx context.Context, filter string, t time.Time) (uint64, error) {
	if j.origin != nil {
		return 0, nil
	}
	if _, err := j.streamHandle(ctx); err != nil {
		return 0, err
	}
	g := newGetter(j.js, j.stream, 1)
	defer g.close()
	var seq uint64
	e, err := g.get(ctx, getRequest{StartTime: &t, NextFor: filter, Batch: 1, MaxBytes: g.maxBytes}, func(m Msg) error {
		seq = m.Seq
		return nil
	})
	switch {
	case err != nil:
		return 0, fmt.Errorf("journal: events since %s: %w", t.Format(time.RFC3339), err)
	case e.none:
		last, err := j.LastSeq(ctx)
		return last + 1, err
	}
	return seq, nil
}
