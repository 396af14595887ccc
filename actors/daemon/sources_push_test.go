package daemon_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/actors/daemon"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
)

// Internal sources compute values from the light's own history, and a
// nats source stores every message on its subject; both journal what they
// store as data inputs, so replay --verify holds without recomputing
// anything. Needs no tool engine.
func TestInternalAndNATSSources(t *testing.T) {
	dir := t.TempDir()
	startOn := func() (*daemon.Daemon, *nats.Conn) {
		d := startWith(t, func(c *daemon.Config) { c.Data, c.SourceMinInterval = dir, 100*time.Millisecond }, "demo")
		return d, connectTo(t, d)
	}
	d, nc := startOn()
	var last map[string]any // for the failure message
	vars := func() map[string]any {
		v, _ := mustOK(t, nc, messages.VerbGet, `{}`)["vars"].(map[string]any)
		last = v
		return v
	}
	defer func() {
		if t.Failed() {
			t.Logf("the last variables: %v", last)
		}
	}()
	errs := make(chan *nats.Msg, 256)
	if _, err := nc.ChanSubscribe("lumen.demo.evt.out.error", errs); err != nil {
		t.Fatal(err)
	}

	// The demo light: off → red → green → blue, three transitions.
	for range 3 {
		mustOK(t, nc, messages.VerbFire, `{"transition":"button_click"}`)
	}
	// The three forms: tracks with a store, the seed's internal flag,
	// and an explicit type that also fires.
	for _, src := range []string{
		`{"name":"activity","type":"internal","tracks":"transitions_today","interval_ms":200,"store":{"today":"result"}}`,
		`{"name":"state_duration","internal":true,"interval_ms":200}`,
		`{"name":"pattern","type":"internal","tracks":"last_5_transitions","interval_ms":200,"store":{"last5":"result"},"fires":"pattern_updated"}`,
	} {
		mustOK(t, nc, messages.VerbCreateSource, src)
	}
	lumentest.WaitFor(t, 20*time.Second, "the internal sources' values", func() bool {
		v := vars()
		return v["today"] == 3.0 && fmt.Sprint(v["last5"]) == "[button_click button_click button_click]" && v["state_duration"] != nil
	})
	mustOK(t, nc, messages.VerbFire, `{"transition":"button_hold"}`)
	lumentest.WaitFor(t, 20*time.Second, "the values to follow a new transition", func() bool {
		v := vars()
		return v["today"] == 4.0 && fmt.Sprint(v["last5"]) == "[button_click button_click button_click button_hold]"
	})
	lumentest.WaitFor(t, 20*time.Second, "a second in the state", func() bool {
		n, _ := vars()["state_duration"].(float64)
		return n >= 1
	})

	// A push source over NATS: the payload is the result.
	mustOK(t, nc, messages.VerbCreateState, `{"name":"ring","r":255,"g":255,"b":0}`)
	mustOK(t, nc, messages.VerbAppendRules, `{"rules":[{"from":"*","on":"doorbell","to":"ring"}]}`)
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"door","type":"nats","subject":"home.doorbell","store":{"who":"result.who"},"fires":"doorbell"}`)
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
	if s := mustOK(t, nc, messages.VerbGet, `{}`)["state"]; s != "ring" {
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
		body, code := request(t, nc, messages.VerbCreateSource, fmt.Sprintf(`{"name":"loop","type":"nats","subject":%q,"fires":"x"}`, subj))
		if code != "400" || !strings.Contains(string(body), "own prefix") {
			t.Errorf("subject %s: %s %s", subj, code, body)
		}
	}

	// Replay takes the stored values as given.
	mustOK(t, nc, messages.VerbDeleteSource, `{"name":"pattern"}`)
	verifyReplay(t, nc, "demo")

	// After a restart the history is read back from the journal: a new
	// source counts the same transitions as before.
	var today float64
	lastRun := func() string {
		runs, _ := mustOK(t, nc, messages.VerbListSources, `{}`)["last_runs"].(map[string]any)
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
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	_, nc = startOn()
	mustOK(t, nc, messages.VerbCreateSource, `{"name":"again","type":"internal","tracks":"transitions_today","interval_ms":200,"store":{"today2":"result"}}`)
	lumentest.WaitFor(t, 20*time.Second, "the new source's first run", func() bool { return vars()["today2"] != nil })
	if got := vars()["today2"]; got != today {
		t.Fatalf("after a restart transitions_today = %v, want %v", got, today)
	}
}
