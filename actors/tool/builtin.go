package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/lumen-home/lumen/internal/clip"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/plugins"
	"github.com/lumen-home/lumen/plugins/netpolicy"
)

// The built-in tools run host-side, in Go, not as JavaScript in the
// Wasmtime guest. Their requests go through the very fetcher a JavaScript
// tool's fetch goes through (secret substitution and redaction, the
// network policy's client with its size cap, per-request timeout and rate
// limit), and a call is bounded by the guest's own per-call deadline and
// result cap; what the guest would add is only a second JSON parser and
// the JavaScript engine's load, which is 30 MB and seconds of compiling on
// a first start. So a data source on fetch_json works while the engine
// compiles, and on a light without the engine at all.
const (
	builtinFetchJSON = "fetch_json"
	builtinFetchText = "fetch_text"
	builtinGetTime   = "get_time"
)

// BuiltinNames are the built-in tools, in the order they are listed.
func BuiltinNames() []string {
	return []string{builtinFetchJSON, builtinFetchText, builtinGetTime, builtinGetWeather, builtinWebSearch}
}

// callError is a call the caller has to fix (its args, or what the URL
// answered): run_tool answers it with 400, like a JavaScript tool's
// exception.
type callError struct{ msg string }

func (e *callError) Error() string { return e.msg }

func callErrorf(format string, args ...any) error {
	return &callError{msg: fmt.Sprintf(format, args...)}
}

// builtin is one built-in tool's work. fetch is the tool's fetcher (nil
// for get_time); web configures get_weather and web_search.
type builtin struct {
	name  string
	fetch plugins.Fetcher
	clock clock.Clock
	web   Web
}

func (b *builtin) run(ctx context.Context, args json.RawMessage) (plugins.Result, error) {
	start := time.Now()
	ctx, cancel := context.WithTimeout(ctx, plugins.DefaultTimeout)
	defer cancel()
	var (
		v   any
		err error
	)
	switch b.name {
	case builtinFetchJSON, builtinFetchText:
		v, err = b.fetchURL(ctx, args)
	case builtinGetTime:
		v, err = b.getTime(args)
	case builtinGetWeather:
		v, err = b.getWeather(ctx, args)
	case builtinWebSearch:
		v, err = b.webSearch(ctx, args)
	default:
		err = fmt.Errorf("tool: no built-in tool %q", b.name)
	}
	res := plugins.Result{Duration: time.Since(start)}
	if err != nil {
		return res, err
	}
	out, err := json.Marshal(v)
	if err != nil {
		return res, fmt.Errorf("tool: %s: encoding the result: %w", b.name, err)
	}
	if len(out) > plugins.DefaultMaxResult {
		return res, callErrorf("the result is %d bytes, more than %d; ask for less (a filter, fewer fields or a smaller page)", len(out), plugins.DefaultMaxResult)
	}
	res.Value, res.Duration = out, time.Since(start)
	return res, nil
}

// fetchArgs are the args of fetch_json and fetch_text. Body is sent as
// it is when it is a JSON string, else as JSON.
type fetchArgs struct {
	URL     string            `json:"url"`
	Method  string            `json:"method"`
	Headers map[string]string `json:"headers"`
	Body    json.RawMessage   `json:"body"`
}

// fetchResult is what fetch_json and fetch_text return: the body parsed
// as JSON (fetch_json) or as text (fetch_text). Header names are
// lowercase, as a JavaScript tool's fetch gives them.
type fetchResult struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
}

func (b *builtin) fetchURL(ctx context.Context, raw json.RawMessage) (any, error) {
	var a fetchArgs
	if err := decodeArgs(raw, &a); err != nil {
		return nil, callErrorf(`%v; give {"url":"https://…","method":"GET","headers":{…},"body":…} (only url is required)`, err)
	}
	if a.URL == "" {
		return nil, callErrorf(`"url" is required, e.g. {"url":"https://api.example.com/data.json"}`)
	}
	req := plugins.FetchRequest{URL: a.URL, Method: strings.ToUpper(a.Method), Headers: map[string]string{}}
	for k, v := range a.Headers {
		req.Headers[k] = v
	}
	if req.Method == "" {
		req.Method = "GET"
	}
	if body := bytes.TrimSpace(a.Body); len(body) > 0 && !bytes.Equal(body, []byte("null")) {
		var s string
		if json.Unmarshal(body, &s) == nil {
			req.Body = s
		} else {
			var c bytes.Buffer
			if err := json.Compact(&c, body); err != nil {
				return nil, callErrorf("body: %v", err)
			}
			req.Body = c.String()
			setDefault(req.Headers, "Content-Type", "application/json")
		}
	}
	if b.name == builtinFetchJSON {
		setDefault(req.Headers, "Accept", "application/json")
	}
	resp, err := b.fetch.Fetch(ctx, req)
	if err != nil {
		if ctx.Err() != nil && !errors.Is(err, netpolicy.ErrTimeout) {
			return nil, callErrorf("%s did not answer within %v; try again later, or ask for less", origin(a.URL), plugins.DefaultTimeout)
		}
		return nil, callErrorf("%v", err)
	}
	if resp.Status < 200 || resp.Status > 299 {
		return nil, callErrorf("%s answered %d: %s", origin(a.URL), resp.Status, excerpt(resp.Body))
	}
	out := fetchResult{Status: resp.Status, Headers: resp.Headers, Body: resp.Body}
	if out.Headers == nil {
		out.Headers = map[string]string{}
	}
	if b.name == builtinFetchText {
		if !utf8.ValidString(resp.Body) {
			out.Body = strings.ToValidUTF8(resp.Body, "\uFFFD")
		}
		return out, nil
	}
	body := bytes.TrimSpace([]byte(resp.Body))
	if len(body) == 0 {
		out.Body = nil // 204 No Content, or a HEAD
		return out, nil
	}
	if !json.Valid(body) {
		return nil, callErrorf("the answer of %s is not JSON (content-type %q): %s; use fetch_text for text", origin(a.URL), resp.Headers["content-type"], excerpt(resp.Body))
	}
	var c bytes.Buffer
	_ = json.Compact(&c, body) // valid, checked above
	out.Body = json.RawMessage(c.Bytes())
	return out, nil
}

// timeResult is what get_time returns. Tz is the zone asked for, or
// "Local": the daemon's ($TZ, else the system's).
type timeResult struct {
	ISO     string `json:"iso"`
	UnixMs  int64  `json:"unix_ms"`
	Tz      string `json:"tz"`
	Zone    string `json:"zone"`
	Offset  string `json:"utc_offset"`
	DST     bool   `json:"dst"`
	Date    string `json:"date"`
	Time    string `json:"time"`
	Year    int    `json:"year"`
	Month   int    `json:"month"`
	Day     int    `json:"day"`
	Weekday string `json:"weekday"`
	Hour    int    `json:"hour"`
	Minute  int    `json:"minute"`
	Second  int    `json:"second"`
}

func (b *builtin) getTime(raw json.RawMessage) (any, error) {
	var a struct {
		Tz string `json:"tz"`
	}
	if err := decodeArgs(raw, &a); err != nil {
		return nil, callErrorf(`%v; give {} or {"tz":"Europe/Paris"}`, err)
	}
	loc := time.Local
	if a.Tz != "" {
		var err error
		// LoadLocation refuses paths (a leading / or ..), so a name
		// cannot read an arbitrary file.
		if loc, err = time.LoadLocation(a.Tz); err != nil || len(a.Tz) > 64 {
			return nil, callErrorf("unknown time zone %q; give an IANA name such as Europe/Paris, America/New_York or UTC", a.Tz)
		}
	}
	t := b.clock.Now().In(loc)
	zone, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return timeResult{
		ISO:     t.Format("2006-01-02T15:04:05.000Z07:00"),
		UnixMs:  t.UnixMilli(),
		Tz:      loc.String(),
		Zone:    zone,
		Offset:  fmt.Sprintf("%s%02d:%02d", sign, off/3600, off%3600/60),
		DST:     t.IsDST(),
		Date:    t.Format("2006-01-02"),
		Time:    t.Format("15:04:05"),
		Year:    t.Year(),
		Month:   int(t.Month()),
		Day:     t.Day(),
		Weekday: t.Weekday().String(),
		Hour:    t.Hour(),
		Minute:  t.Minute(),
		Second:  t.Second(),
	}, nil
}

// decodeArgs decodes a call's args strictly: a misspelt field is an
// error the caller (often an LLM) can fix, not a silent default.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		raw = json.RawMessage(`{}`)
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("args: %w", err)
	}
	return nil
}

func setDefault(h map[string]string, name, value string) {
	for k := range h {
		if strings.EqualFold(k, name) {
			return
		}
	}
	h[name] = value
}

// origin names a URL in errors by scheme, host and port only: its path
// or query may carry a token.
func origin(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "the URL"
	}
	return u.Scheme + "://" + u.Host
}

// excerpt is the start of an answer's body, for an error.
func excerpt(body string) string {
	body = strings.TrimSpace(body)
	if body == "" {
		return "(empty body)"
	}
	return strings.ToValidUTF8(clip.To(body, 200, "…"), "\uFFFD")
}
