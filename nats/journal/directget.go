package journal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Reading without a consumer. A client in another NATS account than the
// daemon's reaches the streams only through the read-only JetStream API
// it imports (STREAM.INFO, STREAM.MSG.GET, DIRECT.GET): it can create no
// consumer. So the journal reads every range by batched direct gets: a
// request names a start sequence, a filter and a batch size, and the
// stream answers with the matching messages, then an end-of-batch
// message saying how many more match.

// Batched direct gets: getBatch messages at most per request, which
// amortizes the round trip (replay is the hot path); getBatchBytes caps
// what one batch may hold, raised to twice the server's max payload so
// one event always fits (the stream sends at least one, then stops once
// past the cap). getWait bounds the silence within an answer, so that an
// answer lost (a reconnect) fails instead of hanging; it is long because
// the stream reads a batch before it sends any (blocks from a slow SD
// card). A stream nobody answers for fails at once (no responders).
const (
	getBatch      = 5000
	getBatchBytes = 4 << 20
	getWait       = 30 * time.Second
)

// getRequest is nats-server's JSApiMsgGetRequest, the fields used here.
type getRequest struct {
	Seq       uint64     `json:"seq,omitempty"`
	NextFor   string     `json:"next_by_subj,omitempty"`
	Batch     int        `json:"batch,omitempty"`
	MaxBytes  int        `json:"max_bytes,omitempty"`
	StartTime *time.Time `json:"start_time,omitempty"`
	MultiLast []string   `json:"multi_last,omitempty"`
	UpToSeq   uint64     `json:"up_to_seq,omitempty"`
}

// Headers of a direct get's answer.
const (
	hdrStatus      = "Status"
	hdrDescription = "Description"
	hdrNumPending  = "Nats-Num-Pending"
	hdrLastSeq     = "Nats-Last-Sequence"
	hdrUpToSeq     = "Nats-UpTo-Sequence"
)

// addedHeaders are the headers the stream adds to each message of an
// answer; Msg.Header holds the event's own only.
var addedHeaders = []string{jetstream.StreamHeader, jetstream.SubjectHeader, jetstream.SequenceHeader,
	jetstream.TimeStampHeaer, hdrNumPending, hdrLastSeq}

// getter sends batched direct gets to one stream and reads the answers
// on its own inbox, one request at a time.
type getter struct {
	nc       *nats.Conn
	stream   string
	subj     string // the stream's DIRECT.GET
	sub      *nats.Subscription
	ch       chan *nats.Msg
	timer    *time.Timer
	maxBytes int
	busy     bool // an answer is being read, or was left unread
}

// newGetter subscribes a getter's inbox; close it after use.
func newGetter(js jetstream.JetStream, stream string) (*getter, error) {
	nc := js.Conn()
	g := &getter{
		nc:     nc,
		stream: stream,
		subj:   apiPrefix(js) + "DIRECT.GET." + stream,
		// One answer at a time, which never holds more than a batch and
		// its end: the channel never fills, so the client drops nothing.
		ch:       make(chan *nats.Msg, getBatch+1),
		maxBytes: max(getBatchBytes, 2*int(nc.MaxPayload())),
		timer:    time.NewTimer(getWait),
	}
	g.timer.Stop()
	sub, err := nc.ChanSubscribe(nc.NewInbox(), g.ch)
	if err != nil {
		return nil, fmt.Errorf("direct get from %s: %w", stream, err)
	}
	g.sub = sub
	return g, nil
}

func (g *getter) close() {
	_ = g.sub.Unsubscribe()
	g.timer.Stop()
}

// apiPrefix is where js sends JetStream API requests.
func apiPrefix(js jetstream.JetStream) string {
	o := js.Options()
	switch {
	case o.APIPrefix != "":
		return strings.TrimSuffix(o.APIPrefix, ".") + "."
	case o.Domain != "":
		return "$JS." + o.Domain + ".API."
	}
	return jetstream.DefaultAPIPrefix
}

// batchEnd is how a batched answer ended.
type batchEnd struct {
	// none: nothing matched the request.
	none bool
	// pending is how many messages matched after the batch's last when
	// the batch ended; upTo the last sequence a multi_last request saw.
	pending, upTo uint64
}

// get sends req, which must ask for a batch, and gives fn each message
// of the answer, in stream order, until the answer's end. An error from
// fn is returned as is. An error leaves the rest of the answer unread:
// the getter is then done.
func (g *getter) get(ctx context.Context, req getRequest, fn func(Msg) error) (batchEnd, error) {
	if g.busy {
		return batchEnd{}, fmt.Errorf("direct get from %s: the previous answer was left unread", g.stream)
	}
	g.busy = true
	body, err := json.Marshal(req)
	if err != nil {
		return batchEnd{}, err
	}
	if err := g.nc.PublishRequest(g.subj, g.sub.Subject, body); err != nil {
		return batchEnd{}, fmt.Errorf("direct get from %s: %w", g.stream, err)
	}
	for {
		m, err := g.next(ctx)
		if err != nil {
			return batchEnd{}, err
		}
		if len(m.Data) == 0 && m.Header.Get(hdrStatus) != "" {
			g.busy = false
			return g.end(m)
		}
		msg, err := fromDirect(m)
		if err != nil {
			return batchEnd{}, fmt.Errorf("direct get from %s: %w", g.stream, err)
		}
		if err := fn(msg); err != nil {
			return batchEnd{}, err
		}
	}
}

// next waits for the answer's next message.
func (g *getter) next(ctx context.Context) (*nats.Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case m := <-g.ch:
		return m, nil
	default:
	}
	g.timer.Reset(getWait)
	defer g.timer.Stop()
	select {
	case m := <-g.ch:
		return m, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-g.timer.C:
		return nil, fmt.Errorf("direct get from %s: no answer within %s", g.stream, getWait)
	}
}

// end reads a status message: the end of a batch, nothing found, or an
// error.
func (g *getter) end(m *nats.Msg) (batchEnd, error) {
	switch status := m.Header.Get(hdrStatus); status {
	case "204":
		e := batchEnd{}
		e.pending, _ = strconv.ParseUint(m.Header.Get(hdrNumPending), 10, 64)
		e.upTo, _ = strconv.ParseUint(m.Header.Get(hdrUpToSeq), 10, 64)
		return e, nil
	case "404":
		return batchEnd{none: true}, nil
	case "503":
		return batchEnd{}, fmt.Errorf("%w: stream %s answers no direct get here (is it there, with direct gets allowed, and imported to this account?): %w",
			ErrNotFound, g.stream, nats.ErrNoResponders)
	default:
		return batchEnd{}, fmt.Errorf("direct get from %s: %s %s", g.stream, status, m.Header.Get(hdrDescription))
	}
}

// fromDirect converts a message of a direct get's answer; the sequence,
// subject and time come from the headers the stream adds, which are
// removed.
func fromDirect(m *nats.Msg) (Msg, error) {
	h := m.Header
	seq, err := strconv.ParseUint(h.Get(jetstream.SequenceHeader), 10, 64)
	if err != nil {
		return Msg{}, fmt.Errorf("sequence header %q: %w", h.Get(jetstream.SequenceHeader), err)
	}
	t, err := time.Parse(time.RFC3339Nano, h.Get(jetstream.TimeStampHeaer))
	if err != nil {
		return Msg{}, fmt.Errorf("time stamp header: %w", err)
	}
	return Msg{Seq: seq, Subject: h.Get(jetstream.SubjectHeader), Data: m.Data, Time: t, Header: ownHeader(h)}, nil
}

// ownHeader removes from h, in place, the headers the stream adds to a
// direct get's answer: what is left is the event's own, nil if none.
func ownHeader(h nats.Header) nats.Header {
	n := 0
	for _, k := range addedHeaders {
		if _, ok := h[k]; ok {
			n++
		}
	}
	if n == len(h) {
		return nil // the common case, without the deletes
	}
	for _, k := range addedHeaders {
		delete(h, k)
	}
	return h
}

// read gives fn the events of the stream matching filter (every subject
// when empty) from sequence from to to (0: to the last there is), in
// stream order, by batched direct gets. It returns the sequence to read
// from next, and whether the stream had no more matching events when the
// last batch ended (to 0), or the range is done.
func (g *getter) read(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) (uint64, bool, error) {
	next := max(from, 1)
	for to == 0 || next <= to {
		if err := ctx.Err(); err != nil {
			return next, false, err
		}
		n := uint64(getBatch)
		if to != 0 {
			// No more can fall in the range: a filter makes fewer match.
			n = min(n, to-next+1)
		}
		req := getRequest{Seq: next, NextFor: filter, Batch: int(n), MaxBytes: g.maxBytes}
		start := next
		e, err := g.get(ctx, req, func(m Msg) error {
			next = m.Seq + 1
			if to != 0 && m.Seq > to {
				return nil // past the range: a filtered batch may overshoot
			}
			return fn(m)
		})
		if err != nil {
			return next, false, err
		}
		if e.none || e.pending == 0 || next == start {
			return next, true, nil
		}
	}
	return next, true, nil
}

// Latest calls fn with the last message of each subject of stream that
// matches filter, in stream order, with no consumer: how a client reads
// a key-value bucket (its stream is KV_<bucket>, its subjects
// $KV.<bucket>.<key>; a deleted key's last message is a marker with the
// KV-Operation header). The stream answers for at most 1,024 subjects.
// It returns ErrNotFound when js reaches no such stream.
func Latest(ctx context.Context, js jetstream.JetStream, stream, filter string, fn func(Msg) error) error {
	if _, err := js.Stream(ctx, stream); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%w: stream %s: %w", ErrNotFound, stream, err)
		}
		return fmt.Errorf("journal: stream %s: %w", stream, err)
	}
	g, err := newGetter(js, stream)
	if err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	defer g.close()
	// Pages of one multi_last request: each up to the same last sequence,
	// from after the previous page's last message.
	var seq, upTo uint64
	for {
		e, err := g.get(ctx, getRequest{MultiLast: []string{filter}, Seq: seq, UpToSeq: upTo, Batch: getBatch, MaxBytes: g.maxBytes},
			func(m Msg) error {
				seq = m.Seq + 1
				return fn(m)
			})
		switch {
		case err != nil:
			return fmt.Errorf("journal: last messages of %s on %s: %w", stream, filter, err)
		case e.none || e.pending == 0:
			return nil
		}
		upTo = e.upTo
	}
}
