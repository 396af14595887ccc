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

// multiLastMax is the most subjects a multi_last direct get answers for.
const multiLastMax = 1024

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

// getter sends batched direct gets to one stream and reads the answers,
// each on the inbox of one of two slots: a batch can be asked for while
// the one before is read (read).
type getter struct {
	nc       *nats.Conn
	stream   string
	subj     string // the stream's DIRECT.GET
	batch    int    // the most a request asks for
	maxBytes int
	timer    *time.Timer
	slots    [2]slot
	broken   error // an answer was left half read
}

// slot is an inbox and the answers it receives, in order.
type slot struct {
	inbox string
	sub   *nats.Subscription
	ch    chan *nats.Msg
	// owed counts answers asked for and not read (a batch read ahead
	// that was not needed): they are read and dropped before the slot
	// is used again.
	owed int
}

// request is a request sent, whose answer is to be read.
type request struct {
	slot  int
	start uint64 // the sequence it reads from
}

// newGetter returns a getter whose requests ask for batch messages at
// most; close it after use.
func newGetter(js jetstream.JetStream, stream string, batch int) *getter {
	nc := js.Conn()
	return &getter{
		nc:       nc,
		stream:   stream,
		subj:     apiPrefix(js) + "DIRECT.GET." + stream,
		batch:    max(batch, 1),
		maxBytes: max(getBatchBytes, 2*int(nc.MaxPayload())),
		timer:    time.NewTimer(getWait),
	}
}

func (g *getter) close() {
	for _, s := range g.slots {
		if s.sub != nil {
			_ = s.sub.Unsubscribe()
		}
	}
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

// send asks for req, which must ask for a batch of at most g.batch, on
// slot i.
func (g *getter) send(ctx context.Context, i int, req getRequest) (request, error) {
	if g.broken != nil {
		return request{}, g.broken
	}
	s := &g.slots[i]
	if s.sub == nil {
		// An answer never holds more than a batch and its end, and one is
		// read before the slot's next is asked for: the channel never
		// fills, so the client drops nothing.
		s.inbox, s.ch = g.nc.NewInbox(), make(chan *nats.Msg, g.batch+1)
		sub, err := g.nc.ChanSubscribe(s.inbox, s.ch)
		if err != nil {
			return request{}, fmt.Errorf("direct get from %s: %w", g.stream, err)
		}
		s.sub = sub
	}
	for ; s.owed > 0; s.owed-- {
		if _, err := g.answer(ctx, request{slot: i}, func(Msg) error { return nil }); err != nil {
			return request{}, err
		}
	}
	body, err := json.Marshal(req)
	if err != nil {
		return request{}, err
	}
	if err := g.nc.PublishRequest(g.subj, s.inbox, body); err != nil {
		return request{}, fmt.Errorf("direct get from %s: %w", g.stream, err)
	}
	return request{slot: i, start: req.Seq}, nil
}

// answer gives fn each message of r's answer, in stream order, until the
// answer's end. An error from fn is returned as is. An error leaves the
// rest of the answer unread, and the getter is then done.
func (g *getter) answer(ctx context.Context, r request, fn func(Msg) error) (e batchEnd, err error) {
	defer func() {
		if err != nil {
			g.broken = fmt.Errorf("direct get from %s: an answer was left unread: %w", g.stream, err)
		}
	}()
	ch := g.slots[r.slot].ch
	for {
		m, err := g.next(ctx, ch)
		if err != nil {
			return batchEnd{}, err
		}
		if len(m.Data) == 0 && m.Header.Get(hdrStatus) != "" {
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

// get asks for req on the first slot and reads its answer.
func (g *getter) get(ctx context.Context, req getRequest, fn func(Msg) error) (batchEnd, error) {
	r, err := g.send(ctx, 0, req)
	if err != nil {
		return batchEnd{}, err
	}
	return g.answer(ctx, r, fn)
}

// next waits for the next message on ch.
func (g *getter) next(ctx context.Context, ch chan *nats.Msg) (*nats.Msg, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		return m, nil
	default:
	}
	g.timer.Reset(getWait)
	defer g.timer.Stop()
	select {
	case m := <-ch:
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
//
// While a batch is read, the next is asked for already: the stream reads
// a whole batch before it sends it, and so reads the next while it sends
// this one (BenchmarkJournalReplay100k). The next is guessed to start as
// many sequences after this one's start as the last batch spanned; a
// guess that falls short costs events read twice (skipped), one beyond
// a request for the gap, read first.
func (g *getter) read(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) (uint64, bool, error) {
	next := max(from, 1)
	var (
		q    []request // asked for, in the order to read them; at most two
		span uint64    // the sequences the last batch read spanned
	)
	ask := func(start uint64) (request, error) {
		n := uint64(g.batch)
		if to != 0 {
			// No more can fall in the range: a filter makes fewer match.
			n = min(n, to-start+1)
		}
		i := 0
		if len(q) > 0 {
			i = 1 - q[0].slot
		}
		return g.send(ctx, i, getRequest{Seq: start, NextFor: filter, Batch: int(n), MaxBytes: g.maxBytes})
	}
	// done leaves an answer asked for ahead unread: it is dropped when
	// its slot is next used.
	done := func() (uint64, bool, error) {
		for _, r := range q {
			g.slots[r.slot].owed++
		}
		return next, true, nil
	}
	for {
		if to != 0 && next > to {
			return done()
		}
		if err := ctx.Err(); err != nil {
			return next, false, err
		}
		if len(q) == 0 || q[0].start > next {
			r, err := ask(next)
			if err != nil {
				return next, false, err
			}
			q = append([]request{r}, q...)
		}
		if ahead := max(q[0].start+span, next); len(q) == 1 && span > 0 && (to == 0 || ahead <= to) {
			r, err := ask(ahead)
			if err != nil {
				return next, false, err
			}
			q = append(q, r)
		}
		r := q[0]
		q = q[1:]
		last := uint64(0)
		e, err := g.answer(ctx, r, func(m Msg) error {
			last = m.Seq
			if m.Seq < next {
				return nil // read already: the batch began before the last ended
			}
			next = m.Seq + 1
			if to != 0 && m.Seq > to {
				return nil // past the range: a filtered batch may overshoot
			}
			return fn(m)
		})
		switch {
		case err != nil:
			return next, false, err
		case e.none || e.pending == 0:
			return done()
		case last >= r.start:
			span = last - r.start + 1
		}
	}
}

// Latest calls fn with the last message of each subject of stream that
// matches filter, in stream order, with no consumer: how a client reads
// a key-value bucket (its stream is KV_<bucket>, its subjects
// $KV.<bucket>.<key>; a deleted key's last message is a marker with the
// KV-Operation header). The stream answers for at most 1,024 subjects
// (multiLastMax).
// It returns ErrNotFound when js reaches no such stream.
func Latest(ctx context.Context, js jetstream.JetStream, stream, filter string, fn func(Msg) error) error {
	if _, err := js.Stream(ctx, stream); err != nil {
		if errors.Is(err, jetstream.ErrStreamNotFound) || errors.Is(err, nats.ErrNoResponders) {
			return fmt.Errorf("%w: stream %s: %w", ErrNotFound, stream, err)
		}
		return fmt.Errorf("journal: stream %s: %w", stream, err)
	}
	g := newGetter(js, stream, multiLastMax)
	defer g.close()
	// Pages of one multi_last request: each up to the same last sequence,
	// from after the previous page's last message.
	var seq, upTo uint64
	for {
		e, err := g.get(ctx, getRequest{MultiLast: []string{filter}, Seq: seq, UpToSeq: upTo, Batch: multiLastMax, MaxBytes: g.maxBytes},
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
