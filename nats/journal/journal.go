// Package journal is Lumen's event journal over NATS JetStream: append with
// deduplication and optimistic concurrency, replay a range in order,
// follow a history live, consume durably one event at a time, bound
// retention, and keep one snapshot per light.
//
// Reading (Replay, Follow, SeqAt, LastMsg, Lights, Size, FirstSeq,
// LastSeq) creates no consumer: it needs only the stream's STREAM.INFO
// and DIRECT.GET, which a client in another account imports.
//
// Every method takes a context and returns errors prefixed "journal:";
// ErrConflict, ErrNotFound, ErrFull and ErrClosed can be tested with
// errors.Is.
package journal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/subject"
)

var (
	// ErrConflict means an append's expected last sequence did not match:
	// someone else appended first. Re-read and retry.
	ErrConflict = errors.New("journal: conflict")
	// ErrNotFound means there is no such message, snapshot or consumer.
	ErrNotFound = errors.New("journal: not found")
	// ErrFull means the stream reached its size budget and refuses new
	// events until snapshots let older ones be purged.
	ErrFull = errors.New("journal: full")
	// ErrClosed means the consumer was stopped or its connection closed.
	ErrClosed = errors.New("journal: closed")
	// ErrDiskFull means the file system under the journal has no room
	// for new inputs (Room); the error's text says what to do.
	ErrDiskFull = errors.New("journal: disk full")
)

// Msg is one journaled event.
type Msg struct {
	// Seq is the stream sequence: the event's identity and order.
	Seq uint64
	// Subject is the event's subject (see package subject).
	Subject string
	// Data is the event body.
	Data []byte
	// Time is when the stream stored the event.
	Time time.Time
	// Header holds the message headers, nil when there are none.
	Header nats.Header
	// NumDelivered counts deliveries to a durable consumer (1 the first
	// time); 0 for messages read otherwise.
	NumDelivered uint64
}

// Journal reads and writes the LUMEN stream and the LUMEN_SNAP bucket. It
// is safe for concurrent use.
type Journal struct {
	js     jetstream.JetStream
	stream string
	bucket string
	origin func(subject string, h nats.Header) (seq uint64, ok bool)
	room   func() error           // WithRoom; nil: always room
	failed func() <-chan struct{} // WithWriteFailed; nil: not watched

	mu  sync.Mutex
	str jetstream.Stream   // cached handle, bound on first use
	kv  jetstream.KeyValue // cached handle, bound on first use
}

// Option configures a Journal.
type Option func(*Journal)

// WithStream selects the stream (default subject.Stream).
func WithStream(name string) Option {
	return func(j *Journal) { j.stream = name }
}

// WithOrigin reads a stream that copies other streams (a house's): each
// event read has the sequence it has in the stream it was copied from,
// which origin tells from its subject and headers, and an event origin
// refuses (not from the stream that owns its subject) is skipped.
// Replay's range and Follow's start are then origin sequences too.
func WithOrigin(origin func(subject string, h nats.Header) (seq uint64, ok bool)) Option {
	return func(j *Journal) { j.origin = origin }
}

// Copied reports whether the journal reads a copy (WithOrigin): Replay's
// and Follow's sequences are then the origins', which LastSeq (the
// copy's own) does not count.
func (j *Journal) Copied() bool { return j.origin != nil }

// own returns m as read, with its origin's sequence, or false when the
// event is to be skipped.
func (j *Journal) own(m Msg) (Msg, bool) {
	if j.origin == nil {
		return m, true
	}
	seq, ok := j.origin(m.Subject, m.Header)
	m.Seq = seq
	return m, ok
}

// WithRoom makes Room ask room whether new inputs may be journaled
// (broker.Broker.Room: the disk's free space). Without it there is
// always room.
func WithRoom(room func() error) Option {
	return func(j *Journal) { j.room = room }
}

// WithWriteFailed makes an append with MsgID and no expectation
// stop waiting when the channel failed returns is closed
// (broker.Broker.WriteFailed: JetStream met a write error, and answers no
// publish it could not store). The append is then published again, whose
// duplicate the stream acknowledges if the first was stored; if it is not
// answered within a second, the append fails with ErrDiskFull. Without
// it, such an append waits for its context.
func WithWriteFailed(failed func() <-chan struct{}) Option {
	return func(j *Journal) { j.failed = failed }
}

// Room reports whether there is room for a new input: nil, or an error
// that is ErrDiskFull and whose text says why and what to do. Whoever
// journals an input nobody has accepted yet asks first, and refuses it
// (a command with 507) or drops it; the outputs of accepted inputs,
// snapshots and compaction take the room kept for them.
func (j *Journal) Room() error {
	if j.room == nil {
		return nil
	}
	if err := j.room(); err != nil {
		return noRoom{err}
	}
	return nil
}

// noRoom is ErrDiskFull with the room's sentence as its text.
type noRoom struct{ err error }

func (e noRoom) Error() string   { return e.err.Error() }
func (e noRoom) Unwrap() []error { return []error{ErrDiskFull, e.err} }

// WithSnapshotBucket selects the snapshot bucket (default
// subject.SnapshotBucket).
func WithSnapshotBucket(name string) Option {
	return func(j *Journal) { j.bucket = name }
}

// New returns a Journal over js. The stream and bucket must exist (see
// broker.EnsureStreams); they are looked up on first use.
func New(js jetstream.JetStream, opts ...Option) *Journal {
	j := &Journal{js: js, stream: subject.Stream, bucket: subject.SnapshotBucket}
	for _, o := range opts {
		o(j)
	}
	return j
}

// streamHandle returns the cached stream handle, binding it on first use.
func (j *Journal) streamHandle(ctx context.Context) (jetstream.Stream, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.str != nil {
		return j.str, nil
	}
	str, err := j.js.Stream(ctx, j.stream)
	if err != nil {
		switch {
		case errors.Is(err, jetstream.ErrStreamNotFound):
			return nil, fmt.Errorf("%w: stream %s does not exist: start the daemon or run broker.EnsureStreams: %w", ErrNotFound, j.stream, err)
		case errors.Is(err, nats.ErrNoResponders):
			// A client whose account imports no STREAM.INFO of it.
			return nil, fmt.Errorf("%w: stream %s is not reachable from this connection's account: %w", ErrNotFound, j.stream, err)
		}
		return nil, fmt.Errorf("journal: stream %s: %w", j.stream, err)
	}
	j.str = str
	return str, nil
}

// info returns fresh stream information.
func (j *Journal) info(ctx context.Context) (*jetstream.StreamInfo, error) {
	str, err := j.streamHandle(ctx)
	if err != nil {
		return nil, err
	}
	info, err := str.Info(ctx)
	if err != nil {
		return nil, fmt.Errorf("journal: stream %s info: %w", j.stream, err)
	}
	return info, nil
}

// LastSeq is the stream's last sequence, 0 when nothing was ever appended.
func (j *Journal) LastSeq(ctx context.Context) (uint64, error) {
	info, err := j.info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.LastSeq, nil
}

// FirstSeq is the stream's first sequence: retention purged everything
// before it.
func (j *Journal) FirstSeq(ctx context.Context) (uint64, error) {
	info, err := j.info(ctx)
	if err != nil {
		return 0, err
	}
	return info.State.FirstSeq, nil
}

// Lights are the names of the lights with events in the journal, sorted.
func (j *Journal) Lights(ctx context.Context) ([]string, error) {
	str, err := j.streamHandle(ctx)
	if err != nil {
		return nil, err
	}
	info, err := str.Info(ctx, jetstream.WithSubjectFilter(subject.AllEvents))
	if err != nil {
		return nil, fmt.Errorf("journal: lights: %w", err)
	}
	var out []string
	for subj := range info.State.Subjects {
		if light, _, _, ok := subject.Parse(subj); ok && !slices.Contains(out, light) {
			out = append(out, light)
		}
	}
	slices.Sort(out)
	return out, nil
}

// Size is the stream's current size in bytes and messages.
func (j *Journal) Size(ctx context.Context) (bytes, msgs uint64, err error) {
	info, err := j.info(ctx)
	if err != nil {
		return 0, 0, err
	}
	return info.State.Bytes, info.State.Msgs, nil
}

// Purge removes the messages matching filter (every subject when empty)
// whose sequence is below keepFrom. The daemon calls it with the lowest
// sequence its snapshots cover, so retention never drops uncovered events.
// keepFrom <= 1 purges nothing.
func (j *Journal) Purge(ctx context.Context, filter string, keepFrom uint64) error {
	if keepFrom <= 1 {
		return nil
	}
	str, err := j.streamHandle(ctx)
	if err != nil {
		return err
	}
	opts := []jetstream.StreamPurgeOpt{jetstream.WithPurgeSequence(keepFrom)}
	if filter != "" {
		opts = append(opts, jetstream.WithPurgeSubject(filter))
	}
	if err := str.Purge(ctx, opts...); err != nil {
		return fmt.Errorf("journal: purge %q below %d: %w", filter, keepFrom, err)
	}
	return nil
}

// LastMsg is the last message on subj, which may contain wildcards
// (lumen.kitchen.evt.out.>: the light's latest output). It returns
// ErrNotFound when no message matches.
func (j *Journal) LastMsg(ctx context.Context, subj string) (Msg, error) {
	// A direct get: the server resolves wildcards in the subject itself.
	str, err := j.streamHandle(ctx)
	if err != nil {
		return Msg{}, err
	}
	raw, err := str.GetLastMsgForSubject(ctx, subj)
	if err != nil {
		if isMsgNotFound(err) {
			return Msg{}, fmt.Errorf("%w: no message on %s: %w", ErrNotFound, subj, err)
		}
		return Msg{}, fmt.Errorf("journal: last message on %s: %w", subj, err)
	}
	m, ok := j.own(Msg{Seq: raw.Sequence, Subject: raw.Subject, Data: raw.Data, Time: raw.Time, Header: ownHeader(raw.Header)})
	if !ok {
		return Msg{}, fmt.Errorf("%w: the last message on %s is not from the light's own journal", ErrNotFound, subj)
	}
	return m, nil
}

// isMsgNotFound matches both forms of "no such message": the client's
// sentinel and the server's API error.
func isMsgNotFound(err error) bool {
	var apiErr *jetstream.APIError
	return errors.Is(err, jetstream.ErrMsgNotFound) ||
		errors.As(err, &apiErr) && apiErr.ErrorCode == jetstream.JSErrCodeMessageNotFound
}

// SaveSnapshot stores data as the latest snapshot of light, replacing the
// previous one.
func (j *Journal) SaveSnapshot(ctx context.Context, light string, data []byte) error {
	if err := subject.ValidLight(light); err != nil {
		return fmt.Errorf("journal: save snapshot: %w", err)
	}
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, light, data); err != nil {
		return fmt.Errorf("journal: save snapshot of %s: %w", light, err)
	}
	return nil
}

// LoadSnapshot returns the latest snapshot of light, or ErrNotFound when
// it has none.
func (j *Journal) LoadSnapshot(ctx context.Context, light string) ([]byte, error) {
	if err := subject.ValidLight(light); err != nil {
		return nil, fmt.Errorf("journal: load snapshot: %w", err)
	}
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, light)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return nil, fmt.Errorf("%w: no snapshot of %s", ErrNotFound, light)
		}
		return nil, fmt.Errorf("journal: load snapshot of %s: %w", light, err)
	}
	return e.Value(), nil
}

// SnapshotTime is when the latest snapshot of light was saved, or
// ErrNotFound when it has none.
func (j *Journal) SnapshotTime(ctx context.Context, light string) (time.Time, error) {
	if err := subject.ValidLight(light); err != nil {
		return time.Time{}, fmt.Errorf("journal: snapshot time: %w", err)
	}
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return time.Time{}, err
	}
	e, err := kv.Get(ctx, light)
	if err != nil {
		if errors.Is(err, jetstream.ErrKeyNotFound) {
			return time.Time{}, fmt.Errorf("%w: no snapshot of %s", ErrNotFound, light)
		}
		return time.Time{}, fmt.Errorf("journal: snapshot time of %s: %w", light, err)
	}
	return e.Created(), nil
}

// SaveRecord stores data under key in the snapshot bucket, for state that
// is not a light's own snapshot (an agent session: agent.<light>.<session>).
// Keys are dot-separated tokens of letters, digits, '-' and '_'.
func (j *Journal) SaveRecord(ctx context.Context, key string, data []byte) error {
	if !strings.Contains(key, ".") {
		return fmt.Errorf("journal: record key %q must have a dot: a bare name is a light's snapshot", key)
	}
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return err
	}
	if _, err := kv.Put(ctx, key, data); err != nil {
		return fmt.Errorf("journal: save record %s: %w", key, err)
	}
	return nil
}

// RecordKeys returns the keys of the records whose key starts with
// prefix (which ends with a dot).
func (j *Journal) RecordKeys(ctx context.Context, prefix string) ([]string, error) {
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return nil, err
	}
	lister, err := kv.ListKeysFiltered(ctx, prefix+">")
	if err != nil {
		return nil, fmt.Errorf("journal: list records %s: %w", prefix, err)
	}
	var keys []string
	for key := range lister.Keys() {
		keys = append(keys, key)
	}
	return keys, nil
}

// Record returns the record under key, or ErrNotFound.
func (j *Journal) Record(ctx context.Context, key string) ([]byte, error) {
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return nil, err
	}
	e, err := kv.Get(ctx, key)
	if errors.Is(err, jetstream.ErrKeyNotFound) {
		return nil, fmt.Errorf("%w: no record %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, fmt.Errorf("journal: load record %s: %w", key, err)
	}
	return e.Value(), nil
}

// DeleteRecord removes the record under key; a key that has none is no
// error.
func (j *Journal) DeleteRecord(ctx context.Context, key string) error {
	kv, err := j.bucketHandle(ctx)
	if err != nil {
		return err
	}
	if err := kv.Purge(ctx, key); err != nil && !errors.Is(err, jetstream.ErrKeyNotFound) {
		return fmt.Errorf("journal: delete record %s: %w", key, err)
	}
	return nil
}

// Records returns every record whose key starts with prefix (which ends
// with a dot), by key.
func (j *Journal) Records(ctx context.Context, prefix string) (map[string][]byte, error) {
	keys, err := j.RecordKeys(ctx, prefix)
	if err != nil {
		return nil, err
	}
	out := make(map[string][]byte, len(keys))
	for _, key := range keys {
		b, err := j.Record(ctx, key)
		if errors.Is(err, ErrNotFound) {
			continue // deleted meanwhile
		}
		if err != nil {
			return nil, err
		}
		out[key] = b
	}
	return out, nil
}

// bucketHandle returns the cached snapshot bucket, binding it on first use.
func (j *Journal) bucketHandle(ctx context.Context) (jetstream.KeyValue, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.kv != nil {
		return j.kv, nil
	}
	kv, err := j.js.KeyValue(ctx, j.bucket)
	if err != nil {
		if errors.Is(err, jetstream.ErrBucketNotFound) {
			return nil, fmt.Errorf("%w: bucket %s does not exist: start the daemon or run broker.EnsureStreams: %w", ErrNotFound, j.bucket, err)
		}
		return nil, fmt.Errorf("journal: bucket %s: %w", j.bucket, err)
	}
	j.kv = kv
	return kv, nil
}

// fromJS converts a consumed message; the stream sequence and time come
// from its JetStream metadata, never from the body.
func fromJS(m jetstream.Msg, md *jetstream.MsgMetadata) Msg {
	return Msg{
		Seq:          md.Sequence.Stream,
		Subject:      m.Subject(),
		Data:         m.Data(),
		Time:         md.Timestamp,
		Header:       m.Headers(),
		NumDelivered: md.NumDelivered,
	}
}
