package bench

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/powercut"
	"github.com/lumen-home/lumen/nats/subject"
)

// batchCutAfter are the moments after start-up at which
// BenchmarkPowerCutBatch cuts the power: early, and late (the server
// flushes every second: broker's syncInterval).
var batchCutAfter = []time.Duration{20 * time.Second, 150 * time.Second}

// BenchmarkPowerCutBatch measures what `lumen up --sync batch` loses in a
// power cut: two clients fire ticks (one every 20 ms each) until the cut,
// and after a restart it counts the acknowledged inputs missing from the
// journal (lost-inputs, of acked-inputs) and how long before the cut the
// first of them was acknowledged (lost-window-s).
func BenchmarkPowerCutBatch(b *testing.B) {
	powercut.Require(b)
	for _, after := range batchCutAfter {
		b.Run(fmt.Sprintf("cut-after-%ds", int(after.Seconds())), func(b *testing.B) {
			var acked, lost int
			var window time.Duration
			for range b.N {
				a, l, w := batchCut(b, after)
				acked, lost, window = acked+a, lost+l, max(window, w)
			}
			b.ReportMetric(float64(acked)/float64(b.N), "acked-inputs")
			b.ReportMetric(float64(lost)/float64(b.N), "lost-inputs")
			b.ReportMetric(window.Seconds(), "lost-window-s")
		})
	}
}

// batchCut runs one daemon for after, cuts the power, and returns how
// many inputs were acknowledged, how many of those the journal lost, and
// the time from the first lost one's acknowledgement to the cut.
func batchCut(b *testing.B, after time.Duration) (acked, lost int, window time.Duration) {
	backing, dir := b.TempDir(), b.TempDir()
	disk := powercut.MountT(b, backing, dir, powercut.Options{})
	args := []string{"--light", benchLight, "--sync", "batch"}
	d := startDaemon(b, dir, args...)
	nc := connect(b, d.URL)
	applyBenchConfig(b, nc)

	type ack struct {
		seq uint64
		at  time.Time
	}
	var mu sync.Mutex
	var acks []ack
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-time.After(20 * time.Millisecond):
				}
				r, err := command(nc, "fire", tickRequest)
				if err != nil {
					continue // the daemon is gone, or going
				}
				mu.Lock()
				acks = append(acks, ack{r.Seq, time.Now()})
				mu.Unlock()
			}
		}()
	}
	time.Sleep(after)
	cutAt := time.Now()
	if err := disk.Cut(func() error { return syscall.Kill(d.Pid(), syscall.SIGKILL) }); err != nil {
		b.Fatal(err)
	}
	<-d.Exited()
	close(stop)
	wg.Wait()
	nc.Close()

	powercut.MountT(b, backing, dir, powercut.Options{})
	d = startDaemon(b, dir, args...)
	js := newJetStream(b, connect(b, d.URL))
	ctx, cancel := context.WithTimeout(context.Background(), eventTimeout)
	defer cancel()
	str, err := js.Stream(ctx, subject.Stream)
	if err != nil {
		b.Fatal(err)
	}
	for _, a := range acks {
		m, err := str.GetMsg(ctx, a.seq)
		if err == nil && m.Subject == subject.In(benchLight, "fired") {
			continue
		}
		if lost++; lost == 1 {
			window = cutAt.Sub(a.at)
		}
	}
	if err := d.Stop(); err != nil {
		b.Fatal(err)
	}
	return len(acks), lost, window
}
