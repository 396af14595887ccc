package journal

import (
	"context"
	"fmt"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// replayBatch is how many messages an ordered consumer asks for at once:
// larger batches amortize the pull round trip on the replay hot path.
// replayBatchBytes caps the memory a batch of large events can take; it is
// raised to twice the server's max payload so one event always fits.
const (
	replayBatch      = 5000
	replayBatchBytes = 4 << 20
)

// Replay calls fn with every event of the range [from, to] whose subject
// matches filter (wildcards allowed; empty matches every subject), in
// stream order, and returns once the range is delivered. from 0 means the
// first event; to 0 means the stream's last sequence when Replay is called,
// so events appended meanwhile are not waited for. An empty range returns
// at once. The first error from fn stops the replay and is returned as is.
//
// It reads through an ephemeral ordered consumer, which streams batches
// without acknowledgements and is deleted on return.
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

	cons, err := j.ordered(ctx, str, filter, from)
	if err != nil {
		return fmt.Errorf("journal: replay %q: %w", filter, err)
	}
	defer j.deleteOrdered(cons)
	// NumPending counts the matching events from `from` on when the
	// consumer was created: zero means there is nothing to wait for.
	if info := cons.CachedInfo(); info == nil || info.NumPending == 0 {
		return nil
	}

	maxBytes := max(replayBatchBytes, 2*int(j.js.Conn().MaxPayload()))
	iter, err := cons.Messages(jetstream.PullMaxMessagesWithBytesLimit(replayBatch, maxBytes))
	if err != nil {
		return fmt.Errorf("journal: replay %q: %w", filter, err)
	}
	defer iter.Stop()
	for {
		m, err := iter.Next(jetstream.NextContext(ctx))
		if err != nil {
			return fmt.Errorf("journal: replay %q: %w", filter, err)
		}
		md, err := m.Metadata()
		if err != nil {
			return fmt.Errorf("journal: replay %q: %w", filter, err)
		}
		if md.Sequence.Stream > to {
			return nil
		}
		if msg, ok := j.own(fromJS(m, md)); ok && keep(msg) {
			if err := fn(msg); err != nil {
				return err
			}
		}
		// NumPending is what still matches after this message: done when
		// the range or the matching events are exhausted.
		if md.Sequence.Stream >= to || md.NumPending == 0 {
			return nil
		}
	}
}

// Follow calls fn with every event whose subject matches filter, from
// stream sequence from (0: the first) on, in stream order, then with each
// event appended after, until ctx ends (it then returns ctx's error) or
// fn returns an error (returned as is). caughtUp, when set, is called
// once, as soon as every matching event stored when Follow began has
// been given to fn (at once when there is none): what comes after is
// live. A follower that loses its consumer gets an error; start over.
func (j *Journal) Follow(ctx context.Context, filter string, from uint64, fn func(Msg) error, caughtUp func()) error {
	str, err := j.streamHandle(ctx)
	if err != nil {
		return err
	}
	// Through a copy, from is an origin's sequence: read the whole copy.
	origin := from
	if j.origin != nil {
		from = 0
	}
	cons, err := j.ordered(ctx, str, filter, max(from, 1))
	if err != nil {
		return fmt.Errorf("journal: follow %q: %w", filter, err)
	}
	defer j.deleteOrdered(cons)
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

// ordered creates the ordered consumer of Replay and Follow: the events
// matching filter (every subject when empty) from sequence from on.
func (j *Journal) ordered(ctx context.Context, str jetstream.Stream, filter string, from uint64) (jetstream.Consumer, error) {
	cfg := jetstream.OrderedConsumerConfig{
		DeliverPolicy: jetstream.DeliverByStartSequencePolicy,
		OptStartSeq:   from,
		// A safety net for a consumer that outlives a crashed reader.
		InactiveThreshold: 30 * time.Second,
	}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := str.OrderedConsumer(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("create consumer: %w", err)
	}
	return cons, nil
}

// deleteOrdered removes a replay's consumer now rather than letting it
// idle on the server until its inactive threshold.
func (j *Journal) deleteOrdered(cons jetstream.Consumer) {
	info := cons.CachedInfo()
	if info == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	// Best effort: the inactive threshold removes it otherwise.
	_ = j.js.DeleteConsumer(ctx, j.stream, info.Name)
}

// SeqAt is the sequence of the first event matching filter stored at or
// after t, or the next sequence when none is: where to Follow or Replay
// from to start at t. Through a copy (WithOrigin) it is 0, the start:
// the copy's order is not its origins'.
func (j *Journal) SeqAt(ctx context.Context, filter string, t time.Time) (uint64, error) {
	if j.origin != nil {
		return 0, nil
	}
	str, err := j.streamHandle(ctx)
	if err != nil {
		return 0, err
	}
	cfg := jetstream.OrderedConsumerConfig{DeliverPolicy: jetstream.DeliverByStartTimePolicy, OptStartTime: &t,
		InactiveThreshold: 30 * time.Second}
	if filter != "" {
		cfg.FilterSubjects = []string{filter}
	}
	cons, err := str.OrderedConsumer(ctx, cfg)
	if err != nil {
		return 0, fmt.Errorf("journal: events since %s: %w", t.Format(time.RFC3339), err)
	}
	defer j.deleteOrdered(cons)
	if info := cons.CachedInfo(); info == nil || info.NumPending == 0 {
		last, err := j.LastSeq(ctx)
		return last + 1, err
	}
	m, err := cons.Next(jetstream.FetchMaxWait(5 * time.Second))
	if err != nil {
		return 0, fmt.Errorf("journal: events since %s: %w", t.Format(time.RFC3339), err)
	}
	md, err := m.Metadata()
	if err != nil {
		return 0, err
	}
	return md.Sequence.Stream, nil
}
