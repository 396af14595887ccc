package main_test

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/powercut"
)

// powerCuts is how many cuts TestPowerCut makes: a few in the test
// command, $LUMEN_POWERCUT_CUTS in `task powercut` (100).
func powerCuts(t *testing.T) int {
	t.Helper()
	s := os.Getenv("LUMEN_POWERCUT_CUTS")
	if s == "" {
		return 3
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		t.Fatalf("LUMEN_POWERCUT_CUTS=%q: want a positive number", s)
	}
	return n
}

// powerCutNames is the file system's model of names: Linux's, or
// $LUMEN_POWERCUT_NAMES (posix shows what a stricter disk would lose).
func powerCutNames(t *testing.T) powercut.Options {
	t.Helper()
	s := os.Getenv("LUMEN_POWERCUT_NAMES")
	if s == "" {
		return powercut.Options{}
	}
	names, err := powercut.ParseNames(s)
	if err != nil {
		t.Fatalf("LUMEN_POWERCUT_NAMES: %v", err)
	}
	return powercut.Options{Names: names}
}

// acked is what the clients were told: each acknowledged input's stream
// sequence and when its reply arrived.
type acked struct {
	mu   sync.Mutex
	seqs []uint64
	at   []time.Time
}

func (a *acked) add(seq uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.seqs = append(a.seqs, seq)
	a.at = append(a.at, time.Now())
}

// fireUntilCut runs four clients firing ticks at the light dur until the
// daemon is gone, records what was acknowledged, and cuts the power at a
// random moment. It returns when the daemon has died and the clients
// stopped, with the moment of the cut.
func fireUntilCut(t *testing.T, disk *powercut.FS, d *daemon, acks *acked) time.Time {
	t.Helper()
	nc := connect(t, d.URL)
	defer nc.Close()
	var stop atomic.Bool
	var wg sync.WaitGroup
	for range 4 {
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
					acks.add(r.Seq)
				}
			}
		}()
	}
	time.Sleep(time.Duration(200+rand.IntN(800)) * time.Millisecond)
	at := cut(t, disk, d)
	stop.Store(true)
	wg.Wait()
	return at
}

// cut cuts the power under the daemon: the disk stops answering, the
// daemon is killed, what was not fsynced is dropped.
func cut(t *testing.T, disk *powercut.FS, d *daemon) time.Time {
	t.Helper()
	at := time.Now()
	if err := disk.Cut(func() error { return syscall.Kill(d.Pid(), syscall.SIGKILL) }); err != nil {
		t.Fatal(err)
	}
	<-d.Exited()
	return at
}

// TestPowerCut runs `lumen up --sync always` on a file system that loses
// what was not fsynced, fires inputs from several clients, and cuts the
// power at random moments: after every restart no acknowledged input is
// lost, the state is the fold of the journal, a pending timer fires, and
// replay verifies. FUSE is needed (see powercut.Require). The number of
// cuts is $LUMEN_POWERCUT_CUTS (3 by default).
func TestPowerCut(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	powercut.Require(t)
	t.Parallel()
	backing, dir := t.TempDir(), t.TempDir()
	opts := powerCutNames(t)
	disk := powercut.MountT(t, backing, dir, opts)
	args := []string{"--light", "dur", "--sync", "always", "--snapshot-every", "200"}
	d := startDaemon(t, dir, args...)
	nc := connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.apply", durConfig))
	nc.Close()

	var acks acked
	cuts := powerCuts(t)
	for trial := range cuts {
		fireUntilCut(t, disk, d, &acks)
		t.Logf("cut %d: %d inputs acknowledged so far", trial+1, len(acks.seqs))
		disk = powercut.MountT(t, backing, dir, opts)
		d = startDaemon(t, dir, args...)
	}

	// A timer set just before a cut fires after the restart, late.
	nc = connect(t, d.URL)
	mustOK(t, request(t, nc, "lumen.dur.cmd.fire", `{"transition":"arm"}`))
	cut(t, disk, d)
	time.Sleep(2 * time.Second)
	powercut.MountT(t, backing, dir, opts)
	d = startDaemon(t, dir, "--light", "dur", "--sync", "always")
	checkJournal(t, d, acks.seqs)

	d.Stop()
	out, code := runCLI(t, "", "replay", "--data", dir, "--light", "dur", "--verify", "--quiet")
	if code != 0 || !strings.Contains(out, "every recorded output matches") {
		t.Fatalf("replay --verify after the power cuts: %d\n%s", code, out)
	}
}

// checkJournal checks, on the restarted daemon, that every acknowledged
// input is in the journal, that the light has applied them all (its
// counter is the number of ticks journaled) and that the timer armed
// before the last cut fired, late.
func checkJournal(t *testing.T, d *daemon, seqs []uint64) {
	t.Helper()
	nc := connect(t, d.URL)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var g reply
	if !lumentest.Within(60*time.Second, func() bool {
		g = mustOK(t, request(t, nc, "lumen.dur.cmd.get", `{}`))
		vars, _ := g.Body["vars"].(map[string]any)
		return vars["dinged"] == true
	}) {
		t.Fatalf("the timer set before the cut never fired: %s\n%s", g.Raw, d.Logs())
	}
	// Reading the journal takes a while after many cuts: no deadline
	// but the test's.
	fired := readSubject(t, context.Background(), js, "lumen.dur.evt.in.fired")
	lost := 0
	for _, seq := range seqs {
		if _, ok := fired[seq]; !ok {
			if lost++; lost <= 10 {
				t.Errorf("acknowledged input %d is not in the journal", seq)
			}
		}
	}
	if lost > 0 {
		t.Fatalf("%d of %d acknowledged inputs lost\n%s", lost, len(seqs), d.Logs())
	}
	ticks := 0
	for _, data := range fired {
		if strings.Contains(data, `"tick"`) {
			ticks++
		}
	}
	vars := g.Body["vars"].(map[string]any)
	if got := vars["n"].(float64); int(got) != ticks || ticks < len(seqs) {
		t.Fatalf("n = %v, journal has %d ticks, %d were acknowledged", got, ticks, len(seqs))
	}
	t.Logf("%d ticks journaled, %d acknowledged, n = %v", ticks, len(seqs), vars["n"])
	if late := countSubject(t, context.Background(), js, "lumen.dur.evt.out.timer", `"late":true`); late != 1 {
		t.Errorf("want one late timer firing, got %d", late)
	}
}
