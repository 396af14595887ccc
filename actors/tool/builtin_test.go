package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/plugins/netpolicy"
	"github.com/lumen-home/lumen/plugins/secrets"
)

func TestGetTime(t *testing.T) {
	// 2026-07-01 10:30:05.250 UTC: summer time in Paris.
	at := time.Date(2026, 7, 1, 10, 30, 5, 250e6, time.UTC)
	b := &builtin{name: builtinGetTime, clock: clocktest.New(at)}
	tests := []struct {
		name, args string
		want       map[string]any // fields checked
		err        string
	}{
		{"UTC", `{"tz":"UTC"}`, map[string]any{"iso": "2026-07-01T10:30:05.250Z", "unix_ms": 1782901805250.0, "tz": "UTC",
			"utc_offset": "+00:00", "weekday": "Wednesday", "hour": 10.0, "minute": 30.0, "date": "2026-07-01", "time": "10:30:05"}, ""},
		{"Paris in summer", `{"tz":"Europe/Paris"}`, map[string]any{"iso": "2026-07-01T12:30:05.250+02:00", "tz": "Europe/Paris",
			"zone": "CEST", "utc_offset": "+02:00", "dst": true, "hour": 12.0}, ""},
		{"a half-hour offset", `{"tz":"Asia/Kolkata"}`, map[string]any{"utc_offset": "+05:30", "hour": 16.0, "minute": 0.0}, ""},
		{"west of UTC", `{"tz":"America/New_York"}`, map[string]any{"utc_offset": "-04:00", "hour": 6.0, "day": 1.0}, ""},
		{"no args: the daemon's zone", ``, map[string]any{"unix_ms": 1782901805250.0, "tz": "Local"}, ""},
		{"unknown zone", `{"tz":"Mars/Olympus"}`, nil, `unknown time zone "Mars/Olympus"`},
		{"a path is not a zone", `{"tz":"../../etc/passwd"}`, nil, "unknown time zone"},
		{"a misspelt field", `{"timezone":"UTC"}`, nil, `unknown field "timezone"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := b.run(context.Background(), json.RawMessage(tt.args))
			if tt.err != "" {
				var ce *callError
				if !errors.As(err, &ce) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("got %v, want a call error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got map[string]any
			if err := json.Unmarshal(res.Value, &got); err != nil {
				t.Fatal(err)
			}
			for k, v := range tt.want {
				if got[k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, got[k], v, res.Value)
				}
			}
		})
	}
}

// fetchServer answers the fetch built-ins' tests on 127.0.0.1.
func fetchServer(t *testing.T) (*httptest.Server, string) {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("X-Limit", "42")
			fmt.Fprintf(w, `{ "price": 101.5, "accept": %q }`, r.Header.Get("Accept"))
		case "/text":
			fmt.Fprint(w, "hello\nworld")
		case "/html":
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html>oops</html>")
		case "/echo": // what was sent, including a substituted secret
			body := make([]byte, 100)
			n, _ := r.Body.Read(body)
			fmt.Fprintf(w, `{"method":%q,"auth":%q,"type":%q,"body":%q}`, r.Method, r.Header.Get("Authorization"), r.Header.Get("Content-Type"), body[:n])
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/fail":
			http.Error(w, "down for maintenance", http.StatusServiceUnavailable)
		case "/redirect":
			http.Redirect(w, r, "http://localhost:1/elsewhere", http.StatusFound)
		case "/slow":
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Second):
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv, strings.TrimPrefix(srv.URL, "http://")
}

func mustAllow(t *testing.T, hosts ...string) netpolicy.Operator {
	t.Helper()
	op, err := netpolicy.ParseAllow(hosts)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

// newFetchBuiltin is a fetch built-in as the manager makes it: an open
// fetcher under op.
func newFetchBuiltin(t *testing.T, name string, op netpolicy.Operator, sec *secrets.Store, lim netpolicy.Limits) *builtin {
	t.Helper()
	client, err := netpolicy.New(op, nil, lim)
	if err != nil {
		t.Fatal(err)
	}
	return &builtin{name: name, fetch: &fetcher{client: client, open: true, secrets: sec}, clock: clock.System(clock.Trust)}
}

func TestFetchBuiltins(t *testing.T) {
	srv, host := fetchServer(t)
	sec, err := secrets.Open(filepath.Join(t.TempDir(), "secrets")) // Open makes it 0700
	if err != nil {
		t.Fatal(err)
	}
	if err := sec.Set("API_KEY", []string{host}, "sk-live-12345"); err != nil {
		t.Fatal(err)
	}
	allowed := mustAllow(t, host)
	tests := []struct {
		name, tool string
		op         netpolicy.Operator
		args       string
		code       int    // of the run_tool reply; 0 ok
		want       string // in the reply
	}{
		{"json", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/json"}`, 0,
			`{"status":200,"headers":{`},
		{"json body parsed, Accept set", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/json"}`, 0,
			`"body":{"price":101.5,"accept":"application/json"}`},
		{"response headers, lowercase", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/json"}`, 0, `"x-limit":"42"`},
		{"text", builtinFetchText, allowed, `{"url":"` + srv.URL + `/text"}`, 0, `"body":"hello\nworld"`},
		{"text of a JSON answer is text", builtinFetchText, allowed, `{"url":"` + srv.URL + `/json"}`, 0, `"body":"{ \"price\": 101.5`},
		{"no content", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/empty"}`, 0, `"body":null`},
		{"a JSON body is posted as JSON", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/echo","method":"post","body":{"a":1}}`, 0,
			`"body":{"method":"POST","auth":"","type":"application/json","body":"{\"a\":1}"}`},
		{"a string body is sent as it is", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/echo","method":"PUT","body":"a=1","headers":{"Content-Type":"text/plain"}}`, 0,
			`"type":"text/plain","body":"a=1"`},
		{"a secret reaches its host, redacted in the answer", builtinFetchJSON, allowed,
			`{"url":"` + srv.URL + `/echo","headers":{"Authorization":"Bearer {{secret:API_KEY}}"}}`, 0, `"auth":"Bearer [secret API_KEY]"`},
		{"not JSON", builtinFetchJSON, allowed, `{"url":"` + srv.URL + `/html"}`, 400, `is not JSON (content-type \"text/html\"): \u003chtml\u003eoops`},
		{"an error status", builtinFetchText, allowed, `{"url":"` + srv.URL + `/fail"}`, 400, `answered 503: down for maintenance`},
		{"a redirect to another host", builtinFetchText, allowed, `{"url":"` + srv.URL + `/redirect"}`, 400, `not one of this tool's hosts`},
		{"loopback without --allow-net", builtinFetchJSON, netpolicy.Operator{}, `{"url":"https://` + host + `/json"}`, 400, `loopback address`},
		{"plain http without --allow-net", builtinFetchJSON, netpolicy.Operator{}, `{"url":"` + srv.URL + `/json"}`, 400, `plain http://`},
		{"metadata even on the LAN", builtinFetchJSON, mustAllow(t, "169.254.0.0/16"), `{"url":"http://169.254.169.254/latest"}`, 400, `cloud metadata`},
		{"not a URL", builtinFetchJSON, allowed, `{"url":"ftp://x.example.com/"}`, 400, `only https://`},
		{"no url", builtinFetchJSON, allowed, `{}`, 400, `\"url\" is required`},
		{"a misspelt field", builtinFetchJSON, allowed, `{"uri":"https://x.example.com/"}`, 400, `unknown field \"uri\"`},
		{"a secret for another host", builtinFetchJSON, allowed,
			`{"url":"https://api.example.com/","headers":{"Authorization":"{{secret:API_KEY}}"}}`, 400, `may be sent only to`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := newFetchBuiltin(t, tt.tool, tt.op, sec, netpolicy.Limits{})
			res, err := b.run(context.Background(), json.RawMessage(tt.args))
			got, _ := json.Marshal(answer(tt.tool, res, err, sec))
			switch rep := answer(tt.tool, res, err, sec).(type) {
			case *messages.RunToolReply:
				if tt.code != 0 {
					t.Fatalf("want %d, got %s", tt.code, got)
				}
			case *messages.ErrorReply:
				if rep.Code != tt.code {
					t.Fatalf("want %d, got %s", tt.code, got)
				}
			}
			if !strings.Contains(string(got), tt.want) {
				t.Fatalf("want %s in %s", tt.want, got)
			}
			if strings.Contains(string(got), "sk-live") {
				t.Fatalf("the secret's value is in the reply: %s", got)
			}
		})
	}
}

// A fetch built-in has one rate limit for all its calls, whatever their
// hosts, and its calls end at the guest's deadline.
func TestFetchBuiltinLimits(t *testing.T) {
	srv, host := fetchServer(t)
	b := newFetchBuiltin(t, builtinFetchJSON, mustAllow(t, host, "localhost"), nil, netpolicy.Limits{PerMinute: 2})
	other := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)
	for i, u := range []string{srv.URL, other, srv.URL} {
		_, err := b.run(context.Background(), json.RawMessage(`{"url":"`+u+`/json"}`))
		if i < 2 && err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if i == 2 && (err == nil || !strings.Contains(err.Error(), "rate limited")) {
			t.Fatalf("call %d: %v, want rate limited", i, err)
		}
	}

	b = newFetchBuiltin(t, builtinFetchText, mustAllow(t, host), nil, netpolicy.Limits{})
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := b.run(ctx, json.RawMessage(`{"url":"`+srv.URL+`/slow"}`))
	if err == nil || !strings.Contains(err.Error(), "did not answer within") {
		t.Fatalf("slow: %v", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Fatalf("slow: took %v", d)
	}
}
