package daemon_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// A custom transition (seed 000 §3): a JavaScript predicate, polled in the
// tool sandbox, fires its transition each time it turns from false to true,
// and only then.
func TestCustomTransition(t *testing.T) {
	lumentest.NeedGuest(t)
	var open atomic.Bool
	var polls, watches atomic.Int64
	api := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/watch" {
			watches.Add(1)
		} else {
			polls.Add(1)
		}
		fmt.Fprintf(w, `{"open":%v}`, open.Load())
	}))
	defer api.Close()
	nc, host := startPolling(t, api)
	get := func() map[string]any { return mustOK(t, nc, messages.VerbGet, `{}`) }

	mustOK(t, nc, messages.VerbCreateState, `{"name":"alert","r":255,"g":80,"b":0}`)
	mustOK(t, nc, messages.VerbAppendRules, `{"rules":[
		{"from":"*","on":"door_open","to":"alert","action":"setData('opened', (getData('opened') || 0) + 1)"}]}`)
	mustOK(t, nc, messages.VerbDefineTransition, fmt.Sprintf(`{"name":"door_open",
		"code":"const r = await fetch('http://%s/door'); return (await r.json()).open",
		"poll_interval_ms":200,"hosts":[%q]}`, host, host))

	// The predicate is a tool, and its poll a source of type transition.
	if body, _ := request(t, nc, messages.VerbListSources, `{}`); !strings.Contains(string(body), `"type":"transition"`) {
		t.Fatalf("list_sources: %s", body)
	}
	if body, code := runTool(t, nc, "door_open", ""); code != "" || !strings.Contains(string(body), `"result":false`) {
		t.Fatalf("run_tool door_open: %s %s", code, body)
	}

	lumentest.WaitFor(t, 60*time.Second, "the predicate to be polled", func() bool { return polls.Load() >= 4 })
	if g := get(); g["state"] == "alert" {
		t.Fatal("fired while the predicate was false")
	}
	open.Store(true)
	lumentest.WaitFor(t, 20*time.Second, "door_open to fire", func() bool { return get()["state"] == "alert" })
	// Still true for a while: no second fire.
	n := polls.Load()
	lumentest.WaitFor(t, 20*time.Second, "more polls", func() bool { return polls.Load() >= n+3 })
	if v := get()["vars"].(map[string]any)["opened"]; v != 1.0 {
		t.Fatalf("fired %v times while the predicate stayed true, want 1", v)
	}
	open.Store(false)
	n = polls.Load()
	lumentest.WaitFor(t, 20*time.Second, "the predicate to be seen false", func() bool { return polls.Load() >= n+3 })
	open.Store(true)
	lumentest.WaitFor(t, 20*time.Second, "the second opening", func() bool { return get()["vars"].(map[string]any)["opened"] == 2.0 })

	for _, tt := range []struct{ name, body, code, says string }{
		// A transition never takes over someone else's tool.
		{"a transition named like a tool", `{"name":"probe","code":"return true","poll_interval_ms":1000}`, "409", "probe"},
		{"a poll below the minimum", `{"name":"fast","code":"return true","poll_interval_ms":10}`, "400", "minimum"},
	} {
		if tt.code == "409" {
			defineTool(t, nc, map[string]any{"name": "probe", "code": "return true"})
		}
		if body, code := request(t, nc, messages.VerbDefineTransition, tt.body); code != tt.code || !strings.Contains(string(body), tt.says) {
			t.Fatalf("%s: %s %s, want %s saying %s", tt.name, code, body, tt.code, tt.says)
		}
	}

	// Deleting its tool is refused with the verb that deletes it (the
	// CLI names its own command), which deletes its tool and stops the
	// polls.
	if body, code := request(t, nc, messages.VerbDeleteTool, `{"name":"door_open"}`); code != "409" || !strings.Contains(string(body), `(delete_transition \"door_open\")`) {
		t.Fatalf("delete_tool of a transition's predicate: %s %s", code, body)
	}
	mustOK(t, nc, messages.VerbDeleteTransition, `{"name":"door_open"}`)
	if body, _ := request(t, nc, messages.VerbListTools, `{}`); strings.Contains(string(body), "door_open") {
		t.Fatalf("the predicate tool outlived its transition: %s", body)
	}
	// Another transition, polled as often, paces the check: a poll of
	// door_open under way may finish by its second poll, and none may
	// come in its next three.
	mustOK(t, nc, messages.VerbDefineTransition, fmt.Sprintf(`{"name":"watch",
		"code":"const r = await fetch('http://%s/watch'); return (await r.json()).open",
		"poll_interval_ms":200,"hosts":[%q]}`, host, host))
	lumentest.WaitFor(t, 20*time.Second, "watch's second poll", func() bool { return watches.Load() >= 2 })
	n = polls.Load()
	m := watches.Load()
	lumentest.WaitFor(t, 20*time.Second, "three more polls of watch", func() bool { return watches.Load() >= m+3 })
	if polls.Load() != n {
		t.Fatal("the predicate is still polled after delete_transition")
	}
	if body, code := request(t, nc, messages.VerbDeleteTransition, `{"name":"door_open"}`); code != "404" {
		t.Fatalf("delete a deleted transition: %s %s", code, body)
	}
	// Replay takes the fires as given: it never runs a predicate.
	verifyReplay(t, nc, "demo")
}
