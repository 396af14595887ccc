package light_test

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/lumen-home/lumen/actors/light"
	"github.com/lumen-home/lumen/internal/clock"
	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// BenchmarkLightApply journals b.N inputs straight into an in-process
// broker (sync batch) and waits until the light has applied them all: the
// light actor's own cost, without a daemon process or TCP clients. The
// daemon-level figures are in bench/.
func BenchmarkLightApply(b *testing.B) {
	ctx := context.Background()
	sys, pid, j := startBenchLight(b)
	subj := subject.In("k", messages.InFired)
	body := []byte(`{"transition":"tick"}`)
	b.ResetTimer()
	var (
		last *journal.Pending
		err  error
	)
	for range b.N {
		if last, err = j.AppendAsync(subj, body); err != nil {
			b.Fatal(err)
		}
	}
	seq, err := last.Wait(ctx)
	if err != nil {
		b.Fatal(err)
	}
	lumentest.WaitEvery(b, time.Minute, time.Millisecond, "the light to apply every input", func() bool {
		res, err := sys.Root.RequestFuture(pid, &light.Get{}, 10*time.Second).Result()
		if err != nil {
			b.Fatal(err)
		}
		return res.(*messages.GetReply).Seq >= seq
	})
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
}

// startBenchLight starts a broker (sync batch) and the light "k" with a
// counting tick rule.
func startBenchLight(b *testing.B) (*actor.ActorSystem, *actor.PID, *journal.Journal) {
	b.Helper()
	br, err := broker.Start(context.Background(), broker.Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", Sync: "batch"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(br.Shutdown)
	j := journal.New(br.JetStream())
	props, err := light.Props(light.Config{Name: "k", Journal: j, Clock: clock.System(clock.Trust)})
	if err != nil {
		b.Fatal(err)
	}
	sys := actor.NewActorSystem(actor.WithLoggerFactory(quietLogger))
	pid := sys.Root.Spawn(props)
	b.Cleanup(func() { _ = sys.Root.StopFuture(pid).Wait() })
	res, err := sys.Root.RequestFuture(pid, &light.Command{Type: messages.InConfig, Data: json.RawMessage(`{"op":"apply",
		"states":[{"name":"on","r":255,"g":255,"b":255}],
		"rules":[{"from":"*","on":"tick","to":"on","action":"setData('n', (getData('n')||0)+1)"}]}`)}, 10*time.Second).Result()
	if err != nil {
		b.Fatal(err)
	}
	if e, ok := res.(*messages.ErrorReply); ok {
		b.Fatal(e.Error)
	}
	return sys, pid, j
}

func quietLogger(*actor.ActorSystem) *slog.Logger {
	return slog.New(slog.NewTextHandler(io.Discard, nil))
}

// BenchmarkRawAppendAsync is the baseline of BenchmarkLightApply: the same
// inputs journaled the same way, with no light consuming them.
func BenchmarkRawAppendAsync(b *testing.B) {
	ctx := context.Background()
	br, err := broker.Start(ctx, broker.Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", Sync: "batch"})
	if err != nil {
		b.Fatal(err)
	}
	defer br.Shutdown()
	j := journal.New(br.JetStream())
	subj := subject.In("k", messages.InFired)
	body := []byte(`{"transition":"tick"}`)
	b.ResetTimer()
	var last *journal.Pending
	for range b.N {
		if last, err = j.AppendAsync(subj, body); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := last.Wait(ctx); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "inputs/s")
}

// BenchmarkLightCommand sends one fire command at a time to the light actor
// and waits for its reply (in-process broker, sync batch): the command
// path's own latency. Baseline: BenchmarkRawAppend.
func BenchmarkLightCommand(b *testing.B) {
	sys, pid, _ := startBenchLight(b)
	fire := &light.Command{Type: messages.InFired, Data: json.RawMessage(`{"transition":"tick"}`)}
	b.ResetTimer()
	for range b.N {
		res, err := sys.Root.RequestFuture(pid, fire, 10*time.Second).Result()
		if err != nil {
			b.Fatal(err)
		}
		if e, ok := res.(*messages.ErrorReply); ok {
			b.Fatal(e.Error)
		}
	}
}

// BenchmarkRawAppend is one acknowledged append of a fire input to the
// same in-process broker.
func BenchmarkRawAppend(b *testing.B) {
	_, _, j := startBenchLight(b)
	subj := subject.In("other", messages.InFired)
	body := []byte(`{"v":1,"id":"Xq3mV8cR2bN7kLpT9wYz4e","type":"fired","light":"other","time":"2026-11-22T02:22:57.123456789Z","data":{"transition":"tick"}}`)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if _, err := j.Append(ctx, subj, body); err != nil {
			b.Fatal(err)
		}
	}
}
