package web_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// logReply is GET …/log's answer.
type logReply struct {
	OK      bool   `json:"ok"`
	Error   string `json:"error"`
	Next    uint64 `json:"next"`
	Entries []struct {
		Seq   uint64 `json:"seq"`
		Light string `json:"light"`
		Dir   string `json:"dir"`
		Type  string `json:"type"`
		Kind  string `json:"kind"`
		By    string `json:"by"`
		Cause uint64 `json:"cause"`
		Text  string `json:"text"`
		Error bool   `json:"error"`
	} `json:"entries"`
}

// logGet asks url and decodes the answer, with its status.
func logGet(t *testing.T, url string) (int, logReply) {
	t.Helper()
	status, b := httpDo(t, http.MethodGet, url, "")
	var r logReply
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("GET %s: %v: %s", url, err, b)
	}
	return status, r
}

// logDaemon starts a daemon with HTTP and gives it a few events of each
// kind: clicks, a variable, a rule that throws.
func logDaemon(t *testing.T) (*lumentest.Daemon, *nats.Conn, string) {
	t.Helper()
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0", "--hardware", "sim")
	nc := lumentest.Connect(t, d.URL)
	request(t, nc, "append_rules", `{"rules":[{"id":"boom","from":"*","on":"boom","to":"red","condition":"undefinedFn()"}]}`)
	for i := range 12 {
		request(t, nc, "fire", `{"transition":"button_click"}`)
		request(t, nc, "set_var", `{"name":"n","value":`+strconv.Itoa(i)+`}`)
	}
	if m, err := nc.Request("lumen.demo.cmd.fire", []byte(`{"transition":"boom"}`), 10*time.Second); err != nil {
		t.Fatalf("fire boom: %v", err)
	} else {
		t.Logf("boom: %s", m.Data)
	}
	return d, nc, strings.TrimSuffix(d.Page(t), "/")
}

// demoEvents counts the light's events in the journal.
func demoEvents(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	str, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	info, err := str.Info(ctx, jetstream.WithSubjectFilter("lumen.demo.evt.>"))
	if err != nil {
		t.Fatal(err)
	}
	var n uint64
	for _, c := range info.State.Subjects {
		n += c
	}
	return n
}

// Paging with before and next gives every event once, newest first, in
// words; kinds keeps the kinds asked for.
func TestLogEndpoint(t *testing.T) {
	t.Parallel()
	_, nc, base := logDaemon(t)
	total := demoEvents(t, nc)
	for _, path := range []string{"/api/v1/log", "/api/v1/lights/demo/log", "/api/v1/lights/Demo/log"} {
		seen := map[uint64]bool{}
		var last uint64
		url := base + path + "?limit=7"
		for pages := 0; ; pages++ {
			if pages > 100 {
				t.Fatalf("%s: no end to the pages", path)
			}
			code, r := logGet(t, url)
			if code != 200 || !r.OK {
				t.Fatalf("%s: %d %s", url, code, r.Error)
			}
			if len(r.Entries) > 7 {
				t.Fatalf("%s: %d entries for limit 7", url, len(r.Entries))
			}
			for _, e := range r.Entries {
				if seen[e.Seq] {
					t.Errorf("%s: %d twice", path, e.Seq)
				}
				if last != 0 && e.Seq >= last {
					t.Errorf("%s: %d after %d: not newest first", path, e.Seq, last)
				}
				seen[e.Seq], last = true, e.Seq
				if e.Text == "" || strings.ContainsAny(e.Text, "{}") || e.Light != "demo" || (e.Dir != "in" && e.Dir != "out") {
					t.Errorf("%s: entry %+v", path, e)
				}
			}
			if r.Next == 0 {
				break
			}
			url = base + path + "?limit=7&before=" + strconv.FormatUint(r.Next, 10)
		}
		if uint64(len(seen)) != total {
			t.Errorf("%s: %d events paged, the journal has %d", path, len(seen), total)
		}
	}

	// The newest page by default, 50 of them.
	_, r := logGet(t, base+"/api/v1/log")
	if len(r.Entries) != 50 || r.Next == 0 {
		t.Errorf("the first page has %d entries and next %d", len(r.Entries), r.Next)
	}
	// kinds.
	for kinds, ok := range map[string]func(dir, kind string, err bool) bool{
		"error":       func(dir, kind string, err bool) bool { return kind == "error" && err && dir == "out" },
		"input":       func(dir, kind string, err bool) bool { return kind == "input" && dir == "in" && !err },
		"state,error": func(dir, kind string, err bool) bool { return dir == "out" && (kind == "state" || kind == "error") },
	} {
		code, r := logGet(t, base+"/api/v1/lights/demo/log?limit=500&kinds="+kinds)
		if code != 200 || len(r.Entries) == 0 {
			t.Fatalf("kinds=%s: %d, %d entries", kinds, code, len(r.Entries))
		}
		for _, e := range r.Entries {
			if !ok(e.Dir, e.Kind, e.Error) {
				t.Errorf("kinds=%s: %+v", kinds, e)
			}
		}
	}
	_, errs := logGet(t, base+"/api/v1/lights/demo/log?kinds=error")
	if len(errs.Entries) != 1 || !strings.Contains(errs.Entries[0].Text, "boom") {
		t.Errorf("the errors: %+v", errs.Entries)
	}

	// Bad parameters are a 400 that says what is wrong; an unknown light
	// a 404 that names the lights.
	for q, says := range map[string]string{
		"before=x": "before", "before=0": "before", "limit=0": "limit", "limit=501": "limit",
		"limit=many": "limit", "kinds=input,nope": "nope",
	} {
		code, r := logGet(t, base+"/api/v1/log?"+q)
		if code != 400 || r.OK || !strings.Contains(r.Error, says) {
			t.Errorf("?%s: %d %q", q, code, r.Error)
		}
	}
	if code, r := logGet(t, base+"/api/v1/lights/nosuch/log"); code != 404 || !strings.Contains(r.Error, "demo") {
		t.Errorf("an unknown light: %d %q", code, r.Error)
	}
}

// The event stream with ?words=1 adds each event's words and kind; the
// default stream is the envelope as it is.
func TestEventsWords(t *testing.T) {
	t.Parallel()
	_, _, base := logDaemon(t)
	data := func(url string) map[string]any {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		if res.StatusCode != 200 {
			b, _ := io.ReadAll(res.Body)
			t.Fatalf("%s: %d %s", url, res.StatusCode, b)
		}
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if line, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var v map[string]any
				if err := json.Unmarshal([]byte(line), &v); err != nil {
					t.Fatalf("%s: %v: %s", url, err, line)
				}
				return v
			}
		}
		t.Fatalf("%s: no event", url)
		return nil
	}
	w := data(base + "/api/v1/events?words=1&since=1")
	if text, _ := w["text"].(string); text == "" || strings.ContainsAny(text, "{}") || w["kind"] == nil || w["v"] == nil {
		t.Errorf("with words: %v", w)
	}
	plain := data(base + "/api/v1/lights/demo/events?since=1")
	if _, ok := plain["text"]; ok {
		t.Errorf("without words: %v", plain)
	}
	if code, r := logGet(t, base+"/api/v1/events?words=maybe"); code != 400 || !strings.Contains(r.Error, "words") {
		t.Errorf("words=maybe: %d %q", code, r.Error)
	}
}
