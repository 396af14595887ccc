package journal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

// Replay calls fn with every event of the range [from, to] whose subject
// matches filter (wildcards allowed; empty matches every subject), in
// stream order, and returns once the range is delivered. from 0 means the
// first event; to 0 means the stream's last sequence when Replay is called,
// so events appended meanwhile are not waited for. An empty range returns
// at once. The first error from fn stops the replay and is returned as is.
//
// It reads the fastest way the connection's account allows (read).
func (j *Journal) Replay(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) error {
	str, err := j.streamHandle(ctx)
	if err != nil {
		return err
	}
	// Read through a copy, the range is the origin's sequences: read from
	// where they may begin (copied.go) and keep the range's events.
	keep := func(Msg) bool { return true }
	if j.origin != nil {
		lo, hi := from, to
		keep = func(m Msg) bool { return m.Seq >= lo && (hi == 0 || m.Seq <= hi) }
		if from, err = j.copyStart(ctx, filter, lo); err != nil {
			return fmt.Errorf("journal: replay %q: %w", filter, err)
		}
		to = 0
	}
	if from, to, err = j.bounds(ctx, from, to); err != nil {
		return fmt.Errorf("journal: replay %q: %w", filter, err)
	}
	if to < from {
		return nil
	}
	// A filter that takes every subject of the stream (one light's on a
	// Pi of one light) is no filter: the stream reads faster without one.
	if covers(filter, str.CachedInfo().Config.Subjects) {
		filter = ""
	}
	var fnErr error
	err = j.read(ctx, filter, from, to, func(m Msg) error {
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

// bounds resolves a range: from 0 is the first event, to 0 the stream's
// last sequence now.
func (j *Journal) bounds(ctx context.Context, from, to uint64) (uint64, uint64, error) {
	if to == 0 {
		info, err := j.info(ctx)
		if err != nil {
			return 0, 0, err
		}
		to = info.State.LastSeq
	}
	return max(from, 1), to, nil
}

// read gives fn the events of [from, to] (to > 0) matching filter, the
// fastest way the connection's account allows: an ordered consumer (the
// daemon's), else the history service (a client's, history.go), else
// batched direct gets (a client where no one serves history).
func (j *Journal) read(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) error {
	if !j.noConsumers.Load() {
		err := j.replayOrdered(ctx, filter, from, to, fn)
		if !errors.Is(err, errNoConsumers) {
			return err
		}
		j.noConsumers.Store(true)
	}
	if !j.noHistory.Load() {
		err := j.replayHistory(ctx, filter, from, to, fn)
		if !errors.Is(err, errNoHistory) {
			return err
		}
		j.noHistory.Store(true)
	}
	g := newGetter(j.js, j.stream, int(min(getBatch, to-from+1)))
	defer g.close()
	_, _, err := g.read(ctx, filter, from, to, fn)
	return err
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
	if !j.noConsumers.Load() {
		// The daemon's account: an ordered consumer pushes each event
		// as it is stored.
		err := j.followOrdered(ctx, filter, from, fn, caughtUp)
		if !errors.Is(err, errNoConsumers) {
			return err
		}
		j.noConsumers.Store(true)
	}
	if _, err := j.streamHandle(ctx); err != nil {
		return err
	}
	// Through a copy, from is an origin's sequence (copied.go).
	origin := from
	from, err := j.copyStart(ctx, filter, origin)
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
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

// covers reports whether filter matches every subject of subjects (each
// may have wildcards).
func covers(filter string, subjects []string) bool {
	if filter == "" || len(subjects) == 0 {
		return false
	}
	for _, s := range subjects {
		if !subsetOf(s, filter) {
			return false
		}
	}
	return true
}

// subsetOf reports whether every subject sub matches also matches
// filter.
func subsetOf(sub, filter string) bool {
	st, ft := strings.Split(sub, "."), strings.Split(filter, ".")
	for i, f := range ft {
		if f == ">" {
			return i < len(st)
		}
		if i >= len(st) {
			return false
		}
		switch {
		case f == "*" && st[i] != ">":
		case f == st[i]:
		default:
			return false
		}
	}
	return len(st) == len(ft)
}

// followOrdered is Follow through an ordered consumer, deleted on return;
// errNoConsumers where the connection's account may create none.
func (j *Journal) followOrdered(ctx context.Context, filter string, from uint64, fn func(Msg) error, caughtUp func()) error {
	// Through a copy, from is an origin's sequence (copied.go).
	origin := from
	from, err := j.copyStart(ctx, filter, origin)
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
	}
	cons, done, err := j.ordered(ctx, filter, from)
	if errors.Is(err, errNoConsumers) {
		return err
	}
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
	}
	defer done()
	behind := true
	if info := cons.CachedInfo(); info != nil && info.NumPending == 0 {
		behind = false
		if caughtUp != nil {
			caughtUp()
		}
	}
	iter, err := cons.Messages()
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
	}
	defer iter.Stop()
	for {
		m, err := iter.Next(jetstream.NextContext(ctx))
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("journal: follow %q: %w", filter, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("journal: follow %q: %w", filter, err)
		}
		if msg, ok := j.own(fromJS(m, md)); ok && msg.Seq >= origin {
			if err := fn(msg); err != nil {
				return err
			}
		}
		if behind && md.NumPending == 0 {
			behind = false
			if caughtUp != nil {
				caughtUp()
			}
		}
	}
}
