package bench

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/subject"
)

// How fast the house stream catches up with a Pi that was cut off, and
// what the benchmarks of the house share (BenchmarkHouseHundred too).

// registerPis registers pis Pis with perPi lights each at the hub of
// hubData and writes their creds; it returns the creds files and the
// lights of each Pi.
func registerPis(tb testing.TB, hubData string, pis, perPi int) (creds []string, lights [][]string) {
	tb.Helper()
	ca, err := house.EnsureCA(house.Dir(hubData))
	if err != nil {
		tb.Fatal(err)
	}
	var r house.Registry
	for p := range pis {
		name := fmt.Sprintf("pi%d", p)
		var ls []string
		for l := range perPi {
			ls = append(ls, fmt.Sprintf("l%d", p*perPi+l))
		}
		seed, err := r.Add(name, ls, time.Now())
		if err != nil {
			tb.Fatal(err)
		}
		path := filepath.Join(tb.TempDir(), name+".creds")
		if err := (house.Creds{Pi: name, Lights: ls, Seed: seed, CA: string(ca.PEM)}).Write(path); err != nil {
			tb.Fatal(err)
		}
		creds, lights = append(creds, path), append(lights, ls)
	}
	if err := r.Save(hubData); err != nil {
		tb.Fatal(err)
	}
	return creds, lights
}

// waitReachable waits until every light answers get through nc.
func waitReachable(tb testing.TB, nc *nats.Conn, lights []string) {
	tb.Helper()
	deadline := time.Now().Add(readyTimeout)
	for _, l := range lights {
		lumentest.WaitFor(tb, time.Until(deadline), "light "+l+" to answer at the hub", func() bool {
			_, err := nc.Request(subject.Cmd(l, "get"), nil, time.Second)
			return err == nil
		})
	}
}

// runServer starts a plain nats-server.
func runServer(tb testing.TB, opts *server.Options) *server.Server {
	tb.Helper()
	s, err := server.NewServer(opts)
	if err != nil {
		tb.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(readyTimeout) {
		tb.Fatal("a plain nats-server did not start")
	}
	return s
}

// catchUpEvents is how many events a Pi journals while cut off.
const catchUpEvents = 10_000

// BenchmarkHouseCatchUp: a Pi journals 10,000 events while its hub is
// down; the hub comes back, and the house stream copies them through
// the Pi's house consumer over the TLS leaf link (the Pi's server and
// the hub as lumen runs them, in process). The time is from the first
// event the hub stores to the last (the stream's own timestamps, so the
// reconnect delay is not counted). Baseline, in the same run: the same
// 10,000 messages sourced by a raw JetStream source (a server-made
// consumer) between two plain servers over a plain leaf link. ratio is
// the house's rate over the raw one (goal ≥ 0.8).
func BenchmarkHouseCatchUp(b *testing.B) {
	var ours, raw time.Duration
	for range b.N {
		ours += houseCatchUp(b)
		raw += rawCatchUpOf(b, catchUpEvents)
	}
	per := func(d time.Duration) float64 { return float64(catchUpEvents) * float64(b.N) / d.Seconds() }
	b.ReportMetric(per(ours), "house-events/s")
	b.ReportMetric(per(raw), "raw-events/s")
	b.ReportMetric(per(ours)/per(raw), "ratio")
}

// catchUpPayload is an input of the usual size.
var catchUpPayload = rawEnvelope

func houseCatchUp(b *testing.B) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	hubData := b.TempDir()
	var r house.Registry
	seed, err := r.Add("pi0", []string{benchLight}, time.Now())
	if err != nil {
		b.Fatal(err)
	}
	if err := r.Save(hubData); err != nil {
		b.Fatal(err)
	}
	ca, err := house.EnsureCA(house.Dir(hubData))
	if err != nil {
		b.Fatal(err)
	}
	leaf := lumentest.FreeAddr(b)
	runHub := func() *house.Hub {
		h, err := house.NewHub(house.HubConfig{Data: hubData, Listen: "127.0.0.1:0", LeafListen: leaf, Sync: syncMode()})
		if err != nil {
			b.Fatal(err)
		}
		if err := h.Run(ctx); err != nil {
			b.Fatal(err)
		}
		return h
	}
	hub := runHub()
	creds := house.Creds{Pi: "pi0", Lights: []string{benchLight}, Seed: seed, CA: string(ca.PEM)}
	cas, err := creds.CAPool()
	if err != nil {
		b.Fatal(err)
	}
	pi, err := broker.Start(ctx, broker.Config{DataDir: b.TempDir(), Listen: "127.0.0.1:0", Lights: []string{benchLight},
		Sync: syncMode(), Name: house.ServerName("pi0", "bench"), Domain: "pi0",
		Hub: &broker.HubLink{URL: "tls://" + leaf, Seed: seed, CAs: cas}})
	if err != nil {
		b.Fatal(err)
	}
	defer pi.Shutdown()
	if _, err := pi.JetStream().CreateOrUpdatePushConsumer(ctx, subject.Stream, house.ConsumerConfig("pi0")); err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	defer b.StartTimer()
	if err := hub.Close(); err != nil {
		b.Fatal(err)
	}
	fill(ctx, b, pi.JetStream(), subject.In(benchLight, "fired"), catchUpEvents)
	hub = runHub()
	defer hub.Close()
	return storedSince(ctx, b, hub.JetStream(), house.Stream, 0, catchUpEvents)
}

// fill journals n messages of the usual size on subj through js.
func fill(ctx context.Context, b *testing.B, js jetstream.JetStream, subj string, n uint64) {
	b.Helper()
	for i := range n {
		if _, err := js.PublishAsync(subj, catchUpPayload); err != nil {
			b.Fatal(err)
		}
		if i%1000 == 999 {
			select {
			case <-js.PublishAsyncComplete():
			case <-ctx.Done():
				b.Fatal("filling the journal took too long")
			}
		}
	}
	select {
	case <-js.PublishAsyncComplete():
	case <-ctx.Done():
		b.Fatal("filling the journal took too long")
	}
}

// storedSince waits until stream holds want messages after sequence
// after, and returns the time from the first one's storing to the last
// one's.
func storedSince(ctx context.Context, b *testing.B, js jetstream.JetStream, stream string, after, want uint64) time.Duration {
	b.Helper()
	// The figure is the stream's own times, not the poll's.
	var s jetstream.Stream
	var err error
	if !lumentest.Within(time.Until(deadlineOf(ctx)), func() bool {
		s, err = js.Stream(ctx, stream)
		return err == nil && s.CachedInfo().State.LastSeq >= after+want
	}) {
		b.Fatalf("%s never held %d new messages: %v", stream, want, err)
	}
	first, err1 := s.GetMsg(ctx, after+1)
	last, err2 := s.GetMsg(ctx, after+want)
	if err1 != nil || err2 != nil {
		b.Fatal(err1, err2)
	}
	if got := s.CachedInfo().State.LastSeq - after; got != want {
		b.Fatalf("%s holds %d new messages, want %d", stream, got, want)
	}
	return last.Time.Sub(first.Time)
}

// rawCatchUp sources counts[i] messages from each of len(counts) plain
// servers, leaf nodes of a plain hub each in its own JetStream domain,
// into one stream of the hub, and returns the time from the first message
// stored to the last.
func rawCatchUp(ctx context.Context, b *testing.B, counts []uint64) time.Duration {
	b.Helper()
	always := syncMode() == broker.SyncAlways
	hubOpts := &server.Options{ServerName: "rawhub", Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
		JetStream: true, JetStreamDomain: "hub", StoreDir: b.TempDir(), SyncAlways: always}
	leaf := lumentest.FreeAddr(b)
	host, port, _ := net.SplitHostPort(leaf)
	hubOpts.LeafNode.Host = host
	hubOpts.LeafNode.Port, _ = strconv.Atoi(port)
	hub := runServer(b, hubOpts)
	defer hub.Shutdown()
	u, err := url.Parse("nats-leaf://" + leaf)
	if err != nil {
		b.Fatal(err)
	}
	var sources []*jetstream.StreamSource
	var want uint64
	for i, count := range counts {
		domain := fmt.Sprintf("rawpi%d", i)
		opts := &server.Options{ServerName: domain, Host: "127.0.0.1", Port: server.RANDOM_PORT, NoSigs: true, NoLog: true,
			JetStream: true, JetStreamDomain: domain, StoreDir: b.TempDir(), SyncAlways: always}
		opts.LeafNode.Remotes = []*server.RemoteLeafOpts{{URLs: []*url.URL{u}}}
		pi := runServer(b, opts)
		defer pi.Shutdown()
		pnc := connect(b, pi.ClientURL())
		pjs := newJetStream(b, pnc)
		light := fmt.Sprintf("l%d", i)
		if _, err := pjs.CreateStream(ctx, jetstream.StreamConfig{Name: subject.Stream, Subjects: []string{subject.Events(light)}, Storage: jetstream.FileStorage}); err != nil {
			b.Fatal(err)
		}
		fill(ctx, b, pjs, subject.In(light, "fired"), count)
		pnc.Close()
		sources = append(sources, &jetstream.StreamSource{Name: subject.Stream, External: &jetstream.ExternalStream{APIPrefix: "$JS." + domain + ".API"}})
		want += count
	}
	lumentest.WaitFor(b, time.Until(deadlineOf(ctx)), "the raw leaf links", func() bool { return hub.NumLeafNodes() >= len(counts) })
	hjs := newJetStream(b, connect(b, hub.ClientURL(), nats.Timeout(requestTimeout)))
	if _, err := hjs.CreateStream(ctx, jetstream.StreamConfig{Name: "RAW", Storage: jetstream.FileStorage, Sources: sources}); err != nil {
		b.Fatal(err)
	}
	return storedSince(ctx, b, hjs, "RAW", 0, want)
}

// rawCatchUpOf is rawCatchUp of n messages from one plain server, its
// filling not timed.
func rawCatchUpOf(b *testing.B, n uint64) time.Duration {
	b.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), drainTimeout)
	defer cancel()
	b.StopTimer()
	defer b.StartTimer()
	return rawCatchUp(ctx, b, []uint64{n})
}

// deadlineOf is ctx's deadline, or a minute from now when it has none:
// how long a poll under ctx may last.
func deadlineOf(ctx context.Context) time.Time {
	if d, ok := ctx.Deadline(); ok {
		return d
	}
	return time.Now().Add(time.Minute)
}
