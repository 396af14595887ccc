package web_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
)

// sseEvent is one event of an SSE stream: its id and its data.
type sseEvent struct {
	id   string
	data map[string]any
}

// followSSE reads the event stream at url (with Last-Event-ID lastID
// when given) onto a channel until the test ends or close is called.
func followSSE(t *testing.T, url, lastID string) (events <-chan sseEvent, close func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if res.StatusCode != 200 {
		t.Fatalf("%s: %d", url, res.StatusCode)
	}
	ch := make(chan sseEvent, 256)
	go func() {
		defer res.Body.Close()
		sc := bufio.NewScanner(res.Body)
		sc.Buffer(nil, 1<<20)
		var id string
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
				id = v
			}
			if v, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var d map[string]any
				if json.Unmarshal([]byte(v), &d) == nil {
					select {
					case ch <- sseEvent{id: id, data: d}:
					case <-ctx.Done():
						return
					}
				}
			}
		}
	}()
	return ch, cancel
}

// nextOf waits for the stream's next event of light.
func nextOf(t *testing.T, events <-chan sseEvent, light, what string) sseEvent {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		select {
		case e := <-events:
			if e.data["light"] == light {
				return e
			}
		case <-deadline:
			t.Fatalf("no event of %s: %s", light, what)
		}
	}
}

// Every light's event stream at a hub resumes after the last event the
// client saw, whatever Pi it came from: the Pis' sequences overlap, so
// its ids are places in the house's copy and each event tells its Pi's
// sequence as "seq". A client that left after a busy light's event gets
// a quiet light's later ones, and a light that joins the house later.
func TestEventsAtAHubResume(t *testing.T) {
	t.Parallel()
	hub, nc := startHouse(t, []string{"kitchen"}, []string{"porch"})
	fire := func(light string) {
		t.Helper()
		lumentest.WaitFor(t, 30*time.Second, light+" to fire at the hub", func() bool {
			m, err := nc.Request("lumen."+light+".cmd.fire", []byte(`{"transition":"button_click"}`), 5*time.Second)
			return err == nil && bytes.Contains(m.Data, []byte(`"ok":true`))
		})
	}
	for range 20 {
		fire("kitchen") // kitchen's sequences run far ahead of porch's
	}
	fire("porch")
	page := hub.Page(t)

	live, stop := followSSE(t, page+"api/v1/events", "")
	// Leave after a kitchen event, the last one streamed (porch's click
	// may reach the copy late).
	var seen sseEvent
	lumentest.WaitFor(t, 60*time.Second, "a live event of kitchen, the last one", func() bool {
		fire("kitchen")
		for quiet := false; !quiet; {
			select {
			case seen = <-live:
			case <-time.After(2 * time.Second):
				quiet = true
			}
		}
		return seen.data["light"] == "kitchen"
	})
	stop()
	kseq, ok := seen.data["seq"].(float64)
	if !ok || kseq < 20 {
		t.Fatalf("the last event seen has no Pi sequence: id %s %v", seen.id, seen.data)
	}
	lastPlace, err := strconv.ParseUint(seen.id, 10, 64)
	if err != nil {
		t.Fatalf("the last event's id %q is no place", seen.id)
	}

	// porch goes on while the client is away; its sequences are far
	// below kitchen's.
	before := porchSeq(t, nc)
	fire("porch")
	back, _ := followSSE(t, page+"api/v1/events", seen.id)
	e := nextOf(t, back, "porch", "after a reconnect with Last-Event-ID "+seen.id)
	if s, _ := e.data["seq"].(float64); uint64(s) <= before || s >= kseq {
		t.Errorf("porch's event after the reconnect has seq %v, want one after %d (and below kitchen's %v)", e.data["seq"], before, kseq)
	}
	if id, err := strconv.ParseUint(e.id, 10, 64); err != nil || id <= lastPlace {
		t.Errorf("the event's id %q is no place in the house's copy after the last seen, %d", e.id, lastPlace)
	}

	// A Pi that joins the house while the stream is open is in it: its
	// light was unknown when the stream began.
	joinHouse(t, hub.Data, hub.Leaf, "pic", []string{"attic"})
	fire("attic")
	if e := nextOf(t, back, "attic", "of a light that joined while the stream was open"); e.data["seq"] == nil {
		t.Errorf("attic's event has no Pi sequence: %v", e.data)
	}

	// One light's stream has its Pi's sequences as ids; without a resume
	// point it starts at the next event.
	one, _ := followSSE(t, page+"api/v1/lights/porch/events", "")
	lumentest.WaitFor(t, 30*time.Second, "a live event of porch on its own stream", func() bool {
		fire("porch")
		select {
		case e = <-one:
			return true
		case <-time.After(2 * time.Second):
			return false
		}
	})
	if _, has := e.data["seq"]; has || e.id == "" || e.data["light"] != "porch" {
		t.Errorf("porch's own stream: id %q %v", e.id, e.data)
	}
	if id, _ := strconv.ParseUint(e.id, 10, 64); id <= before || float64(id) >= kseq {
		t.Errorf("porch's own stream: id %s, not one of porch's sequences after %d", e.id, before)
	}
	// And resumes from one of them: the event after it, found in the
	// copy where it is.
	resumed, _ := followSSE(t, page+"api/v1/lights/porch/events", strconv.FormatUint(before, 10))
	if e := nextOf(t, resumed, "porch", "on its own stream resumed after "+strconv.FormatUint(before, 10)); e.id != strconv.FormatUint(before+1, 10) {
		t.Errorf("porch's own stream resumed after %d begins at %s", before, e.id)
	}
}

// porchSeq is porch's last input's sequence on its Pi.
func porchSeq(t *testing.T, nc *nats.Conn) uint64 {
	t.Helper()
	m, err := nc.Request("lumen.porch.cmd.get", []byte(`{}`), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var g struct{ Seq uint64 }
	if err := json.Unmarshal(m.Data, &g); err != nil {
		t.Fatal(err)
	}
	return g.Seq
}
