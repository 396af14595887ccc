package main_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// Internal sources compute values from the light's own history, and a
// nats source stores every message on its subject; both journal what they
// store as data inputs, so replay --verify holds without
// recomputing anything. Needs no tool engine.
func TestInternalAndNATSSources(t *testing.T) {
	// Not parallel: the daemon inherits the test-only minimum interval.
	t.Setenv("LUMEN_SOURCE_MIN_INTERVAL_MS", "100")
	dir := t.TempDir()
	d := startDaemon(t, dir)
	nc := connect(t, d.URL)
	var last map[string]any // for the failure message
	vars := func() map[string]any {
		v, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["vars"].(map[string]any)
		last = v
		return v
	}
	defer func() {
		if t.Failed() {
			t.Logf("the last variables: %v", last)
		}
	}()
	errs := make(chan *nats.Msg, 256)
	sub, err := nc.ChanSubscribe("lumen.demo.evt.out.error", errs)
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Unsubscribe()

	// The demo light: off → red → green → blue, three transitions.
	for range 3 {
		mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_click"}`))
	}
	// One from the CLI's flags, one in the seed's form, one explicit.
	if out, code := runCLI(t, d.URL, "source", "add", "activity", "--tracks", "transitions_today", "--interval", "200ms", "--store", "today=result"); code != 0 {
		t.Fatalf("source add --tracks: %d %s", code, out)
	}
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"state_duration","internal":true,"interval_ms":200}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"pattern","type":"internal","tracks":"last_5_transitions","interval_ms":200,"store":{"last5":"result"},"fires":"pattern_updated"}`))
	if out, _ := runCLI(t, d.URL, "source", "ls"); !strings.Contains(out, "internal every 200ms: transitions_today") {
		t.Fatalf("source ls: %s", out)
	}
	lumentest.WaitFor(t, 20*time.Second, "the internal sources' values", func() bool {
		v := vars()
		return v["today"] == 3.0 && fmt.Sprint(v["last5"]) == "[button_click button_click button_click]" && v["state_duration"] != nil
	})
	mustOK(t, request(t, nc, "lumen.demo.cmd.fire", `{"transition":"button_hold"}`))
	lumentest.WaitFor(t, 20*time.Second, "the values to follow a new transition", func() bool {
		v := vars()
		return v["today"] == 4.0 && fmt.Sprint(v["last5"]) == "[button_click button_click button_click button_hold]"
	})
	lumentest.WaitFor(t, 20*time.Second, "a second in the state", func() bool {
		n, _ := vars()["state_duration"].(float64)
		return n >= 1
	})

	// A push source over NATS: the payload is the result.
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_state", `{"name":"ring","r":255,"g":255,"b":0}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.append_rules", `{"rules":[{"from":"*","on":"doorbell","to":"ring"}]}`))
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"},"fires":"doorbell"}`))
	// The manager subscribes once it sees the new definition.
	lumentest.WaitFor(t, 20*time.Second, "the first message to be stored", func() bool {
		if err := nc.Publish("home.doorbell", []byte(`{"who":"Ann"}`)); err != nil {
			t.Fatal(err)
		}
		return vars()["who"] == "Ann"
	})
	if err := nc.Publish("home.doorbell", []byte(`{"who":"Bob","at":"front"}`)); err != nil {
		t.Fatal(err)
	}
	lumentest.WaitFor(t, 20*time.Second, "Bob, with Ann kept as who_prev", func() bool {
		v := vars()
		return v["who"] == "Bob" && v["who_prev"] == "Ann"
	})
	if s := mustOK(t, request(t, nc, "lumen.demo.cmd.get", `{}`)).Body["state"]; s != "ring" {
		t.Fatalf("the doorbell did not fire: state %v", s)
	}

	// Bad payloads: an error event each, the last values kept, no crash.
	for range len(errs) {
		<-errs
	}
	for _, c := range []struct{ payload, want string }{
		{"ding dong", `could not store who`},
		{`{"who":"` + strings.Repeat("x", 100<<10) + `"}`, "larger than 65536"},
	} {
		if err := nc.Publish("home.doorbell", []byte(c.payload)); err != nil {
			t.Fatal(err)
		}
		select {
		case m := <-errs:
			var ev struct {
				Data struct{ Kind, Error string }
			}
			_ = json.Unmarshal(m.Data, &ev)
			if ev.Data.Kind != "source" || !strings.Contains(ev.Data.Error, c.want) {
				t.Fatalf("error event for %.20q: %s", c.payload, m.Data)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("no error event for the payload %.20q", c.payload)
		}
	}
	if v := vars(); v["who"] != "Bob" {
		t.Fatalf("a bad payload changed who: %v", v["who"])
	}

	// Lumen's own subjects are refused before anything is journaled.
	for _, subj := range []string{"lumen.demo.cmd.fire", ">", "*.doorbell"} {
		r := request(t, nc, "lumen.demo.cmd.create_source", fmt.Sprintf(`{"name":"loop","type":"nats","subject":%q,"fires":"x"}`, subj))
		if r.Code != "400" || !strings.Contains(r.Header, "own prefix") {
			t.Errorf("subject %s: %s %s", subj, r.Code, r.Raw)
		}
	}

	// Replay takes the stored values as given.
	mustOK(t, request(t, nc, "lumen.demo.cmd.delete_source", `{"name":"pattern"}`))
	if out, code := runCLI(t, d.URL, "replay", "--light", "demo", "--verify"); code != 0 {
		t.Fatalf("replay --verify: %s", out)
	}

	// After a restart the history is read back from the journal: a new
	// source counts the same transitions as before.
	var today float64
	lastRun := func() string {
		runs, _ := mustOK(t, request(t, nc, "lumen.demo.cmd.list_sources", `{}`)).Body["last_runs"].(map[string]any)
		return fmt.Sprint(runs["activity"])
	}
	lumentest.WaitFor(t, 20*time.Second, "transitions_today to count the doorbell's transitions and settle", func() bool {
		before, _ := vars()["today"].(float64)
		// The same after two more runs of the source.
		seen, runs := lastRun(), 0
		lumentest.Within(5*time.Second, func() bool {
			if r := lastRun(); r != seen {
				seen, runs = r, runs+1
			}
			return runs >= 2
		})
		today, _ = vars()["today"].(float64)
		return runs >= 2 && today >= 5 && today == before
	})
	nc.Close()
	if err := d.Stop(); err != nil {
		t.Fatal(err)
	}
	d = startDaemon(t, dir)
	nc = connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.demo.cmd.create_source", `{"name":"again","type":"internal","tracks":"transitions_today","interval_ms":200,"store":{"today2":"result"}}`))
	lumentest.WaitFor(t, 20*time.Second, "the new source's first run", func() bool { return vars()["today2"] != nil })
	if got := vars()["today2"]; got != today {
		t.Fatalf("after a restart transitions_today = %v, want %v", got, today)
	}
}
