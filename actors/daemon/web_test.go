package daemon_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/journal"
)

// The HTTP door against a real daemon: every verb answers over HTTP what
// it answers over NATS, refusals keep their code as the status, the
// journal streams as Server-Sent Events that resume without a gap, and
// what a browser on another site, a rebound DNS name or a client without
// the password sends is refused.

// startWeb runs a daemon with lights a and b and HTTP on a free port.
func startWeb(t *testing.T, change func(*daemon.Config)) (*daemon.Daemon, string) {
	t.Helper()
	d := startWith(t, func(c *daemon.Config) {
		c.HTTP = "127.0.0.1:0"
		if change != nil {
			change(c)
		}
	}, "a", "b")
	return d, d.WebhookURL()
}

// post sends body to path and returns the status and the body.
func post(t *testing.T, req *http.Request) (int, []byte) {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, b
}

func newPost(t *testing.T, url, body string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// comparable is a reply with what differs between two lights fed the
// same commands taken out: the light's name, sequences, ids and times.
func comparable(t *testing.T, b []byte, light string) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("not JSON: %s", b)
	}
	var strip func(any) any
	strip = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				switch k {
				case "seq", "cause", "id", "time", "updated", "ms", "next":
					delete(x, k)
				default:
					x[k] = strip(e)
				}
			}
		case []any:
			for i, e := range x {
				x[i] = strip(e)
			}
		case string:
			if x == light {
				return "LIGHT"
			}
			return strings.ReplaceAll(x, "lumen."+light+".", "lumen.LIGHT.")
		}
		return v
	}
	out, _ := json.Marshal(strip(v))
	return string(out)
}

func TestWebVerbsMirrorNATS(t *testing.T) {
	d, base := startWeb(t, nil)
	nc := connectTo(t, d)
	for _, tc := range []struct {
		verb, body string
		status     int
	}{
		{"get", `{}`, 200},
		{"get", ``, 200}, // no body is {}
		{"fire", `{"transition":"button_click"}`, 200},
		{"fire", `{}`, 400},
		{"fire", `{`, 400},
		{"set_state", `{"name":"off"}`, 200},
		{"set_state", `{"name":"nope"}`, 404},
		{"create_state", `{"name":"teal","r":0,"g":128,"b":128}`, 200},
		{"delete_state", `{"name":"ghost"}`, 404},
		{"set_var", `{"name":"x","value":3}`, 200},
		{"append_rules", `{"rules":[{"from":"teal","on":"button_click","to":"off"}]}`, 200},
		{"delete_rules", `{"ids":["r999"]}`, 404},
		{"apply", `{}`, 400},
		{"led", `{}`, 200},
		{"list_tools", `{}`, 200},
		{"list_sources", `{}`, 200},
		{"sessions", `{}`, 200},
		{"ask", `{"text":"make it cosy"}`, 409},
		{"nope", `{}`, 404},
	} {
		status, got := post(t, newPost(t, base+"/api/v1/lights/a/"+tc.verb, tc.body))
		body := tc.body
		if body == "" {
			body = "{}"
		}
		m, err := nc.Request("lumen.b.cmd."+tc.verb, []byte(body), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		code := 200
		if c := m.Header.Get("Nats-Service-Error-Code"); c != "" {
			code, _ = strconv.Atoi(c)
		}
		if status != tc.status || code != tc.status {
			t.Errorf("%s %s: HTTP %d, NATS %d, want %d: %s", tc.verb, tc.body, status, code, tc.status, got)
		}
		if h, n := comparable(t, got, "a"), comparable(t, m.Data, "b"); h != n {
			t.Errorf("%s %s:\nHTTP %s\nNATS %s", tc.verb, tc.body, h, n)
		}
		if status >= 400 {
			var e messages.ErrorReply
			if json.Unmarshal(got, &e) != nil || e.OK || e.Code != status || e.Error == "" {
				t.Errorf("%s: the error body is not {ok:false,code,error}: %s", tc.verb, got)
			}
		}
	}

	// Bodies are JSON whatever the Content-Type (curl -d sends a form's).
	req := newPost(t, base+"/api/v1/lights/a/set_state", `{"name":"teal"}`)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if status, b := post(t, req); status != 200 || !strings.Contains(string(b), `"state":"teal"`) {
		t.Errorf("a form-typed JSON body: %d %s", status, b)
	}
	// Who asked is journaled with each input: http by default, the
	// caller's Lumen-Who when it gives one, fleet for a fan-out.
	whyBy := func(light string) string {
		t.Helper()
		status, b := post(t, newPost(t, base+"/api/v1/lights/"+light+"/why", `{}`))
		var w messages.WhyReply
		if status != 200 || json.Unmarshal(b, &w) != nil {
			t.Fatalf("why of %s: %d %s", light, status, b)
		}
		return w.Input.By
	}
	if by := whyBy("a"); by != messages.WhoHTTP {
		t.Errorf("an input through the HTTP API is by %q", by)
	}
	req = newPost(t, base+"/api/v1/lights/a/set_state", `{"name":"teal"}`)
	req.Header.Set(messages.HeaderWho, "kiosk")
	if status, b := post(t, req); status != 200 {
		t.Fatalf("set_state with Lumen-Who: %d %s", status, b)
	}
	if by := whyBy("a"); by != "kiosk" {
		t.Errorf("an input with Lumen-Who: kiosk is by %q", by)
	}
	if _, err := nc.Request("lumen.fleet.cmd.set_state", []byte(`{"name":"teal"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 10*time.Second, "the fleet's set_state on b", func() bool { return whyBy("b") == messages.WhoFleet })
	// An unknown light is a 404 naming those that run.
	if status, b := post(t, newPost(t, base+"/api/v1/lights/kichen/fire", `{"transition":"x"}`)); status != 404 || !strings.Contains(string(b), "a, b") {
		t.Errorf("an unknown light: %d %s", status, b)
	}
	if status, _ := post(t, newPost(t, base+"/api/v1/lights/A.B/fire", `{}`)); status != 404 {
		t.Errorf("a light name that is no light's: %d", status)
	}
	// A verb is one token: no subject of another kind can be reached.
	for _, verb := range []string{"fire.x", "*", ">", "fire%20x"} {
		if status, b := post(t, newPost(t, base+"/api/v1/lights/a/"+verb, `{}`)); status != 404 || !strings.Contains(string(b), "set_state") {
			t.Errorf("verb %q: %d %s", verb, status, b)
		}
	}
	// Bodies are bounded: 1 MiB, 8 MiB for talk.
	big := `{"name":"x","value":"` + strings.Repeat("x", 1<<20) + `"}`
	if status, b := post(t, newPost(t, base+"/api/v1/lights/a/set_var", big)); status != 413 {
		t.Errorf("a body over 1 MiB: %d %s", status, b)
	}
	if status, b := post(t, newPost(t, base+"/api/v1/lights/a/talk", strings.Repeat("x", 8<<20+1))); status != 413 {
		t.Errorf("audio over 8 MiB: %d %s", status, b)
	}
	if status, b := post(t, newPost(t, base+"/api/v1/nope", ``)); status != 404 || !strings.Contains(string(b), "openapi.json") {
		t.Errorf("an unknown API path: %d %s", status, b)
	}

	// GET /api/v1/lights: every light, its state and its LED's color, as
	// given (before gamma: teal's duty is 0,56,56).
	res, err := http.Get(base + "/api/v1/lights")
	if err != nil {
		t.Fatal(err)
	}
	var lights struct {
		OK     bool
		Lights []struct {
			Light, State string
			Color        messages.Pixel
		}
	}
	if err := json.NewDecoder(res.Body).Decode(&lights); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !lights.OK || len(lights.Lights) != 2 || lights.Lights[0].Light != "a" || lights.Lights[0].State != "teal" || lights.Lights[0].Color != (messages.Pixel{R: 0, G: 128, B: 128}) {
		t.Errorf("GET /api/v1/lights: %+v", lights)
	}
}

// Security: another site's page cannot drive the light, a name that is
// not this machine's is refused, and with --user every request needs it.
func TestWebRefusals(t *testing.T) {
	_, base := startWeb(t, func(c *daemon.Config) { c.HTTPNames = []string{"KitchenPi.lan"} })
	fire := func(h map[string]string) (int, []byte) {
		req := newPost(t, base+"/api/v1/lights/a/fire", `{"transition":"button_click"}`)
		for k, v := range h {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		return post(t, req)
	}
	for _, tc := range []struct {
		name   string
		h      map[string]string
		status int
	}{
		{"a script, no Origin", nil, 200},
		{"this page", map[string]string{"Origin": base, "Sec-Fetch-Site": "same-origin"}, 200},
		{"another site", map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}, 403},
		{"another site, old browser", map[string]string{"Origin": "http://evil.example"}, 403},
		{"a rebound name", map[string]string{"Host": "evil.example"}, 421},
		{"localhost", map[string]string{"Host": "localhost:1"}, 200},
		{"a name it was given", map[string]string{"Host": "kitchenpi.lan:8642"}, 200},
	} {
		if status, b := fire(tc.h); status != tc.status {
			t.Errorf("%s: %d %s, want %d", tc.name, status, b, tc.status)
		}
	}
	// The page's headers: a strict policy.
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || !strings.Contains(csp, "frame-ancestors 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}

	d, base := startWeb(t, func(c *daemon.Config) { c.User, c.Password = "ann", "s3cret" })
	for _, tc := range []struct {
		user, password string
		status         int
	}{{"", "", 401}, {"ann", "nope", 401}, {"ann", "s3cret", 200}} {
		req, _ := http.NewRequest(http.MethodGet, base+"/api/v1/openapi.json", nil)
		if tc.user != "" {
			req.SetBasicAuth(tc.user, tc.password)
		}
		if status, b := post(t, req); status != tc.status {
			t.Errorf("credentials %q/%q: %d %s", tc.user, tc.password, status, b)
		}
	}
	// A webhook gives its source's token instead, by whatever name its
	// sender reaches the machine.
	nc, err := nats.Connect(d.URL(), nats.UserInfo("ann", "s3cret"))
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	const token = "a-long-random-token-0123456789"
	if m, err := nc.Request("lumen.a.cmd.create_source", []byte(`{"name":"door","type":"webhook","token":"`+token+`","store":{"who":"result.who"}}`), 10*time.Second); err != nil || !bytes.Contains(m.Data, []byte(`"ok":true`)) {
		t.Fatalf("create_source: %v %s", err, m.Data)
	}
	// The source starts after create_source answers: until then its
	// door is unknown (404).
	lumentest.WaitFor(t, 20*time.Second, "a webhook with its token to be accepted", func() bool {
		hook := newPost(t, base+"/hooks/a/door", `{"who":"Ann"}`)
		hook.Host = "myhome.example.net"
		hook.Header.Set("Authorization", "Bearer "+token)
		status, b := post(t, hook)
		if status != http.StatusAccepted && status != http.StatusNotFound {
			t.Fatalf("a webhook with its token: %d %s", status, b)
		}
		return status == http.StatusAccepted
	})
}

// sseEvent is one event of a stream.
type sseEvent struct {
	id         uint64
	event      string
	light, typ string
}

// readEvents reads n events from the stream at url, sending lastID as
// Last-Event-ID when it is not 0.
func readEvents(t *testing.T, url string, lastID uint64, n int, during func()) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastID != 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatUint(lastID, 10))
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if ct := res.Header.Get("Content-Type"); res.StatusCode != 200 || ct != "text/event-stream" {
		t.Fatalf("GET %s: %d %s", url, res.StatusCode, ct)
	}
	if during != nil {
		done := make(chan struct{})
		go func() { defer close(done); during() }()
		defer func() { <-done }() // it ends before the test does
	}
	var out []sseEvent
	var e sseEvent
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(nil, 1<<20)
	for len(out) < n && sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			e.id, _ = strconv.ParseUint(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			e.event = line[7:]
		case strings.HasPrefix(line, "data: "):
			var env messages.Envelope
			if err := json.Unmarshal([]byte(line[6:]), &env); err != nil {
				t.Fatalf("data is not an envelope: %s", line)
			}
			e.light, e.typ = env.Light, env.Type
		case line == "" && e.id != 0:
			out = append(out, e)
			e = sseEvent{}
		}
	}
	if len(out) < n {
		t.Fatalf("%d of %d events from %s: %v", len(out), n, url, sc.Err())
	}
	return out
}

// The events of a light stream as SSE; a client that drops and comes
// back with Last-Event-ID gets every event after it, none twice, even
// those journaled while it was away; a bare input from `nats pub` comes
// in an envelope.
func TestWebEvents(t *testing.T) {
	d, base := startWeb(t, nil)
	nc := connectTo(t, d)
	fire := func(light string) {
		if _, err := nc.Request("lumen."+light+".cmd.fire", []byte(`{"transition":"button_click"}`), 10*time.Second); err != nil {
			t.Error(err)
		}
	}
	url := base + "/api/v1/lights/a/events"
	// A click: its input and at least its state output.
	first := readEvents(t, url, 0, 2, func() { fire("b"); fire("a") })
	if first[0].event != "in.fired" || first[0].light != "a" || first[1].event != "out.state" {
		t.Errorf("the first events: %+v", first)
	}
	last := first[len(first)-1].id
	// Away: more clicks, and a bare input.
	fire("a")
	fire("a")
	if err := nc.Publish("lumen.a.evt.in.fired", []byte(`{"transition":"button_click"}`)); err != nil {
		t.Fatal(err)
	}
	fire("a") // answered once the bare input before it is applied
	want := journalSeqs(t, nc, "lumen.a.evt.>", last)
	if len(want) < 6 {
		t.Fatalf("the journal has %d events of a after %d", len(want), last)
	}
	again := readEvents(t, url, last, len(want), nil)
	var got []uint64
	for _, e := range again {
		got = append(got, e.id)
		if e.light != "a" {
			t.Errorf("an event of %s in a's stream", e.light)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("after Last-Event-ID %d: %v, want %v", last, got, want)
	}
	// ?since does the same; every light's stream has b's too.
	all := readEvents(t, base+"/api/v1/events?since="+strconv.FormatUint(first[0].id-3, 10), 0, 3, nil)
	if all[0].id != first[0].id-2 {
		t.Errorf("?since: first id %d, want %d", all[0].id, first[0].id-2)
	}
	// Live, every light's.
	live := readEvents(t, base+"/api/v1/events", 0, 2, func() { fire("b") })
	if live[0].light != "b" || live[0].event != "in.fired" {
		t.Errorf("every light's events, live: %+v", live)
	}
	if res, err := http.Get(base + "/api/v1/lights/ghost/events"); err != nil || res.StatusCode != 404 {
		t.Errorf("events of an unknown light: %v %v", res.StatusCode, err)
	}
}

// journalSeqs are the sequences of the events matching filter after seq.
func journalSeqs(t *testing.T, nc *nats.Conn, filter string, after uint64) []uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var seqs []uint64
	if err := journal.New(js).Replay(context.Background(), filter, after+1, 0, func(m journal.Msg) error {
		seqs = append(seqs, m.Seq)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return seqs
}

// The page is rendered with every light in it, before any script runs;
// its script and style are served from the binary.
func TestWebPage(t *testing.T) {
	d, base := startWeb(t, nil)
	nc := connectTo(t, d)
	if _, err := nc.Request("lumen.a.cmd.fire", []byte(`{"transition":"button_click"}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, want := range []string{`data-light="a"`, `data-light="b"`, `<b class="state">red</b>`, `fill="rgb(`, `/static/page.js`} {
		if !bytes.Contains(page, []byte(want)) {
			t.Errorf("the page lacks %s:\n%s", want, page)
		}
	}
	if bytes.Contains(page, []byte("http://")) || bytes.Contains(page, []byte("https://")) {
		t.Errorf("the page refers to another site:\n%s", page)
	}
	for _, p := range []string{"/static/page.js", "/static/page.css", "/api/v1/openapi.json"} {
		res, err := http.Get(base + p)
		if err != nil || res.StatusCode != 200 {
			t.Errorf("GET %s: %v %v", p, res.StatusCode, err)
			continue
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if p == "/api/v1/openapi.json" && !json.Valid(b) {
			t.Errorf("openapi.json is not JSON")
		}
	}
}

// ledEvents reads the first n `led` events of the stream at url, calling
// during once the stream is open.
func ledEvents(t *testing.T, url string, n int, during func()) []daemonLED {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	if during != nil {
		done := make(chan struct{})
		go func() { defer close(done); during() }()
		defer func() { <-done }()
	}
	var out []daemonLED
	sc := bufio.NewScanner(res.Body)
	for len(out) < n && sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var e daemonLED
			if err := json.Unmarshal([]byte(data), &e); err != nil {
				t.Fatalf("led data %s: %v", data, err)
			}
			e.At = time.Now()
			out = append(out, e)
		}
	}
	if len(out) < n {
		t.Fatalf("%d of %d led events from %s", len(out), n, url)
	}
	return out
}

type daemonLED struct {
	Light, State string
	Pixels       []messages.Pixel
	At           time.Time `json:"-"`
}

// The LED as SSE: what it shows now, then each new state, then an
// animation's frames at most 30 a second; every light's at /api/v1/led.
func TestWebLED(t *testing.T) {
	d, base := startWeb(t, nil)
	nc := connectTo(t, d)
	req := func(light, verb, body string) {
		if _, err := nc.Request("lumen."+light+".cmd."+verb, []byte(body), 10*time.Second); err != nil {
			t.Error(err)
		}
	}
	got := ledEvents(t, base+"/api/v1/lights/a/led", 2, func() { req("a", "fire", `{"transition":"button_click"}`) })
	if got[0].Light != "a" || got[0].State != "off" || got[1].State != "red" || got[1].Pixels[0].R == 0 {
		t.Errorf("a's LED: %+v", got)
	}
	all := ledEvents(t, base+"/api/v1/led", 2, nil)
	if lights := []string{all[0].Light, all[1].Light}; !slices.Contains(lights, "a") || !slices.Contains(lights, "b") {
		t.Errorf("every LED: %+v", all)
	}
	// An animation at 100 frames a second reaches the stream at 30.
	req("a", "create_state", `{"name":"pulse","r":"frame % 256","g":0,"b":0,"speed":10}`)
	frames := ledEvents(t, base+"/api/v1/lights/a/led", 31, func() { req("a", "set_state", `{"name":"pulse"}`) })
	if span := frames[30].At.Sub(frames[1].At); span < 800*time.Millisecond {
		t.Errorf("30 frames in %v: more than 30 a second", span)
	}
	if res, err := http.Get(base + "/api/v1/lights/ghost/led"); err != nil || res.StatusCode != 404 {
		t.Errorf("the LED of an unknown light: %v", err)
	}
}

// The configuration as YAML: read as lumen export prints it, applied as
// lumen apply -f does, a mistake answered with its line.
func TestWebConfig(t *testing.T) {
	_, base := startWeb(t, nil)
	res, err := http.Get(base + "/api/v1/lights/a/config")
	if err != nil {
		t.Fatal(err)
	}
	yaml, _ := io.ReadAll(res.Body)
	res.Body.Close()
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/yaml") || !bytes.Contains(yaml, []byte("states:")) {
		t.Fatalf("GET config: %d %s\n%s", res.StatusCode, res.Header.Get("Content-Type"), yaml)
	}
	put := func(query, body string) (int, map[string]any) {
		req, _ := http.NewRequest(http.MethodPut, base+"/api/v1/lights/a/config"+query, strings.NewReader(body))
		status, b := post(t, req)
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("PUT config%s: %s", query, b)
		}
		return status, m
	}
	for _, tc := range []struct {
		name, query, body string
		status            int
		line              float64
	}{
		{"a YAML mistake", "", "states:\n  - name: teal\n    r: [0, 128\n", 400, 3},
		{"a refusal, at its field's line", "", "states:\n  - name: teal\n    r: 0\n    g: 0\n    b: 0\nrules:\n  - from: teal\n    on: click\n    to: nowhere\n", 404, 7},
		{"an empty one", "", "", 400, 0},
		{"a dry run", "?dry_run=1", "states:\n  - name: teal\n    r: 0\n    g: 0\n    b: 0\n", 200, 0},
	} {
		status, m := put(tc.query, tc.body)
		if status != tc.status || (tc.line != 0 && m["line"] != tc.line) {
			t.Errorf("%s: %d %v, want %d at line %v", tc.name, status, m, tc.status, tc.line)
		}
	}
	if status, m := put("", strings.Replace(string(yaml), "states:\n", "states:\n  - name: teal\n    r: 0\n    g: 1\n    b: 2\n", 1)); status != 200 || !strings.Contains(fmt.Sprint(m["changes"]), "teal") {
		t.Errorf("apply: %d %v", status, m)
	}
}

// A state's preview: its frames rendered without applying it.
func TestWebPreview(t *testing.T) {
	d, base := startWeb(t, nil)
	nc := connectTo(t, d)
	if _, err := nc.Request("lumen.a.cmd.create_state", []byte(`{"name":"pulse","r":"frame * 10 % 256","g":0,"b":0,"speed":40}`), 10*time.Second); err != nil {
		t.Fatal(err)
	}
	res, err := http.Get(base + "/api/v1/lights/a/states/pulse/preview?frames=5")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		OK     bool
		MS     int
		Frames [][]messages.Pixel
	}
	if err := json.NewDecoder(res.Body).Decode(&p); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if !p.OK || p.MS != 40 || len(p.Frames) != 5 || p.Frames[0][0] == p.Frames[4][0] {
		t.Errorf("preview of pulse: %+v", p)
	}
	if g := getJSONOf(t, nc, "a"); !strings.Contains(g, `"state":"off"`) {
		t.Errorf("a preview applied the state: %s", g)
	}
	for _, u := range []string{"/api/v1/lights/a/states/ghost/preview", "/api/v1/lights/ghost/states/pulse/preview"} {
		if res, err := http.Get(base + u); err != nil || res.StatusCode != 404 {
			t.Errorf("GET %s: %v %v", u, res.StatusCode, err)
		}
	}
	if res, err := http.Get(base + "/api/v1/lights/a/states/pulse/preview?frames=100000"); err != nil || res.StatusCode != 400 {
		t.Errorf("too many frames: %v %v", res.StatusCode, err)
	}
}

func getJSONOf(t *testing.T, nc *nats.Conn, light string) string {
	t.Helper()
	m, err := nc.Request("lumen."+light+".cmd.get", []byte(`{}`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	return string(m.Data)
}
