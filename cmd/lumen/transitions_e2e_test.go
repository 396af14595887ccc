package main_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// A custom transition (seed 000 §3): a JavaScript predicate, polled in the
// tool sandbox, fires its transition each time it turns from false to true,
// and only then.
func TestCustomTransition(t *testing.T) {
	needGuest(t)
	// Not parallel: the daemon inherits the test-only minimum interval.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
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
	host := strings.TrimPrefix(api.URL, "http://")
	d := startDaemon(t, t.TempDir(), "--allow-net", host)
	nc := connect(t, d.URL)
	get := func() map[string]any { return mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body }

	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"alert","r":255,"g":80,"b":0}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[
		{"from":"*","on":"door_open","to":"alert","action":"setData('opened', (getData('opened') || 0) + 1)"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.define_transition", fmt.Sprintf(`{"name":"door_open",
		"code":"const r = await fetch('http://%s/door'); return (await r.json()).open",
		"poll_interval_ms":200,"hosts":[%q]}`, host, host)))

	// The predicate is a tool, and its poll a source of type transition.
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.list_sources", `{}`)); !strings.Contains(string(r.Raw), `"type":"transition"`) {
		t.Fatalf("list_sources: %s", r.Raw)
	}
	if out, code := runCLI(t, d.URL, "tool", "run", "door_open"); code != 0 || !strings.Contains(out, "false") {
		t.Fatalf("lumen tool run door_open: %d %s", code, out)
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

	// A transition never takes over someone else's tool.
	defineTool(t, nc, map[string]any{"name": "probe", "code": "return true"})
	if r := request(t, nc, "lumen.demo.cmd.define_transition", `{"name":"probe","code":"return true","poll_interval_ms":1000}`); r.Code != "409" {
		t.Fatalf("a transition named like a tool: %s %s", r.Code, r.Raw)
	}
	if r := request(t, nc, "lumen.demo.cmd.define_transition", `{"name":"fast","code":"return true","poll_interval_ms":10}`); r.Code != "400" || !strings.Contains(r.Header, "minimum") {
		t.Fatalf("a poll below the minimum: %s %s", r.Code, r.Raw)
	}

	// Deleting its tool is refused with the command that deletes it,
	// which deletes its tool and stops the polls.
	if out, code := runCLI(t, d.URL, "tool", "rm", "door_open"); code != 1 || !strings.Contains(out, `'lumen source rm --transition' "door_open"`) {
		t.Fatalf("tool rm of a transition's predicate: exit %d:\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "source", "rm", "--transition", "door_open"); code != 0 {
		t.Fatalf("source rm --transition: exit %d:\n%s", code, out)
	}
	if r := mustOK(t, request(t, nc, "lumen.demo.cmd.list_tools", `{}`)); strings.Contains(string(r.Raw), "door_open") {
		t.Fatalf("the predicate tool outlived its transition: %s", r.Raw)
	}
	// Another transition, polled as often, paces the check: a poll of
	// door_open under way may finish by its second poll, and none may
	// come in its next three.
	mustOK(t, request(t, nc, "lumen.demo.cmd.define_transition", fmt.Sprintf(`{"name":"watch",
		"code":"const r = await fetch('http://%s/watch'); return (await r.json()).open",
		"poll_interval_ms":200,"hosts":[%q]}`, host, host)))
	lumentest.WaitFor(t, 20*time.Second, "watch's second poll", func() bool { return watches.Load() >= 2 })
	n = polls.Load()
	m := watches.Load()
	lumentest.WaitFor(t, 20*time.Second, "three more polls of watch", func() bool { return watches.Load() >= m+3 })
	if polls.Load() != n {
		t.Fatal("the predicate is still polled after delete_transition")
	}
	if r := request(t, nc, "lumen.demo.cmd.delete_transition", `{"name":"door_open"}`); r.Code != "404" {
		t.Fatalf("delete a deleted transition: %s %s", r.Code, r.Raw)
	}
	// Replay takes the fires as given: it never runs a predicate.
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}
}
