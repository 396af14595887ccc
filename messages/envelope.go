package messages

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"
)

// Envelope is the JSON object around every event on the journal. See the
// package documentation for the meaning of each field.
type Envelope struct {
	V     int             `json:"v"`
	ID    string          `json:"id"`
	Type  string          `json:"type"`
	Light string          `json:"light"`
	Time  time.Time       `json:"time"`
	Cause uint64          `json:"cause,omitempty"`
	By    string          `json:"by,omitempty"`
	Data  json.RawMessage `json:"data"`
}

// ErrMalformed is wrapped by every decoding error of this package.
var ErrMalformed = errors.New("messages: malformed event")

// MarshalJSON encodes the envelope with AppendEnvelope so that the struct
// and the hand-written encoder can never disagree.
func (e Envelope) MarshalJSON() ([]byte, error) {
	return AppendEnvelope(nil, &e), nil
}

// UnmarshalJSON decodes with DecodeEnvelope.
func (e *Envelope) UnmarshalJSON(b []byte) error {
	return DecodeEnvelope(b, e)
}

// AppendEnvelope appends the canonical encoding of e to buf: fields in a
// fixed order, time in RFC 3339 UTC, cause omitted when zero, data copied
// as is (it must be valid JSON; empty data is written as null); by
// omitted when empty.
func AppendEnvelope(buf []byte, e *Envelope) []byte {
	buf = append(buf, `{"v":`...)
	buf = strconv.AppendInt(buf, int64(e.V), 10)
	buf = append(buf, `,"id":`...)
	buf = appendString(buf, e.ID)
	buf = append(buf, `,"type":`...)
	buf = appendString(buf, e.Type)
	buf = append(buf, `,"light":`...)
	buf = appendString(buf, e.Light)
	buf = append(buf, `,"time":"`...)
	buf = e.Time.UTC().AppendFormat(buf, time.RFC3339Nano)
	buf = append(buf, '"')
	if e.Cause != 0 {
		buf = append(buf, `,"cause":`...)
		buf = strconv.AppendUint(buf, e.Cause, 10)
	}
	if e.By != "" {
		buf = append(buf, `,"by":`...)
		buf = appendString(buf, e.By)
	}
	buf = append(buf, `,"data":`...)
	if len(e.Data) == 0 {
		buf = append(buf, "null"...)
	} else {
		buf = append(buf, e.Data...)
	}
	return append(buf, '}')
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string, escaping what JSON requires.
func appendString(buf []byte, s string) []byte {
	buf = append(buf, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			i++
			continue
		}
		if c < utf8.RuneSelf {
			buf = append(buf, s[start:i]...)
			switch c {
			case '"', '\\':
				buf = append(buf, '\\', c)
			case '\n':
				buf = append(buf, '\\', 'n')
			case '\r':
				buf = append(buf, '\\', 'r')
			case '\t':
				buf = append(buf, '\\', 't')
			default:
				buf = append(buf, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf = append(buf, s[start:i]...)
			buf = append(buf, `\ufffd`...)
			i += size
			start = i
			continue
		}
		i += size
	}
	buf = append(buf, s[start:]...)
	return append(buf, '"')
}

// DecodeEnvelope decodes b into e without reflection. Unknown fields are
// skipped (newer writers may add some); data is kept as raw JSON that
// aliases b.
func DecodeEnvelope(b []byte, e *Envelope) error {
	*e = Envelope{}
	d := decoder{b: b}
	d.space()
	if !d.consume('{') {
		return d.fail("an event must be a JSON object")
	}
	d.space()
	if d.consume('}') {
		return d.end()
	}
	for {
		d.space()
		key, err := d.str()
		if err != nil {
			return err
		}
		d.space()
		if !d.consume(':') {
			return d.fail("expected ':' after a field name")
		}
		d.space()
		switch key {
		case "v":
			n, err := d.uint()
			if err != nil {
				return err
			}
			e.V = int(n)
		case "id":
			if e.ID, err = d.str(); err != nil {
				return err
			}
		case "type":
			if e.Type, err = d.str(); err != nil {
				return err
			}
		case "light":
			if e.Light, err = d.str(); err != nil {
				return err
			}
		case "time":
			s, err := d.str()
			if err != nil {
				return err
			}
			t, perr := time.Parse(time.RFC3339Nano, s)
			if perr != nil {
				return fmt.Errorf("%w: time %q is not RFC 3339", ErrMalformed, s)
			}
			e.Time = t
		case "cause":
			if e.Cause, err = d.uint(); err != nil {
				return err
			}
		case "by":
			if e.By, err = d.str(); err != nil {
				return err
			}
		case "data":
			start := d.i
			if err := d.skip(0); err != nil {
				return err
			}
			e.Data = json.RawMessage(b[start:d.i:d.i])
		default:
			if err := d.skip(0); err != nil {
				return err
			}
		}
		d.space()
		if d.consume(',') {
			continue
		}
		if d.consume('}') {
			return d.end()
		}
		return d.fail("expected ',' or '}'")
	}
}

// IsEnvelope reports whether b looks like an envelope (an object with a
// "v" and a "data" field) rather than a bare payload.
func IsEnvelope(b []byte) bool {
	var e Envelope
	if DecodeEnvelope(b, &e) != nil {
		return false
	}
	return e.V > 0 && e.Data != nil
}

type decoder struct {
	b []byte
	i int
}

func (d *decoder) fail(msg string) error {
	return fmt.Errorf("%w at byte %d: %s", ErrMalformed, d.i, msg)
}

func (d *decoder) end() error {
	d.space()
	if d.i != len(d.b) {
		return d.fail("unexpected data after the object")
	}
	return nil
}

func (d *decoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *decoder) consume(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *decoder) uint() (uint64, error) {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	if d.i == start {
		return 0, d.fail("expected a non-negative integer")
	}
	n, err := strconv.ParseUint(string(d.b[start:d.i]), 10, 64)
	if err != nil {
		return 0, d.fail("integer out of range")
	}
	return n, nil
}

// str reads a JSON string. Strings without escapes (the common case) cost
// one allocation.
func (d *decoder) str() (string, error) {
	if !d.consume('"') {
		return "", d.fail("expected a string")
	}
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			return s, nil
		case c == '\\':
			return d.strSlow(start)
		case c < 0x20:
			return "", d.fail("control character in string")
		}
		d.i++
	}
	return "", d.fail("unterminated string")
}

func (d *decoder) strSlow(start int) (string, error) {
	d.i = start - 1
	if err := d.skipString(); err != nil {
		return "", err
	}
	var s string
	if err := json.Unmarshal(d.b[start-1:d.i], &s); err != nil {
		return "", fmt.Errorf("%w: %v", ErrMalformed, err)
	}
	return s, nil
}

func (d *decoder) skipString() error {
	if !d.consume('"') {
		return d.fail("expected a string")
	}
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return nil
		case c == '\\':
			d.i += 2
			continue
		case c < 0x20:
			return d.fail("control character in string")
		}
		d.i++
	}
	return d.fail("unterminated string")
}

const maxDepth = 1000

// skip moves past one JSON value, checking its syntax.
func (d *decoder) skip(depth int) error {
	if depth > maxDepth {
		return d.fail("nesting too deep")
	}
	d.space()
	if d.i >= len(d.b) {
		return d.fail("unexpected end of input")
	}
	switch c := d.b[d.i]; {
	case c == '"':
		return d.skipString()
	case c == '{' || c == '[':
		closeBy := byte('}')
		if c == '[' {
			closeBy = ']'
		}
		d.i++
		d.space()
		if d.consume(closeBy) {
			return nil
		}
		for {
			if c == '{' {
				d.space()
				if err := d.skipString(); err != nil {
					return err
				}
				d.space()
				if !d.consume(':') {
					return d.fail("expected ':'")
				}
			}
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.space()
			if d.consume(',') {
				continue
			}
			if d.consume(closeBy) {
				return nil
			}
			return d.fail("expected ',' or a closing bracket")
		}
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	case c == '-' || (c >= '0' && c <= '9'):
		start := d.i
		d.i++
		for d.i < len(d.b) {
			c := d.b[d.i]
			if (c >= '0' && c <= '9') || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-' {
				d.i++
				continue
			}
			break
		}
		if _, err := strconv.ParseFloat(string(d.b[start:d.i]), 64); err != nil {
			return d.fail("bad number")
		}
		return nil
	default:
		return d.fail("unexpected character")
	}
}

func (d *decoder) literal(lit string) error {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return d.fail("bad literal")
	}
	d.i += len(lit)
	return nil
}
