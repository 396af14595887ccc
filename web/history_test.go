package web_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// historyReply is the history verb's reply, as the tests read it.
type historyReply struct {
	Changes []struct {
		Seq     uint64 `json:"seq"`
		By      string `json:"by"`
		Summary string `json:"summary"`
	} `json:"changes"`
}

// historyOf is light demo's history over NATS.
func historyOf(t *testing.T, nc *nats.Conn) historyReply {
	t.Helper()
	m, err := nc.Request("lumen.demo.cmd.history", []byte(`{}`), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var h historyReply
	if err := json.Unmarshal(m.Data, &h); err != nil || len(h.Changes) == 0 {
		t.Fatalf("history: %v %s", err, m.Data)
	}
	return h
}

// historyMutate sends verb over NATS and returns the sequence of its input.
func historyMutate(t *testing.T, nc *nats.Conn, verb, body string, header nats.Header) uint64 {
	t.Helper()
	m, err := nc.RequestMsg(&nats.Msg{Subject: "lumen.demo.cmd." + verb, Data: []byte(body), Header: header}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		OK  bool   `json:"ok"`
		Seq uint64 `json:"seq"`
	}
	if err := json.Unmarshal(m.Data, &r); err != nil || !r.OK || r.Seq == 0 {
		t.Fatalf("%s %s: %v %s", verb, body, err, m.Data)
	}
	return r.Seq
}

// httpGet answers GET url: its status and JSON body.
func httpGet(t *testing.T, url string) (int, map[string]any) {
	t.Helper()
	return httpJSON(t, http.MethodGet, url, "")
}

// httpDo sends body (JSON) to url with method and answers the status
// and the reply as it came.
func httpDo(t *testing.T, method, url, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Body.Close()
	b, _ := io.ReadAll(r.Body)
	return r.StatusCode, b
}

// httpJSON is httpDo, the reply decoded.
func httpJSON(t *testing.T, method, url, body string) (int, map[string]any) {
	t.Helper()
	status, b := httpDo(t, method, url, body)
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("%s %s: %d %s", method, url, status, b)
	}
	return status, out
}

// GET /api/v1/lights/{light}/diff: a change, two inputs, the first
// change from nothing, and each kind of bad request.
func TestHistoryDiff(t *testing.T) {
	t.Parallel()
	d := lumentest.Start(t, t.TempDir(), "--http", "127.0.0.1:0", "--hardware", "sim")
	page := d.Page(t)
	nc := lumentest.Connect(t, d.URL)
	add := historyMutate(t, nc, "create_state", `{"name":"teal","r":0,"g":128,"b":128}`, nil)
	del := historyMutate(t, nc, "delete_state", `{"name":"teal"}`, nil)
	fired := historyMutate(t, nc, "fire", `{"transition":"button_click"}`, nil)
	h := historyOf(t, nc)
	first, beforeAdd := h.Changes[0].Seq, h.Changes[len(h.Changes)-3].Seq
	diffURL := page + "api/v1/lights/demo/diff"

	for _, c := range []struct {
		name     string
		query    string
		status   int
		from, to string
		diff     []string // lines the diff has
		error    string   // what the error says
	}{
		{"a change", fmt.Sprintf("?seq=%d", add), 200, "light demo after input " + fmt.Sprint(beforeAdd), "light demo after input " + fmt.Sprint(add),
			[]string{"+  - name: teal", "+    g: 128", "--- light demo after input", "+++ light demo after input"}, ""},
		{"a deletion", fmt.Sprintf("?seq=%d", del), 200, "light demo after input " + fmt.Sprint(add), "light demo after input " + fmt.Sprint(del),
			[]string{"-  - name: teal", "-    b: 128"}, ""},
		{"two inputs", fmt.Sprintf("?seq=%d&to=%d", add, fired), 200, "light demo after input " + fmt.Sprint(add), "light demo after input " + fmt.Sprint(fired),
			[]string{"-  - name: teal"}, ""},
		{"the same configuration", fmt.Sprintf("?seq=%d&to=%d", del, fired), 200, "light demo after input " + fmt.Sprint(del), "light demo after input " + fmt.Sprint(fired), nil, ""},
		{"the first change, from nothing", fmt.Sprintf("?seq=%d", first), 200, "light demo before any configuration", "light demo after input " + fmt.Sprint(first),
			[]string{"+states:"}, ""},
		{"no seq", "", 400, "", "", nil, "give ?seq=N"},
		{"a seq that is no number", "?seq=abc", 400, "", "", nil, `seq "abc" is not a sequence`},
		{"seq 0", "?seq=0", 400, "", "", nil, `seq "0" is not a sequence`},
		{"a bad to", fmt.Sprintf("?seq=%d&to=-1", add), 400, "", "", nil, `to "-1" is not a sequence`},
		{"an input that is no change", fmt.Sprintf("?seq=%d", fired), 404, "", "", nil, fmt.Sprintf("input %d changed no configuration of light demo", fired)},
		{"a seq past the journal", fmt.Sprintf("?seq=%d&to=%d", add, 1<<40), 404, "", "", nil, "is no event of light demo"},
	} {
		t.Run(c.name, func(t *testing.T) {
			status, r := httpGet(t, diffURL+c.query)
			if status != c.status {
				t.Fatalf("status %d, want %d: %v", status, c.status, r)
			}
			if c.error != "" {
				if e, _ := r["error"].(string); r["ok"] != false || !strings.Contains(e, c.error) {
					t.Errorf("the error is %q, want it to say %q", e, c.error)
				}
				return
			}
			diff, _ := r["diff"].(string)
			if r["ok"] != true || r["from"] != c.from || r["to"] != c.to {
				t.Errorf("from %q to %q, want %q to %q", r["from"], r["to"], c.from, c.to)
			}
			if c.diff == nil && diff != "" {
				t.Errorf("the diff of the same configuration is\n%s", diff)
			}
			for _, want := range c.diff {
				if !strings.Contains(diff, want) {
					t.Errorf("the diff lacks %q:\n%s", want, diff)
				}
			}
		})
	}

	// An unknown light, as the other per-light endpoints.
	status, r := httpGet(t, page+"api/v1/lights/nosuch/diff?seq=1")
	if e, _ := r["error"].(string); status != 404 || !strings.Contains(e, `no light named "nosuch"`) {
		t.Errorf("an unknown light: %d %v", status, r)
	}
}

// At a hub, the diff of a light of a Pi, through the hub's door.
func TestHistoryDiffAtAHub(t *testing.T) {
	t.Parallel()
	hub, nc := startHouse(t, []string{"kitchen"})
	var seq uint64
	lumentest.WaitFor(t, 30*time.Second, "kitchen at the hub", func() bool {
		m, err := nc.Request("lumen.kitchen.cmd.create_state", []byte(`{"name":"teal","r":0,"g":128,"b":128}`), 5*time.Second)
		if err != nil {
			return false
		}
		var r struct {
			OK  bool   `json:"ok"`
			Seq uint64 `json:"seq"`
		}
		if json.Unmarshal(m.Data, &r) != nil || !r.OK {
			return false
		}
		seq = r.Seq
		return true
	})
	status, r := httpGet(t, fmt.Sprintf("%sapi/v1/lights/kitchen/diff?seq=%d", hub.Page(t), seq))
	if d, _ := r["diff"].(string); status != 200 || !strings.Contains(d, "+  - name: teal") {
		t.Errorf("the diff at the hub: %d %v", status, r)
	}
}
