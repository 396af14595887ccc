package main_test

import (
	"context"
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
	flags := []string{"--light", "dur", "--sync", "batch", "--max-bytes", "200000", "--snapshot-every", "20"}
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
	for {
		s, err := js.Stream(ctx, "LUMEN")
		if err != nil {
			t.Fatal(err)
		}
		if s.CachedInfo().State.Bytes <= budget*3/4 {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("journal holds %d bytes, budget %d", s.CachedInfo().State.Bytes, budget)
		}
		time.Sleep(200 * time.Millisecond)
	}
	d.Stop()

	d = startDaemon(t, dir, flags...)
	nc = connect(t, d.URL)
	g := mustOK(t, request(t, nc, "lumen.dur.cmd.get", `{}`))
	if n := g.Body["vars"].(map[string]any)["n"]; n != float64(fires) {
		t.Fatalf("after compaction and restart n = %v, want %d", n, fires)
	}
	d.Stop()
	out, code := runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--verify", "--quiet", "--from-snapshot")
	if code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --from-snapshot --verify: %d\n%s", code, out)
	}
	out, code = runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--quiet")
	if code != 1 || !strings.Contains(out, "--from-snapshot") {
		t.Fatalf("replay from the start of a compacted journal must say to use the snapshot: %d\n%s", code, out)
	}
}
