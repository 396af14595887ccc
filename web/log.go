package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/messages/describe"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
	"github.com/lumen-home/lumen/nats/wire"
)

// The event log in words: the journal read backwards, a page at a time,
// each event as describe says it (lumen tail's words).

// The kinds of entry a log can be filtered by.
const (
	KindInput = "input" // every input: what someone or something asked
	KindState = "state" // an output that is no error nor the agent's
	KindError = "error" // a refused input, a failed rule, a restart
	KindAgent = "agent" // a step of the agent
)

var logKinds = []string{KindInput, KindState, KindError, KindAgent}

// Paging: entries per page by default and at most, and how many events
// one request reads at most before it answers with what it found (and
// next, so that the client goes on).
const (
	logLimit    = 50
	logMaxLimit = 500
	logMaxScan  = 20_000
)

// LogEntry is one event of the log, in words.
type LogEntry struct {
	Seq   uint64    `json:"seq"`
	Time  time.Time `json:"time"`
	Light string    `json:"light"`
	Dir   string    `json:"dir"` // in or out
	Type  string    `json:"type"`
	Kind  string    `json:"kind"`
	By    string    `json:"by,omitempty"`
	Cause uint64    `json:"cause,omitempty"`
	Text  string    `json:"text"`
	Error bool      `json:"error,omitempty"`

	at uint64 // where it is in the stream read: next, when it is the last
}

// LogReply answers GET …/log: entries newest first, and next, the before
// of the page after (0: the journal's start was reached).
type LogReply struct {
	OK      bool       `json:"ok"`
	Entries []LogEntry `json:"entries"`
	Next    uint64     `json:"next"`
}

// logQuery is a log request's parameters.
type logQuery struct {
	before uint64 // exclusive; 0: after the last event
	limit  int
	kinds  map[string]bool
}

func parseLogQuery(r *http.Request) (logQuery, error) {
	q := logQuery{limit: logLimit, kinds: map[string]bool{}}
	v := r.URL.Query()
	if s := v.Get("before"); s != "" {
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil || n == 0 {
			return q, fmt.Errorf("before %q is not a stream sequence (1 or more): give the next of the page before, or leave it out for the newest events", s)
		}
		q.before = n
	}
	if s := v.Get("limit"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > logMaxLimit {
			return q, fmt.Errorf("limit %q is not a number of entries from 1 to %d", s, logMaxLimit)
		}
		q.limit = n
	}
	for k := range strings.SplitSeq(v.Get("kinds"), ",") {
		k = strings.TrimSpace(k)
		if k == "" {
			continue
		}
		if !slices.Contains(logKinds, k) {
			return q, fmt.Errorf("kinds: %q is no kind of entry: give any of %s, separated by commas", k, strings.Join(logKinds, ", "))
		}
		q.kinds[k] = true
	}
	if len(q.kinds) == 0 {
		for _, k := range logKinds {
			q.kinds[k] = true
		}
	}
	return q, nil
}

// allLog answers GET /api/v1/log: every light's events (at a hub, the
// house's).
func (s *Server) allLog(w http.ResponseWriter, r *http.Request) {
	s.serveLog(w, r, subject.AllEvents)
}

// lightLog answers GET /api/v1/lights/{light}/log.
func (s *Server) lightLog(w http.ResponseWriter, r *http.Request) {
	light, ok := s.pathLight(w, r)
	if !ok {
		return
	}
	if !s.lightRuns(r.Context(), light) {
		s.noLight(w, r, light)
		return
	}
	s.serveLog(w, r, subject.Events(light))
}

// lightRuns reports whether light answers here, as the event streams
// ask: a light named in the configuration at once, else by its get.
func (s *Server) lightRuns(ctx context.Context, light string) bool {
	if slices.Contains(s.cfg.Lights, light) {
		return true
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err := s.wire.Request(ctx, light, messages.VerbGet, nil)
	return !errors.Is(err, wire.ErrNoLight)
}

func (s *Server) serveLog(w http.ResponseWriter, r *http.Request, filter string) {
	q, err := parseLogQuery(r)
	if err != nil {
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	src, err := s.logSource(ctx)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	entries, next, err := src.page(ctx, filter, q)
	if err != nil {
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if entries == nil {
		entries = []LogEntry{}
	}
	writeJSON(w, http.StatusOK, LogReply{OK: true, Entries: entries, Next: next})
}

// logSource is the journal the log reads: the one the event streams
// follow (s.eventSource). At a hub that is the house's copy, whose
// events carry their Pi's sequences in no one order: the log pages it by
// the copy's own sequences (next is one of those) and tells each event
// by its Pi's, which why and the event streams use.
type logSource struct {
	j      *journal.Journal
	origin func(subj string, h nats.Header) (uint64, bool) // nil: the journal's own sequences
}

func (s *Server) logSource(ctx context.Context) (logSource, error) {
	t, err := s.eventSource(ctx)
	if err != nil {
		return logSource{}, err
	}
	if t != nil {
		return logSource{j: t.j}, nil
	}
	js, err := jetstream.New(s.cfg.NC)
	if err != nil {
		return logSource{}, fmt.Errorf("web: the house journal: %w", err)
	}
	origin, err := house.ReadOrigin(ctx, js)
	if err != nil {
		return logSource{}, fmt.Errorf("web: the house journal: %w", err)
	}
	return logSource{j: journal.New(js, journal.WithStream(house.Stream)), origin: origin}, nil
}

// page reads the newest q.limit entries of the events matching filter
// before q.before, newest first. JetStream reads forwards only, so it
// reads windows of sequences backwards, each twice the last, until it
// has enough, passes the journal's first event, or has read logMaxScan
// events (next then says where to go on).
func (src logSource) page(ctx context.Context, filter string, q logQuery) ([]LogEntry, uint64, error) {
	first, err := src.j.FirstSeq(ctx)
	if err != nil {
		return nil, 0, err
	}
	last, err := src.j.LastSeq(ctx)
	if err != nil {
		return nil, 0, err
	}
	hi := last
	if q.before != 0 && q.before <= last {
		hi = q.before - 1
	}
	first = max(first, 1)
	var out []LogEntry
	window := uint64(2 * q.limit)
	for scanned := uint64(0); hi >= first; window *= 2 {
		lo := first
		if hi-first+1 > window {
			lo = hi - window + 1
		}
		if left := logMaxScan - scanned; hi-lo+1 > left {
			lo = hi - left + 1
		}
		var words describe.Events
		var found []LogEntry
		err := src.j.Replay(ctx, filter, lo, hi, func(m journal.Msg) error {
			at := m.Seq
			if src.origin != nil {
				seq, ok := src.origin(m.Subject, m.Header)
				if !ok {
					return nil
				}
				m.Seq = seq
			}
			e := logEntryOf(&words, m)
			if q.kinds[e.Kind] {
				e.at = at
				found = append(found, e)
			}
			return nil
		})
		if err != nil {
			return nil, 0, fmt.Errorf("web: the log: %w", err)
		}
		for i := len(found) - 1; i >= 0; i-- {
			out = append(out, found[i])
			if len(out) == q.limit {
				if found[i].at <= first {
					return out, 0, nil // nothing is older
				}
				return out, found[i].at, nil
			}
		}
		scanned += hi - lo + 1
		if lo <= first {
			break
		}
		if scanned >= logMaxScan {
			return out, lo, nil
		}
		hi = lo - 1
	}
	return out, 0, nil
}

// logEntryOf puts one event of the journal into words, as the log shows it.
// words carries what an input's earlier outputs said to its later ones:
// give it the events in stream order.
func logEntryOf(words *describe.Events, m journal.Msg) LogEntry {
	env := envelopeOf(m)
	light, dir, typ, _ := subject.Parse(m.Subject)
	env.Type = typ
	e := LogEntry{Seq: m.Seq, Time: env.Time, Light: light, Dir: dir, Type: typ, By: env.By, Cause: env.Cause}
	if e.Time.IsZero() {
		e.Time = m.Time
	}
	e.Time = e.Time.UTC()
	if e.Light == "" {
		e.Light = env.Light
	}
	if dir == subject.DirIn {
		e.Kind = KindInput
		e.Text = describe.Input(env)
		if env.By != "" {
			e.Text += " by " + env.By
		}
	} else {
		switch typ {
		case messages.OutError, messages.OutRestart:
			e.Kind, e.Error = KindError, true
		case messages.OutAgent:
			e.Kind = KindAgent
		default:
			e.Kind = KindState
		}
		// lumen tail aligns its columns with spaces; a page needs none.
		e.Text = strings.Join(strings.Fields(words.Output(env)), " ")
	}
	return e
}

// envelopeOf is the event's envelope; a bare payload (published with
// `nats pub`) is put in one, its type from the subject and its time from
// the stream, as the light reads it.
func envelopeOf(m journal.Msg) messages.Envelope {
	var env messages.Envelope
	if messages.DecodeEnvelope(m.Data, &env) == nil && env.V != 0 {
		return env
	}
	light, _, typ, _ := subject.Parse(m.Subject)
	data := bytes.TrimSpace(m.Data)
	if !json.Valid(data) {
		q, _ := json.Marshal(string(m.Data))
		data = q
	}
	return messages.Envelope{V: messages.Version, Type: typ, Light: light, Time: m.Time.UTC(), Data: data}
}
