package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// Server-Sent Events of the journal: each event is
//
//	id: <stream sequence>
//	event: in.<type> | out.<type>
//	data: <the envelope JSON>
//
// A client that reconnects sends Last-Event-ID (browsers do) and gets
// every event after it, none twice; ?since=SEQ does the same by hand.
// Without either the stream starts at the next event.
//
// At a hub the events are the house's copy of each Pi's journal, each
// with its Pi's sequence: one light's stream has them in order, so its
// ids are those; every light's has not (the Pis' sequences overlap), so
// its ids are the events' places in the copy, and each event's data adds
// "seq", its Pi's sequence.
//
// With ?words=1 each event's data also has "text" and "kind", the words
// and kind the log gives it (log.go); without, the data is the envelope
// as it is.

// keepAlive is how often an idle stream sends a comment, so that proxies
// and the client notice a dead connection.
const keepAlive = 15 * time.Second

func (s *Server) lightEvents(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	_, err := s.wire.Request(ctx, light, messages.VerbGet, nil)
	cancel()
	if errors.Is(err, wire.ErrNoLight) {
		s.noLight(w, r, light)
		return
	}
	s.stream(w, r, subject.Events(light))
}

func (s *Server) allEvents(w http.ResponseWriter, r *http.Request) {
	s.stream(w, r, subject.AllEvents)
}

// stream follows the journal's events matching filter as SSE.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, filter string) {
	ctx, cancel := s.streamCtx(r)
	defer cancel()
	from, err := resumeFrom(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	enc, err := encoderFor(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	t, err := s.eventSource(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if t == nil { // at a hub: the house's copy
		switch {
		case filter == subject.AllEvents:
			s.followCopy(w, r, filter, from, enc, true)
		case from == 0:
			s.followCopy(w, r, filter, 0, enc, false) // from the copy's end
		default:
			s.followAlone(w, r, filter, from, enc)
		}
		return
	}
	prefix := strings.TrimSuffix(filter, ">") // one light's: lumen.<light>.evt.
	if filter == subject.AllEvents {
		prefix = ""
	}
	sub, joined, err := t.join(ctx, prefix)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	defer t.leave(sub)
	if from == 0 || from > joined+1 {
		// No resume point, or one past the journal's end (a journal made
		// anew since): the next event.
		from = joined + 1
	}
	rc, ok := startSSE(w)
	if !ok {
		return
	}
	// What the client missed, up to where the tap stood when it joined.
	if from <= joined {
		err := t.j.Replay(ctx, filter, from, joined, func(m journal.Msg) error {
			_, err := w.Write(enc(m))
			return err
		})
		if err != nil || rc.Flush() != nil {
			return
		}
	}
	// Dropped by the tap (too slow, or it failed), the client comes back
	// with Last-Event-ID.
	pump(ctx, w, rc, sub.ch, sub.gone, from, enc)
}

// pump sends events (those from sequence from on) until done closes,
// ctx ends or the client goes, with a comment when idle.
func pump(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, events <-chan journal.Msg, done <-chan struct{}, from uint64, enc func(journal.Msg) []byte) {
	tick := time.NewTicker(keepAlive)
	defer tick.Stop()
	for {
		var err error
		select {
		case m := <-events:
			if m.Seq < from {
				continue
			}
			_, err = w.Write(enc(m))
		case <-tick.C:
			_, err = w.Write([]byte(": keep-alive\n\n"))
		case <-done:
			return
		case <-ctx.Done():
			return
		}
		if err == nil {
			err = rc.Flush()
		}
		if err != nil {
			return
		}
	}
}

// eventSource is the tap over the daemon's journal; nil at a hub, whose
// house stream gives each event its Pi's sequence, not in one order: each
// stream there follows the house's copy alone.
func (s *Server) eventSource(ctx context.Context) (*tap, error) {
	s.tapMu.Lock()
	defer s.tapMu.Unlock()
	if s.tap != nil {
		return s.tap, nil
	}
	js, err := jetstream.New(s.cfg.NC)
	if err != nil {
		return nil, err
	}
	if _, err := js.Stream(ctx, subject.Stream); err == nil {
		s.tap = newTap(s.ctx, journal.New(js), s.cfg.Logf)
		return s.tap, nil
	}
	return nil, nil
}

// followAlone follows one light's events in the house's copy from its
// Pi's sequence from, which the journal finds in the copy (they are in
// its order).
func (s *Server) followAlone(w http.ResponseWriter, r *http.Request, filter string, from uint64, enc func(journal.Msg) []byte) {
	ctx, cancel := s.streamCtx(r)
	defer cancel()
	js, err := jetstream.New(s.cfg.NC)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	j, err := house.OpenJournal(ctx, js)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	s.relay(ctx, w, filter, func(fn func(journal.Msg) error) error { return j.Follow(ctx, filter, from, fn, nil) }, enc)
}

// followCopy follows the house's copy from the place from in it (0: the
// next event), without reading what comes before. With places, each
// event has its place as its id and its Pi's sequence as "seq" (placed);
// without, its Pi's sequence as its id (one light's stream, whose
// resume point is one of those).
func (s *Server) followCopy(w http.ResponseWriter, r *http.Request, filter string, from uint64, enc func(journal.Msg) []byte, places bool) {
	ctx, cancel := s.streamCtx(r)
	defer cancel()
	src, err := s.logSource(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	last, err := src.j.LastSeq(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if from == 0 || from > last+1 {
		from = last + 1 // the next event, or a copy made anew since
	}
	follow := func(fn func(journal.Msg) error) error {
		return src.j.Follow(ctx, filter, from, func(m journal.Msg) error {
			if _, ok := src.origin(m.Subject, m.Header); !ok {
				return nil // not from its light's Pi
			}
			return fn(m)
		}, nil)
	}
	s.relay(ctx, w, filter, follow, func(m journal.Msg) []byte {
		seq, _ := src.origin(m.Subject, m.Header)
		place := m.Seq
		m.Seq = seq
		if !places {
			return enc(m)
		}
		return placed(enc(m), place, seq)
	})
}

// relay answers with an event stream of what follow hands on, as enc
// writes it, until the client goes or follow fails (the client then
// comes back with Last-Event-ID).
func (s *Server) relay(ctx context.Context, w http.ResponseWriter, filter string, follow func(fn func(journal.Msg) error) error, enc func(journal.Msg) []byte) {
	rc, ok := startSSE(w)
	if !ok {
		return
	}
	events := make(chan journal.Msg, 64)
	failed := make(chan struct{})
	go func() {
		defer close(failed)
		err := follow(func(m journal.Msg) error {
			select {
			case events <- m:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
		if ctx.Err() == nil {
			s.cfg.Logf("http: events %s: %v", filter, err)
		}
	}()
	pump(ctx, w, rc, events, failed, 0, enc)
}

// placed is an event as SSE with id place (instead of its sequence) and
// its sequence added to its data's object as "seq".
func placed(b []byte, place, seq uint64) []byte {
	rest, ok := bytes.CutPrefix(b, fmt.Appendf(nil, "id: %d\n", seq))
	if !ok {
		return b
	}
	return addFields(append(fmt.Appendf(nil, "id: %d\n", place), rest...), fmt.Appendf(nil, `,"seq":%d`, seq))
}

// streamCtx is the context of a long-lived stream: it ends with the
// request or when the server closes, so that closing does not wait for
// the clients to go.
func (s *Server) streamCtx(r *http.Request) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(r.Context())
	stop := context.AfterFunc(s.ctx, cancel)
	return ctx, func() { stop(); cancel() }
}

// startSSE answers with an event stream, which lives as long as the
// client wants it (no write deadline).
func startSSE(w http.ResponseWriter) (*http.ResponseController, bool) {
	rc := http.NewResponseController(w)
	_ = rc.SetWriteDeadline(time.Time{})
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	// A browser that loses the stream tries again after a second.
	if _, err := w.Write([]byte("retry: 1000\n\n")); err != nil {
		return rc, false
	}
	return rc, rc.Flush() == nil
}

// resumeFrom is the first sequence a stream sends: after Last-Event-ID
// or ?since=SEQ, else 0 (the next event).
func resumeFrom(r *http.Request) (uint64, error) {
	v, what := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, what = r.URL.Query().Get("since"), "since"
	}
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%s %q is not a stream sequence", what, v)
	}
	return n + 1, nil
}

// sseEvent is one journal event as SSE. A bare payload (published with
// `nats pub`) is sent in an envelope, its type from the subject and its
// time from the stream, as the light reads it.
func sseEvent(m journal.Msg) []byte {
	light, dir, typ, _ := subject.Parse(m.Subject)
	// One line, as SSE needs: compacted, or as a string when it is not
	// JSON at all.
	var payload bytes.Buffer
	if json.Compact(&payload, m.Data) != nil {
		payload.Reset()
		q, _ := json.Marshal(string(m.Data))
		payload.Write(q)
	}
	data := payload.Bytes()
	if !messages.IsEnvelope(data) {
		env := messages.Envelope{V: messages.Version, Type: typ, Light: light, Time: m.Time.UTC(), Data: data}
		data = messages.AppendEnvelope(nil, &env)
	}
	b := make([]byte, 0, len(data)+64)
	b = fmt.Appendf(b, "id: %d\nevent: %s.%s\ndata: ", m.Seq, dir, typ)
	b = append(b, data...)
	return append(b, "\n\n"...)
}

// encoderFor is how a stream writes its events: as they are, or with
// ?words=1 with their words. Each stream has its own: the words of an
// input's outputs depend on those before (describe.Events).
func encoderFor(r *http.Request) (func(journal.Msg) []byte, error) {
	switch r.URL.Query().Get("words") {
	case "", "0", "false":
		return sseEvent, nil
	case "1", "true":
	default:
		return nil, fmt.Errorf("words %q: give words=1 for each event's words, or leave it out", r.URL.Query().Get("words"))
	}
	var words describe.Events
	return func(m journal.Msg) []byte { return sseWords(&words, m) }, nil
}

// sseWords is sseEvent with the entry's words and kind added to the
// data's object.
func sseWords(words *describe.Events, m journal.Msg) []byte {
	e := logEntryOf(words, m)
	extra := []byte(`,"text":`)
	text, _ := json.Marshal(e.Text)
	extra = append(extra, text...)
	extra = append(extra, `,"kind":"`+e.Kind+`"`...)
	if e.Error {
		extra = append(extra, `,"error":true`...)
	}
	return addFields(sseEvent(m), extra)
}

// addFields adds fields (`,"key":value…`) to the end of the data's
// object of the SSE event b.
func addFields(b, fields []byte) []byte {
	end := len(b) - len("}\n\n")
	if end < 0 || b[end] != '}' {
		return b
	}
	out := make([]byte, 0, len(b)+len(fields))
	out = append(out, b[:end]...)
	out = append(out, fields...)
	return append(out, b[end:]...)
}
