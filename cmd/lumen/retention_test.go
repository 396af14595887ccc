package main_test

import (
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"

	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// TestRetentionKeepsWithinBudget: past its budget the journal drops only
// what snapshots cover; the light still recovers exactly and replays from
// its snapshot.
func TestRetentionKeepsWithinBudget(t *testing.T) {
	t.Parallel()
	const budget = 200_000
	dir := t.TempDir()
	flags := []string{"--light", "dur", "--sync", "batch", "--max-bytes", "200000", "--snapshot-every", "5"}
	d := startDaemon(t, dir, flags...)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.apply", durConfig))
	const fires = 1600
	var wg sync.WaitGroup
	for s := 0; s < 4; s++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < fires/4; i++ {
				mustOK(t, request(t, nc, "lumen.dur.cmd.fire", `{"transition":"tick"}`))
			}
		}()
	}
	wg.Wait()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lumentest.WaitFor(t, 30*time.Second, fmt.Sprintf("the journal to hold at most 3/4 of its budget %d", budget), func() bool {
		s, err := js.Stream(ctx, "LUMEN")
		if err != nil {
			t.Fatal(err)
		}
		return s.CachedInfo().State.Bytes <= budget*3/4
	})
	d.Stop()

	d = startDaemon(t, dir, flags...)
	nc = connect(t, d.URL)
	g := mustOK(t, request(t, nc, "lumen.dur.cmd.get", `{}`))
	if n := g.Body["vars"].(map[string]any)["n"]; n != float64(fires) {
		t.Fatalf("after compaction and restart n = %v, want %d", n, fires)
	}
	// The past before the latest snapshot stays answerable from the kept
	// past snapshots; before the oldest, a sentence says how far back.
	out, code := runCLI(t, d.URL, "get", "--light", "dur", "--seq", "3")
	m := regexp.MustCompile(`its journal starts at (\d+)`).FindStringSubmatch(out)
	if code != 1 || m == nil {
		t.Fatalf("get --seq 3 of a compacted journal: exit %d\n%s", code, out)
	}
	oldest, _ := strconv.ParseUint(m[1], 10, 64)
	past := mustOK(t, request(t, nc, "lumen.dur.cmd.get", fmt.Sprintf(`{"seq":%d}`, oldest)))
	n, _ := past.Body["vars"].(map[string]any)["n"].(float64)
	if n < 1 || n >= fires || uint64(g.Body["seq"].(float64))-oldest < 100 {
		t.Errorf("the light at input %d: n = %v (now %v at input %v): the kept past is too short", oldest, n, fires, g.Body["seq"])
	}
	if out, code := runCLI(t, d.URL, "history", "--light", "dur"); code != 0 {
		t.Errorf("history of a compacted journal: exit %d\n%s", code, out)
	}
	if out, code := runCLI(t, d.URL, "why", "--light", "dur"); code != 0 || !strings.Contains(out, "rule") {
		t.Errorf("why on a compacted journal: exit %d\n%s", code, out)
	}
	d.Stop()
	// The snapshots are the daemon's: read them from its stopped data
	// directory.
	kctx, kcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer kcancel()
	ib, err := broker.Inspect(kctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	kv, err := ib.JetStream().KeyValue(kctx, "LUMEN_SNAP")
	if err != nil {
		t.Fatal(err)
	}
	keys, err := kv.ListKeysFiltered(kctx, "past.dur.>")
	if err != nil {
		t.Fatal(err)
	}
	kept := 0
	for range keys.Keys() {
		kept++
	}
	ib.Shutdown()
	if kept == 0 || kept > 32 {
		t.Errorf("%d past snapshots kept, want 1 to 32", kept)
	}
	out, code = runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--verify", "--quiet", "--from-snapshot")
	if code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --from-snapshot --verify: %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--quiet")
	if code != 1 || !strings.Contains(out, "--from-snapshot") {
		t.Fatalf("replay from the start of a compacted journal must say to use the snapshot: %d\n%s", code, out)
	}
}
