package journal

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Slice is a part of one light's journal held in memory: its events
// from a sequence on, in stream order, and the snapshot they start
// from. lumen journal export writes one to a file; a replay, why and
// whatif read it as they read the journal, on a machine with no daemon.
type Slice struct {
	Light string
	// Snapshot is the light's snapshot the events continue (nil: the
	// events start at the light's first).
	Snapshot []byte
	Events   []Msg
}

// sliceFormat names the file format in its first line.
const sliceFormat = "lumen-journal-slice"

// sliceHead is a slice file's first line.
type sliceHead struct {
	Format   string          `json:"format"`
	Version  int             `json:"version"`
	Light    string          `json:"light"`
	Exported time.Time       `json:"exported"`
	Events   int             `json:"events"`
	Snapshot json.RawMessage `json:"snapshot,omitempty"`
}

// sliceEvent is one event line of a slice file: data as JSON, or raw
// for a body that is not JSON (a bare payload sent with nats pub).
type sliceEvent struct {
	Seq     uint64          `json:"seq"`
	Subject string          `json:"subject"`
	Time    time.Time       `json:"time"`
	Data    json.RawMessage `json:"data,omitempty"`
	Raw     *string         `json:"raw,omitempty"`
}

// WriteTo writes the slice as JSON lines: a head line (format, light,
// snapshot), then one line per event.
func (s *Slice) WriteTo(w io.Writer) (int64, error) {
	bw := bufio.NewWriter(w)
	cw := &countWriter{w: bw}
	enc := json.NewEncoder(cw)
	enc.SetEscapeHTML(false)
	head := sliceHead{Format: sliceFormat, Version: 1, Light: s.Light, Exported: time.Now().UTC(), Events: len(s.Events), Snapshot: s.Snapshot}
	if err := enc.Encode(head); err != nil {
		return cw.n, fmt.Errorf("journal: slice: %w", err)
	}
	// Events are written by hand: their bytes must come back exactly (a
	// replay compares recorded outputs byte for byte), which an encoder
	// that compacts and escapes would not keep.
	var line []byte
	for _, m := range s.Events {
		subj, _ := json.Marshal(m.Subject)
		line = append(line[:0], `{"seq":`...)
		line = strconv.AppendUint(line, m.Seq, 10)
		line = append(append(line, `,"subject":`...), subj...)
		line = append(line, `,"time":"`...)
		line = append(m.Time.UTC().AppendFormat(line, time.RFC3339Nano), '"')
		if json.Valid(m.Data) && !bytes.ContainsAny(m.Data, "\r\n") && len(bytes.TrimSpace(m.Data)) == len(m.Data) {
			line = append(append(line, `,"data":`...), m.Data...)
		} else {
			raw, _ := json.Marshal(string(m.Data))
			line = append(append(line, `,"raw":`...), raw...)
		}
		line = append(line, "}\n"...)
		if _, err := cw.Write(line); err != nil {
			return cw.n, fmt.Errorf("journal: slice: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return cw.n, fmt.Errorf("journal: slice: %w", err)
	}
	return cw.n, nil
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// ReadSlice reads a slice file written by WriteTo. A file that is not
// one, or whose events are out of order, is an error naming the line.
func ReadSlice(r io.Reader) (*Slice, error) {
	dec := json.NewDecoder(bufio.NewReaderSize(r, 1<<20))
	var head sliceHead
	if err := dec.Decode(&head); err != nil || head.Format != sliceFormat {
		return nil, fmt.Errorf("journal: not a journal slice (lumen journal export writes them): %v", errOr(err, "its first line names no "+sliceFormat))
	}
	if head.Version != 1 {
		return nil, fmt.Errorf("journal: slice version %d is newer than this lumen reads (1); upgrade lumen", head.Version)
	}
	s := &Slice{Light: head.Light, Snapshot: head.Snapshot, Events: make([]Msg, 0, head.Events)}
	for line := 2; ; line++ {
		var e sliceEvent
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("journal: slice line %d: %w", line, err)
		}
		if n := len(s.Events); n > 0 && e.Seq <= s.Events[n-1].Seq {
			return nil, fmt.Errorf("journal: slice line %d: sequence %d is not after %d; the file was edited", line, e.Seq, s.Events[n-1].Seq)
		}
		data := []byte(e.Data)
		if e.Raw != nil {
			data = []byte(*e.Raw)
		}
		s.Events = append(s.Events, Msg{Seq: e.Seq, Subject: e.Subject, Time: e.Time, Data: data})
	}
	return s, nil
}

func errOr(err error, msg string) string {
	if err != nil {
		return err.Error()
	}
	return msg
}

// Replay calls fn with each event of the slice in [from, to] (to 0: to
// the end) whose subject matches filter, in order, as Journal.Replay.
func (s *Slice) Replay(ctx context.Context, filter string, from, to uint64, fn func(Msg) error) error {
	i, _ := slices.BinarySearchFunc(s.Events, from, func(m Msg, seq uint64) int {
		switch {
		case m.Seq < seq:
			return -1
		case m.Seq > seq:
			return 1
		}
		return 0
	})
	for ; i < len(s.Events); i++ {
		m := s.Events[i]
		if to != 0 && m.Seq > to {
			break
		}
		if i%4096 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		if !Matches(filter, m.Subject) {
			continue
		}
		if err := fn(m); err != nil {
			return err
		}
	}
	return nil
}

// LastMsg returns the slice's last event on subj (wildcards allowed).
func (s *Slice) LastMsg(_ context.Context, subj string) (Msg, error) {
	for i := len(s.Events) - 1; i >= 0; i-- {
		if Matches(subj, s.Events[i].Subject) {
			return s.Events[i], nil
		}
	}
	return Msg{}, fmt.Errorf("journal: slice: no event on %s: %w", subj, ErrNotFound)
}

// LoadSnapshot returns the snapshot the slice starts from.
func (s *Slice) LoadSnapshot(_ context.Context, light string) ([]byte, error) {
	if light != s.Light || s.Snapshot == nil {
		return nil, fmt.Errorf("journal: slice: no snapshot of light %s: %w", light, ErrNotFound)
	}
	return s.Snapshot, nil
}

// Lights returns the slice's light.
func (s *Slice) Lights(context.Context) ([]string, error) { return []string{s.Light}, nil }

// FirstSeq returns the sequence of the slice's first event (1 when it
// has none).
func (s *Slice) FirstSeq(context.Context) (uint64, error) {
	if len(s.Events) == 0 {
		return 1, nil
	}
	return s.Events[0].Seq, nil
}

// Matches reports whether a concrete subject matches a NATS filter
// (tokens, * for one token, > for the rest).
func Matches(filter, subject string) bool {
	for subject != "" {
		ftok, frest, fmore := strings.Cut(filter, ".")
		if ftok == ">" {
			return true
		}
		stok, srest, smore := strings.Cut(subject, ".")
		if ftok != "*" && ftok != stok {
			return false
		}
		if !fmore || !smore {
			return fmore == smore
		}
		filter, subject = frest, srest
	}
	return false
}
