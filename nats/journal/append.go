package journal

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// AppendOption sets a header that asks the stream for deduplication or a
// concurrency check, or carries application metadata.
type AppendOption func(*nats.Msg)

// MsgID makes the append idempotent within the stream's duplicate window:
// appending the same id again stores nothing and returns the sequence of
// the original event.
func MsgID(id string) AppendOption {
	return func(m *nats.Msg) { m.Header.Set(jetstream.MsgIDHeader, id) }
}

// ExpectLastSeq makes the append fail with ErrConflict unless the stream's
// last sequence is seq (0: the stream is empty).
func ExpectLastSeq(seq uint64) AppendOption {
	return func(m *nats.Msg) {
		m.Header.Set(jetstream.ExpectedLastSeqHeader, strconv.FormatUint(seq, 10))
	}
}

// ExpectLastSubjectSeq makes the append fail with ErrConflict unless the
// last event on the appended subject has sequence seq (0: there is none).
func ExpectLastSubjectSeq(seq uint64) AppendOption {
	return func(m *nats.Msg) {
		m.Header.Set(jetstream.ExpectedLastSubjSeqHeader, strconv.FormatUint(seq, 10))
	}
}

// Header adds an application header to the event.
func Header(key, value string) AppendOption {
	return func(m *nats.Msg) { m.Header.Add(key, value) }
}

// newMsg builds the message. Headers are set directly rather than through
// jetstream.PublishOpt so a plain append allocates no header map.
func newMsg(subj string, data []byte, opts []AppendOption) *nats.Msg {
	m := &nats.Msg{Subject: subj, Data: data}
	if len(opts) > 0 {
		m.Header = make(nats.Header, len(opts))
		for _, o := range opts {
			o(m)
		}
	}
	return m
}

// Append stores data on subj and returns its stream sequence once the
// stream has acknowledged it (on disk when the broker runs with sync
// always). With MsgID, a duplicate returns the original sequence and no
// error; a failed ExpectLastSeq or ExpectLastSubjectSeq returns ErrConflict,
// a full stream ErrFull. The stream checks expectations before duplicates,
// so a retry that still carries an expectation the original satisfied
// gets ErrConflict: retry with MsgID alone to learn the original sequence.
// With WithWriteFailed, an append with MsgID and no expectation that
// meets a write error returns ErrDiskFull within about a second.
func (j *Journal) Append(ctx context.Context, subj string, data []byte, opts ...AppendOption) (uint64, error) {
	m := newMsg(subj, data, opts)
	if j.failed == nil || !recheckable(m) {
		ack, err := j.js.PublishMsg(ctx, m)
		if err != nil {
			return 0, appendErr(subj, err)
		}
		// A duplicate's ack (ack.Duplicate) carries the original sequence.
		return ack.Sequence, nil
	}
	failed := j.failed()
	select {
	case <-failed:
		// Known already: the stream answers duplicates only.
		return j.recheck(ctx, m)
	default:
	}
	pctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	go func() {
		select {
		case <-failed:
			cancel(errWriteFailed)
		case <-pctx.Done():
		}
	}()
	ack, err := j.js.PublishMsg(pctx, m)
	switch {
	case err == nil:
		return ack.Sequence, nil
	case errors.Is(context.Cause(pctx), errWriteFailed) && ctx.Err() == nil:
		return j.recheck(ctx, m)
	}
	return 0, appendErr(subj, err)
}

// errWriteFailed stops waiting for an append's acknowledgement.
var errWriteFailed = errors.New("journal: the stream met a write error")

// recheckWait bounds recheck's publish: the duplicate of a stored event
// is acknowledged at once, an event the stream cannot store never is.
const recheckWait = time.Second

// recheck tells whether m, whose acknowledgement a write error left
// unanswered, was stored: nats-server answers nothing it could not store,
// and it keeps answering duplicates, so m is published again. The
// original sequence, or ErrDiskFull.
func (j *Journal) recheck(ctx context.Context, m *nats.Msg) (uint64, error) {
	rctx, cancel := context.WithTimeout(ctx, recheckWait)
	defer cancel()
	ack, err := j.js.PublishMsg(rctx, m)
	switch {
	case err == nil:
		return ack.Sequence, nil
	case ctx.Err() != nil:
		return 0, appendErr(m.Subject, err)
	}
	if room := j.Room(); room != nil {
		return 0, room
	}
	return 0, noRoom{errors.New("the journal could not write to its disk (is it full?); nothing was changed: try again in a moment")}
}

// recheckable reports whether m can be published again to learn whether
// it was stored: it has an id, and no expectation (which the stream checks
// before duplicates).
func recheckable(m *nats.Msg) bool {
	if m.Header.Get(jetstream.MsgIDHeader) == "" {
		return false
	}
	for _, h := range []string{jetstream.ExpectedLastSeqHeader, jetstream.ExpectedLastSubjSeqHeader,
		jetstream.ExpectedLastMsgIDHeader, jetstream.ExpectedStreamHeader} {
		if m.Header.Get(h) != "" {
			return false
		}
	}
	return true
}

// asyncStallWait is how long AppendAsync blocks for a free slot when too
// many appends await their acknowledgement: back-pressure, not an error.
const asyncStallWait = 5 * time.Second

// AppendAsync sends data on subj without waiting for the acknowledgement;
// Pending.Wait returns the outcome Append would have returned. Use it to
// append many events fast; AsyncComplete tells when all are acknowledged.
func (j *Journal) AppendAsync(subj string, data []byte, opts ...AppendOption) (*Pending, error) {
	m := newMsg(subj, data, opts)
	paf, err := j.js.PublishMsgAsync(m, jetstream.WithStallWait(asyncStallWait))
	if err != nil {
		return nil, appendErr(subj, err)
	}
	p := &Pending{subject: subj, paf: paf}
	if j.failed != nil && recheckable(m) {
		p.j, p.msg, p.failed = j, m, j.failed()
	}
	return p, nil
}

// AsyncComplete returns a channel closed once every AppendAsync made on the
// underlying JetStream context has been acknowledged or has failed.
func (j *Journal) AsyncComplete() <-chan struct{} {
	return j.js.PublishAsyncComplete()
}

// Pending is the outcome of an AppendAsync.
type Pending struct {
	subject string
	paf     jetstream.PubAckFuture
	// With WithWriteFailed: the journal, the message and the channel
	// that tells a write error (Wait then rechecks); failed is nil
	// otherwise.
	j      *Journal
	msg    *nats.Msg
	failed <-chan struct{}

	mu   sync.Mutex
	done bool
	seq  uint64
	err  error
}

// Wait blocks until the append is acknowledged or fails, or ctx ends, and
// returns its sequence or error as Append does. It may be called again.
func (p *Pending) Wait(ctx context.Context) (uint64, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return p.seq, p.err
	}
	select {
	case ack := <-p.paf.Ok():
		p.seq = ack.Sequence
	case err := <-p.paf.Err():
		p.err = appendErr(p.subject, err)
	case <-p.failed:
		p.seq, p.err = p.j.recheck(ctx, p.msg)
		if ctx.Err() != nil {
			return 0, fmt.Errorf("journal: wait for append to %s: %w", p.subject, ctx.Err())
		}
	case <-ctx.Done():
		return 0, fmt.Errorf("journal: wait for append to %s: %w", p.subject, ctx.Err())
	}
	p.done = true
	return p.seq, p.err
}

// appendErr wraps a publish error, classifying the server's answer.
func appendErr(subj string, err error) error {
	var apiErr *jetstream.APIError
	if errors.As(err, &apiErr) {
		switch apiErr.ErrorCode {
		case jetstream.JSErrCodeStreamWrongLastSequence,
			jetstream.JSErrCodeStreamWrongLastSequenceConstant,
			errCodeWrongLastMsgID:
			return fmt.Errorf("%w: append to %s: %w", ErrConflict, subj, err)
		case errCodeInsufficientResources, errCodeStorageExceeded, errCodeAccountResourcesExceeded:
			return fmt.Errorf("%w: append to %s: %w", ErrFull, subj, err)
		case errCodeStoreFailed:
			// "maximum bytes exceeded", "maximum messages exceeded": the
			// DiscardNew budget is spent.
			if strings.Contains(apiErr.Description, "maximum") {
				return fmt.Errorf("%w: append to %s: purge what snapshots cover or raise the budget: %w", ErrFull, subj, err)
			}
		}
	}
	return fmt.Errorf("journal: append to %s: %w", subj, err)
}

// Server error codes nats.go has no constant for.
const (
	errCodeWrongLastMsgID        jetstream.ErrorCode = 10070
	errCodeInsufficientResources jetstream.ErrorCode = 10023
	errCodeStorageExceeded       jetstream.ErrorCode = 10047
	errCodeStoreFailed           jetstream.ErrorCode = 10077
	// The store's limit (the journal budget) is spent by every stream
	// together.
	errCodeAccountResourcesExceeded jetstream.ErrorCode = 10002
)
