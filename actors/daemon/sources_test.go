package daemon_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// Polled sources against a remote API (an httptest server), on the real
// clock: the times of the backoff are datasource's and actors/source's
// tests, on a fake one.

// startPolling starts the demo light allowed to reach api, with a
// minimum interval short enough for a test.
func startPolling(t *testing.T, api *httptest.Server) (*nats.Conn, string) {
	t.Helper()
	host := strings.TrimPrefix(api.URL, "http://")
	d := startWith(t, func(c *daemon.Config) { c.AllowNet, c.SourceMinInterval = []string{host}, 100*time.Millisecond }, "demo")
	return connectTo(t, d), host
}

// sourceErrors collects the light's error events from now on; the func
// it returns takes the next one, failing unless it is a source's that
// kept the last values.
func sourceErrors(t *testing.T, nc *nats.Conn) func(what string) string {
	t.Helper()
	errs := make(chan *nats.Msg, 64)
	sub, err := nc.ChanSubscribe("lumen.demo.evt.out.error", errs)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sub.Unsubscribe() })
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return func(what string) string {
		t.Helper()
		select {
		case m := <-errs:
			if !strings.Contains(string(m.Data), `"kind":"source"`) || !strings.Contains(string(m.Data), "keeps the last values") {
				t.Fatalf("%s: error event %s", what, m.Data)
			}
			return string(m.Data)
		case <-time.After(20 * time.Second):
			t.Fatalf("%s: no error event", what)
		}
		return ""
	}
}

// The seed's Bitcoin flow: a tool fetches a price, a poll source stores it
// (keeping btc_price_prev) and fires price_updated, and rules turn the
// light up or down. When the API fails, the light keeps its last values
// and keeps answering.
func TestPollSourceBitcoin(t *testing.T) {
	lumentest.NeedGuest(t)
	var price, fails atomic.Int64
	var failing atomic.Bool
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/price" {
			http.NotFound(w, r)
			return
		}
		if failing.Load() {
			fails.Add(1)
			http.Error(w, "down for maintenance", http.StatusInternalServerError)
			return
		}
		fmt.Fprintf(w, `{"price":%d}`, 100+price.Add(1))
	}))
	defer api.Close()
	nc, host := startPolling(t, api)

	defineTool(t, nc, map[string]any{"name": "btc_price", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/price');\nif (r.status !== 200) throw new Error('status ' + r.status);\nreturn await r.json();", host)})
	mustOK(t, nc, messages.VerbCreateState, `{"states":[{"name":"up","r":0,"g":255,"b":0},{"name":"down","r":255,"g":0,"b":0}]}`)
	mustOK(t, nc, messages.VerbAppendRules, `{"rules":[
		{"from":"*","on":"price_updated","to":"up","condition":"getData('btc_price_prev') !== undefined && getData('btc_price') > getData('btc_price_prev')"},
		{"from":"*","on":"price_updated","to":"down","condition":"!(getData('btc_price_prev') !== undefined && getData('btc_price') > getData('btc_price_prev'))"}]}`)

	for _, tt := range []struct{ name, body, code string }{
		// The operator's minimum applies before anything is journaled.
		{"an interval below the minimum", `{"name":"btc","interval_ms":50,"fetch":{"tool":"btc_price"},"store":{"btc_price":"result.price"},"fires":"price_updated"}`, "400"},
		// The tool must exist.
		{"an unknown tool", `{"name":"btc","interval_ms":200,"fetch":{"tool":"nope"},"store":{"btc_price":"result.price"}}`, "404"},
	} {
		if body, code := request(t, nc, messages.VerbCreateSource, tt.body); code != tt.code {
			t.Fatalf("%s: %s %s, want %s", tt.name, code, body, tt.code)
		}
	}
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"btc","interval_ms":200,"fetch":{"tool":"btc_price"},"store":{"btc_price":"result.price"},"fires":"price_updated"}`)
	if body, _ := request(t, nc, messages.VerbListSources, `{}`); !strings.Contains(string(body), `"btc"`) {
		t.Fatalf("list_sources: %s", body)
	}
	// A tool a source uses cannot be deleted.
	if body, code := request(t, nc, messages.VerbDeleteTool, `{"name":"btc_price"}`); code != "409" {
		t.Fatalf("delete a tool in use: %s %s", code, body)
	}

	get := func() map[string]any { return mustOK(t, nc, messages.VerbGet, `{}`) }
	var model map[string]any
	lumentest.WaitFor(t, 60*time.Second, "the light to go up with btc_price_prev kept", func() bool {
		model = get()
		vars, _ := model["vars"].(map[string]any)
		cur, ok1 := vars["btc_price"].(float64)
		prev, ok2 := vars["btc_price_prev"].(float64)
		return model["state"] == "up" && ok1 && ok2 && cur > prev
	})
	if src, _ := model["sources"].([]any); len(src) != 1 {
		t.Fatalf("get: sources %v", model["sources"])
	}

	// The API fails: no more updates, the light keeps its values and
	// answers; the failure is journaled as an error event of the source.
	nextError := sourceErrors(t, nc)
	failing.Store(true)
	lumentest.WaitFor(t, 60*time.Second, "a failed fetch", func() bool { return fails.Load() >= 1 })
	nextError("the failed run")
	before := get()["vars"]
	// It keeps trying, and each failure keeps the values.
	n := fails.Load()
	lumentest.WaitFor(t, 30*time.Second, "two more tries of the failing source", func() bool { return fails.Load() >= n+2 })
	after := get()
	if fmt.Sprint(after["vars"]) != fmt.Sprint(before) || after["state"] != "up" {
		t.Fatalf("after failures: vars %v (before %v), state %v", after["vars"], before, after["state"])
	}
	mustOK(t, nc, messages.VerbFire, `{"transition":"nothing_here"}`)

	// Deleting the source stops it.
	mustOK(t, nc, messages.VerbDeleteSource, `{"name":"btc"}`)
	if body, code := request(t, nc, messages.VerbDeleteSource, `{"name":"btc"}`); code != "404" {
		t.Fatalf("delete a deleted source: %s %s", code, body)
	}
}

// The seed's fault cases for a polled source: the API hangs, then answers
// garbage, then recovers. Each failure keeps the last values, journals an
// error event and backs off, and the light answers at once meanwhile.
func TestPollSourceFaults(t *testing.T) {
	lumentest.NeedGuest(t)
	var mode atomic.Value // "ok", "hang", "garbage"
	mode.Store("ok")
	var price, hanging atomic.Int64
	release := make(chan struct{})
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch mode.Load() {
		case "hang":
			hanging.Add(1)
			select {
			case <-release:
			case <-r.Context().Done():
			}
		case "garbage":
			fmt.Fprint(w, "<html><body>Service Unavailable</body></html>")
		default:
			fmt.Fprintf(w, `{"price":%d}`, 100+price.Add(1))
		}
	}))
	defer api.Close()
	defer close(release)
	nc, host := startPolling(t, api)
	defineTool(t, nc, map[string]any{"name": "btc_price", "hosts": []string{host},
		"code": fmt.Sprintf("const r = await fetch('http://%s/price');\nreturn await r.json();", host)})
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"btc","interval_ms":200,"fetch":{"tool":"btc_price"},"store":{"btc_price":"result.price"},"fires":"price_updated"}`)
	vars := func() string { return fmt.Sprint(mustOK(t, nc, messages.VerbGet, `{}`)["vars"]) }
	lumentest.WaitFor(t, 60*time.Second, "the first price", func() bool { return strings.Contains(vars(), "btc_price:") })
	nextError := sourceErrors(t, nc)

	mode.Store("hang")
	// Runs take turns: with one waiting on the API, the one before has
	// stored its values.
	lumentest.WaitFor(t, 20*time.Second, "a run to wait on the API", func() bool { return hanging.Load() > 0 })
	before := vars()
	start := time.Now()
	mustOK(t, nc, messages.VerbFire, `{"transition":"anything"}`)
	if d := time.Since(start); d > time.Second {
		t.Fatalf("the light took %v to answer while its source hangs", d)
	}
	if e := nextError("hang"); !strings.Contains(e, "did not answer") && !strings.Contains(e, "time") {
		t.Fatalf("hang: error event %s does not say it timed out", e)
	}
	if after := vars(); after != before {
		t.Fatalf("after the hang: vars %s, before %s", after, before)
	}

	mode.Store("garbage")
	if e := nextError("garbage"); !strings.Contains(e, "JSON") {
		t.Fatalf("garbage: error event %s does not say the answer is not JSON", e)
	}
	if after := vars(); after != before {
		t.Fatalf("after garbage: vars %s, before %s", after, before)
	}

	mode.Store("ok")
	lumentest.WaitFor(t, 30*time.Second, "the source to recover", func() bool { return vars() != before })
	if v := vars(); !strings.Contains(v, "btc_price_prev:") {
		t.Fatalf("after recovering: vars %s", v)
	}
}
