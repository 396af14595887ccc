package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/repair"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkRecovery: a light with about 1,000,000 journaled events (a
// third of them inputs; snapshots on, every 1000 inputs) is killed with
// SIGKILL, and lumen up started again on its data directory. One op is
// one kill and restart; it reports the time from the start of the process
// until the light answers get (to-get-p50-µs) and until its LED shows the
// light's state (to-led-p50-µs), goal ≤ 2 s each. Baseline, in the same
// run: the same restart of a light with an empty journal (empty-to-led-).
func BenchmarkRecovery(b *testing.B) {
	big, bigDir, _ := tickedDaemon(b, "lumen-bench-recovery-", whyEvents/3)
	empty, err := os.MkdirTemp("", "lumen-bench-recovery-empty-")
	if err != nil {
		b.Fatal(err)
	}
	atExit(func() { _ = os.RemoveAll(empty) })
	small := startDaemon(b, empty, "--light", benchLight, "--sync", "batch")
	restart := func(d *daemon, dir string) (*daemon, time.Duration, time.Duration) {
		d.Kill()
		t0 := time.Now()
		d, err := launch(lumenBin(b), dir, "--light", benchLight, "--sync", "batch")
		if err != nil {
			b.Fatal(err)
		}
		atExit(d.Kill)
		nc, err := nats.Connect(d.URL)
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		var g messages.GetReply
		lumentest.WaitEvery(b, readyTimeout, time.Millisecond, "the light's answer after a restart", func() bool {
			m, err := nc.Request(subject.Cmd(benchLight, messages.VerbGet), []byte(`{}`), requestTimeout)
			return err == nil && json.Unmarshal(m.Data, &g) == nil && g.OK
		})
		toGet := time.Since(t0)
		lumentest.WaitEvery(b, readyTimeout, time.Millisecond, "the LED to show the state after a restart", func() bool {
			var led messages.LEDReply
			m, err := nc.Request(subject.Cmd(benchLight, messages.VerbLED), []byte(`{}`), requestTimeout)
			return err == nil && json.Unmarshal(m.Data, &led) == nil && led.State == g.State
		})
		return d, toGet, time.Since(t0)
	}
	var gets, leds, emptyLeds latencies
	b.ResetTimer()
	for range b.N {
		var g, l time.Duration
		big, g, l = restart(big, bigDir)
		gets, leds = append(gets, g), append(leds, l)
		small, _, l = restart(small, empty)
		emptyLeds = append(emptyLeds, l)
	}
	b.StopTimer()
	gets.report(b, "to-get-")
	leds.report(b, "to-led-")
	emptyLeds.report(b, "empty-to-led-")
	big.Kill()
	reportCheck(b, bigDir)
}

// reportCheck reports the size of the journal's blocks and what a full
// check of them costs (journal repair, replay --data), and lumen up's
// check of the unchanged journal, which reads only its last block
// (repair.CheckStart), from the page cache.
func reportCheck(b *testing.B, dir string) {
	blks, err := filepath.Glob(filepath.Join(repair.StreamDir(dir), "msgs", "*.blk"))
	if err != nil {
		b.Fatal(err)
	}
	var size int64
	for _, p := range blks {
		if fi, err := os.Stat(p); err == nil {
			size += fi.Size()
		}
	}
	b.ReportMetric(float64(size)/(1<<20), "journal-MiB")
	for _, c := range []struct {
		metric string
		check  func(string) (repair.Report, error)
	}{{"check-ms", repair.Check}, {"start-check-ms", repair.CheckStart}} {
		t0 := time.Now()
		if rep, err := c.check(dir); err != nil || rep.Damaged() {
			b.Fatal(rep, err)
		}
		b.ReportMetric(float64(time.Since(t0).Microseconds())/1e3, c.metric)
	}
}
