package main_test

import (
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/journal"

	"context"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

const durConfig = `{
  "states":[{"name":"on","r":255,"g":255,"b":255}],
  "rules":[
    {"from":"*","on":"tick","to":"on","action":"setData('n', (getData('n') || 0) + 1)"},
    {"from":"*","on":"arm","to":"on","action":"startTimer('ding', 1500)"},
    {"from":"*","on":"ding","to":"off","action":"setData('dinged', true)"}
  ]}`

// TestDurabilityUnderSIGKILL fires inputs from several senders while the
// daemon is killed at random moments, and checks after every restart that
// no acknowledged input is lost, that the state is the fold of the
// journal, that a pending timer still fires, and that replay verifies.
func TestDurabilityUnderSIGKILL(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	t.Parallel()
	dir := t.TempDir()
	d := startDaemon(t, dir, "--light", "dur", "--snapshot-every", "200")
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.apply", durConfig))
	nc.Close()

	var acked []uint64
	const trials = 4
	for trial := 0; trial < trials; trial++ {
		nc := connect(t, d.URL)
		var mu sync.Mutex
		var stop atomic.Bool
		var wg sync.WaitGroup
		for s := 0; s < 4; s++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					m, err := nc.Request("lumen.dur.cmd.fire", []byte(`{"transition":"tick"}`), 5*time.Second)
					if err != nil {
						return // the daemon is gone
					}
					var r struct {
						OK  bool   `json:"ok"`
						Seq uint64 `json:"seq"`
					}
					if json.Unmarshal(m.Data, &r) == nil && r.OK {
						mu.Lock()
						acked = append(acked, r.Seq)
						mu.Unlock()
					}
				}
			}()
		}
		time.Sleep(time.Duration(300+rand.IntN(700)) * time.Millisecond)
		d.Kill()
		stop.Store(true)
		wg.Wait()
		nc.Close()
		t.Logf("trial %d: %d inputs acknowledged so far", trial, len(acked))
		d = startDaemon(t, dir, "--light", "dur", "--snapshot-every", "200")
	}

	// A timer set just before a kill fires after the restart, late.
	nc = connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.fire", `{"transition":"arm"}`))
	d.Kill()
	time.Sleep(2 * time.Second)
	d = startDaemon(t, dir, "--light", "dur")
	nc = connect(t, d.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	// Every acknowledged input is in the journal.
	stream, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	for _, seq := range acked {
		m, err := stream.GetMsg(ctx, seq)
		if err != nil || m.Subject != "lumen.dur.evt.in.fired" {
			t.Fatalf("acknowledged input %d is not in the journal: %v", seq, err)
		}
	}
	// Wait for the light to apply everything, and for the late timer.
	var g reply
	lumentest.WaitFor(t, 60*time.Second, "the timer set before the kill to fire", func() bool {
		g = mustOK(t, request(t, nc, "lumen.dur.cmd.get", `{}`))
		vars, _ := g.Body["vars"].(map[string]any)
		return vars["dinged"] == true
	})
	// The counter equals the number of tick inputs in the journal.
	ticks := countSubject(t, ctx, js, "lumen.dur.evt.in.fired", `"tick"`)
	vars := g.Body["vars"].(map[string]any)
	if got := vars["n"].(float64); int(got) != ticks || ticks < len(acked) {
		t.Fatalf("n = %v, journal has %d ticks, %d were acknowledged", got, ticks, len(acked))
	}
	t.Logf("%d ticks journaled, %d acknowledged, n = %v", ticks, len(acked), vars["n"])
	late := countSubject(t, ctx, js, "lumen.dur.evt.out.timer", `"late":true`)
	if late != 1 {
		t.Errorf("want one late timer firing, got %d", late)
	}

	d.Stop()
	out, code := runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--verify", "--quiet")
	if code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --verify after the kills: %d\n%s", code, out)
	}
}

func countSubject(t *testing.T, ctx context.Context, js jetstream.JetStream, subj, contains string) int {
	t.Helper()
	n := 0
	for _, data := range readSubject(t, ctx, js, subj) {
		if strings.Contains(data, contains) {
			n++
		}
	}
	return n
}

// readSubject reads every event of the stream on subj, as a client
// does (through the daemon's history service): its data by stream
// sequence.
func readSubject(t *testing.T, ctx context.Context, js jetstream.JetStream, subj string) map[uint64]string {
	t.Helper()
	events := map[uint64]string{}
	if err := journal.New(js).Replay(ctx, subj, 0, 0, func(m journal.Msg) error {
		events[m.Seq] = string(m.Data)
		return nil
	}); err != nil {
		t.Fatalf("reading %s: %v", subj, err)
	}
	return events
}
