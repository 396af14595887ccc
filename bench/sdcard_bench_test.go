package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/internal/powercut"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/subject"
)

// sdCardDisks are the disks of BenchmarkSDCard: the power-cut file
// system alone, the same with an SD card's fsync latency added, and a
// plain directory with the same latency injected by strace, which
// stops the daemon at every system call, so that its figures are
// pessimistic.
var sdCardDisks = []struct {
	name   string
	delay  time.Duration
	strace bool
}{{"fsync-0ms", 0, false}, {"fsync-20ms", 20 * time.Millisecond, false}, {"strace-fsync-20ms", 20 * time.Millisecond, true}}

// BenchmarkSDCard runs `lumen up --sync always` with its data dir on the
// power-cut file system, each fsync made to wait as an SD card's does
// (or, in strace-fsync-20ms, on a plain directory with strace delaying
// each fsync and fdatasync's return), and measures, each against the raw
// fsynced publish of the same run (an acknowledged JetStream publish to
// the daemon's server, as BenchmarkDaemonPublishLatency):
//
//   - fire-reply: a fire request until its reply;
//   - fire-led: the same fire until the LED shows the state it led to;
//   - click-led: a click on the simulated button, from the request that
//     releases it until the LED shows the next color (no rule reacts to a
//     double click, so the click is decided on its release);
//
// and, of the click, where the time goes (from the moments the journal
// and the hardware record): decided → the input stored by JetStream (the
// hardware actor's publish), → its state output stored (the input's fsync,
// the light's delivery and apply), → shown on the LED.
func BenchmarkSDCard(b *testing.B) {
	powercut.Require(b)
	for _, disk := range sdCardDisks {
		b.Run(disk.name, func(b *testing.B) {
			dir := b.TempDir()
			if !disk.strace {
				powercut.MountT(b, b.TempDir(), dir, powercut.Options{FsyncDelay: disk.delay})
			}
			if err := os.WriteFile(filepath.Join(dir, "lumen.yaml"), []byte(gestureBenchConfig), 0o600); err != nil {
				b.Fatal(err)
			}
			// The baseline light takes the raw publishes: the stream
			// journals only the inputs of lights that run.
			d := startDaemon(b, dir, "--light", benchLight, "--light", baselineLight, "--sync", "always")
			if disk.strace {
				delayFsyncs(b, d.Pid(), disk.delay)
			}
			nc := connect(b, d.URL)
			js := newJetStream(b, nc)
			str, err := js.Stream(context.Background(), subject.Stream)
			if err != nil {
				b.Fatal(err)
			}
			leds := followLED(b, nc, 64)
			s := sdCard{b: b, nc: nc, js: js, str: str, leds: leds}
			for range 5 { // warm up: the consumers, the renderer, the caches
				s.raw()
				time.Sleep(baselineSettle)
				s.fire()
				s.click()
			}
			var raw, reply, fireLED, click, decided, stored, applied, shown latencies
			b.ResetTimer()
			// The raw publishes first, each once the baseline light is
			// done with the one before: the server takes one fsync at a
			// time in a stream, and would count the light's with the
			// publish's.
			for range b.N {
				raw = append(raw, s.raw())
				time.Sleep(baselineSettle)
			}
			for range b.N {
				r, l := s.fire()
				reply, fireLED = append(reply, r), append(fireLED, l)
				c := s.click()
				click = append(click, c.release)
				decided = append(decided, c.decided)
				stored = append(stored, c.stored)
				applied = append(applied, c.applied)
				shown = append(shown, c.shown)
			}
			b.StopTimer()
			rawP50 := raw.p50()
			raw.report(b, "raw-")
			reply.report(b, "fire-reply-")
			fireLED.report(b, "fire-led-")
			click.report(b, "click-led-")
			decided.report(b, "click-decided-led-")
			for _, r := range []struct {
				name string
				l    latencies
			}{{"fire-reply", reply}, {"fire-led", fireLED}, {"click-led", click}, {"click-decided-led", decided}} {
				b.ReportMetric(float64(r.l.p50())/float64(rawP50), r.name+"/raw")
			}
			for _, r := range []struct {
				name string
				l    latencies
			}{{"stored", stored}, {"applied", applied}, {"shown", shown}} {
				b.ReportMetric(float64(r.l.p50().Nanoseconds())/1e3, "click-"+r.name+"-p50-µs")
			}
		})
	}
}

// sdCard drives one daemon of BenchmarkSDCard.
type sdCard struct {
	b    *testing.B
	nc   *nats.Conn
	js   jetstream.JetStream
	str  jetstream.Stream
	leds chan *nats.Msg
}

// baselineLight is a second light of BenchmarkSDCard's daemon, with no
// rules, that takes its raw publishes.
const baselineLight = "baseline"

// baselineSettle is ample time for the baseline light to apply a raw
// publish (a few fsyncs).
const baselineSettle = 200 * time.Millisecond

// raw is one acknowledged publish of a fire input to the baseline light:
// the stream stores it, fsynced, before it acknowledges it.
func (s *sdCard) raw() time.Duration {
	t0 := time.Now()
	if _, err := s.js.Publish(context.Background(), subject.In(baselineLight, messages.InFired), rawEnvelope); err != nil {
		s.b.Fatal(err)
	}
	return time.Since(t0)
}

// fire fires a click and returns the time until the reply and until the
// LED showed the state it led to.
func (s *sdCard) fire() (reply, led time.Duration) {
	t0 := time.Now()
	r := mustCommand(s.b, s.nc, "fire", []byte(`{"transition":"button_click"}`))
	reply = time.Since(t0)
	return reply, s.led(r.Seq).Time.Sub(t0)
}

// clickTimes is one click's timeline, each a duration: release (from the
// request releasing the button) and decided (from the click's decision)
// until shown on the LED; and the steps from the decision: stored (the
// input stored), applied (its state output stored), shown (on the LED).
type clickTimes struct {
	release, decided       time.Duration
	stored, applied, shown time.Duration
}

func (s *sdCard) click() clickTimes {
	ctx := context.Background()
	prev, err := s.str.GetLastMsgForSubject(ctx, subject.In(benchLight, messages.InFired))
	if err != nil {
		s.b.Fatal(err)
	}
	var t0 time.Time
	for _, e := range []string{messages.EdgeDown, messages.EdgeUp} {
		body, _ := json.Marshal(messages.ButtonRequest{Edge: e})
		t0 = time.Now()
		if _, err := s.nc.Request(subject.Cmd(benchLight, messages.VerbButton), body, requestTimeout); err != nil {
			s.b.Fatal(err)
		}
		if e == messages.EdgeDown {
			time.Sleep(8 * time.Millisecond) // past the debounce
		}
	}
	// The LED event of the first input after prev.
	ev := s.led(prev.Sequence + 1)
	in, err := s.str.GetMsg(ctx, ev.Cause)
	if err != nil {
		s.b.Fatal(err)
	}
	var env messages.Envelope
	if err := messages.DecodeEnvelope(in.Data, &env); err != nil {
		s.b.Fatal(err)
	}
	out, err := s.str.GetLastMsgForSubject(ctx, subject.Out(benchLight, messages.OutState))
	if err != nil {
		s.b.Fatal(err)
	}
	return clickTimes{
		release: ev.Time.Sub(t0),
		decided: ev.Time.Sub(env.Time),
		stored:  in.Time.Sub(env.Time),
		applied: out.Time.Sub(in.Time),
		shown:   ev.Time.Sub(out.Time),
	}
}

// led waits for the LED event of the first input at or after seq: its
// time is when the LED showed it.
func (s *sdCard) led(seq uint64) messages.LEDEvent {
	timeout := time.After(eventTimeout)
	for {
		select {
		case m := <-s.leds:
			var ev messages.LEDEvent
			if json.Unmarshal(m.Data, &ev) == nil && ev.Cause >= seq {
				return ev
			}
		case <-timeout:
			s.b.Fatalf("no LED change caused by input %d or later", seq)
		}
	}
}

// delayFsyncs attaches strace to every thread of the process pid, making
// each fsync and fdatasync return delay late, until b ends (strace then
// detaches, and the process goes on).
func delayFsyncs(b *testing.B, pid int, delay time.Duration) {
	b.Helper()
	path, err := exec.LookPath("strace")
	if err != nil {
		b.Fatalf("strace is needed (Debian's strace, which the Taskfile installs): %v", err)
	}
	out := filepath.Join(b.TempDir(), "strace.out")
	cmd := exec.Command(path, "-f", "-p", strconv.Itoa(pid), "-o", out,
		"-e", "trace=fsync,fdatasync", "-e", fmt.Sprintf("inject=fsync,fdatasync:delay_exit=%d", delay.Microseconds()))
	stderr := &lumentest.Buffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	})
	// strace says each thread it attached to on stderr; the daemon's
	// first fsync then shows in its output.
	if !lumentest.Within(10*time.Second, func() bool { return strings.Contains(stderr.String(), "attached") }) {
		b.Fatalf("strace did not attach to %d in 10 s: %s", pid, stderr.String())
	}
}
