package broker_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/subject"
)

func start(t *testing.T, cfg broker.Config) *broker.Broker {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b, err := broker.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(b.Shutdown)
	return b
}

func TestConfigValidate(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name  string
		given broker.Config
		want  string // substring of the error, "" for valid
	}{
		{name: "defaults", given: broker.Config{DataDir: dir}},
		{name: "random port", given: broker.Config{DataDir: dir, Listen: "127.0.0.1:0"}},
		{name: "localhost", given: broker.Config{DataDir: dir, Listen: "localhost:4222"}},
		{name: "loopback v6", given: broker.Config{DataDir: dir, Listen: "[::1]:0"}},
		{name: "loopback /8", given: broker.Config{DataDir: dir, Listen: "127.1.2.3:0"}},
		{name: "sync always", given: broker.Config{DataDir: dir, Sync: broker.SyncAlways}},
		{name: "sync batch", given: broker.Config{DataDir: dir, Sync: broker.SyncBatch}},
		{name: "all interfaces with user", given: broker.Config{DataDir: dir, Listen: "0.0.0.0:4222", User: "u", Password: "p"}},
		{name: "lan address with user", given: broker.Config{DataDir: dir, Listen: "192.168.1.10:4222", User: "u", Password: "p"}},
		{name: "no data dir", given: broker.Config{}, want: "set Config.DataDir"},
		{name: "unknown sync", given: broker.Config{DataDir: dir, Sync: "never"}, want: `use "always"`},
		{name: "all interfaces without credentials", given: broker.Config{DataDir: dir, Listen: "0.0.0.0:4222"}, want: "without credentials"},
		{name: "empty host without credentials", given: broker.Config{DataDir: dir, Listen: ":4222"}, want: "without credentials"},
		{name: "lan name without credentials", given: broker.Config{DataDir: dir, Listen: "pi.local:4222"}, want: "without credentials"},
		{name: "v6 any without credentials", given: broker.Config{DataDir: dir, Listen: "[::]:4222"}, want: "without credentials"},
		{name: "user without password", given: broker.Config{DataDir: dir, User: "u"}, want: "both User and Password"},
		{name: "password without user", given: broker.Config{DataDir: dir, Password: "p"}, want: "both User and Password"},
		{name: "the daemon's user", given: broker.Config{DataDir: dir, User: broker.DaemonUser, Password: "p"}, want: "is Lumen's own"},
		{name: "no port", given: broker.Config{DataDir: dir, Listen: "127.0.0.1"}, want: "not host:port"},
		{name: "bad port", given: broker.Config{DataDir: dir, Listen: "127.0.0.1:http"}, want: "not a number"},
		{name: "port too big", given: broker.Config{DataDir: dir, Listen: "127.0.0.1:70000"}, want: "not a number"},
		{name: "negative max bytes", given: broker.Config{DataDir: dir, MaxBytes: -1}, want: "max bytes"},
		{name: "negative max payload", given: broker.Config{DataDir: dir, MaxPayload: -1}, want: "max payload"},
		{name: "mqtt loopback", given: broker.Config{DataDir: dir, MQTT: "127.0.0.1:0"}},
		{name: "mqtt lan with user", given: broker.Config{DataDir: dir, Listen: "0.0.0.0:4222", MQTT: "0.0.0.0:1883", User: "u", Password: "p"}},
		{name: "mqtt lan without credentials", given: broker.Config{DataDir: dir, MQTT: "0.0.0.0:1883"}, want: "MQTT on \"0.0.0.0:1883\" without credentials"},
		{name: "mqtt no port", given: broker.Config{DataDir: dir, MQTT: "127.0.0.1"}, want: "MQTT address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.given.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Validate() = %v, want error containing %q", err, tt.want)
			}
			if !strings.HasPrefix(err.Error(), "broker: ") {
				t.Fatalf("error %q lacks the package prefix", err)
			}
		})
	}
}

func TestStartRestartKeepsData(t *testing.T) {
	tests := []struct {
		name string
		sync string
	}{
		{name: "default is always", sync: ""},
		{name: "always", sync: broker.SyncAlways},
		{name: "batch", sync: broker.SyncBatch},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			cfg := broker.Config{DataDir: dir, Listen: "127.0.0.1:0", Sync: tt.sync}

			b := start(t, cfg)
			if url := b.ClientURL(); !strings.HasPrefix(url, "nats://127.0.0.1:") || strings.HasSuffix(url, ":0") {
				t.Fatalf("ClientURL() = %q, want the bound port on 127.0.0.1", url)
			}
			// The daemon's connection: only it journals.
			nc, err := b.Connect()
			if err != nil {
				t.Fatalf("connect in process: %v", err)
			}
			js, err := jetstream.New(nc)
			if err != nil {
				t.Fatal(err)
			}
			ack, err := js.Publish(ctx, subject.In("kitchen", "fired"), []byte(`{"v":1}`))
			if err != nil {
				t.Fatalf("publish: %v", err)
			}
			nc.Close()
			b.Shutdown()
			b.Shutdown() // idempotent

			b = start(t, cfg)
			str, err := b.JetStream().Stream(ctx, subject.Stream)
			if err != nil {
				t.Fatalf("stream after restart: %v", err)
			}
			msg, err := str.GetMsg(ctx, ack.Sequence)
			if err != nil {
				t.Fatalf("message %d after restart: %v", ack.Sequence, err)
			}
			if string(msg.Data) != `{"v":1}` || msg.Subject != subject.In("kitchen", "fired") {
				t.Fatalf("after restart got %s %q", msg.Subject, msg.Data)
			}
		})
	}
}

func TestStartEnsuresStreams(t *testing.T) {
	ctx := context.Background()
	b := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MaxBytes: 1 << 20})
	js := b.JetStream()

	str, err := js.Stream(ctx, subject.Stream)
	if err != nil {
		t.Fatal(err)
	}
	got := str.CachedInfo().Config
	if len(got.Subjects) != 1 || got.Subjects[0] != subject.AllEvents ||
		got.Storage != jetstream.FileStorage || got.Retention != jetstream.LimitsPolicy ||
		got.Discard != jetstream.DiscardNew || got.MaxBytes != 1<<20 ||
		got.Duplicates != 2*time.Minute || !got.AllowDirect {
		t.Fatalf("stream config = %+v", got)
	}
	kv, err := js.KeyValue(ctx, subject.SnapshotBucket)
	if err != nil {
		t.Fatal(err)
	}
	st, err := kv.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.History() != 1 || st.BackingStore() != "JetStream" {
		t.Fatalf("bucket status: history %d, store %s", st.History(), st.BackingStore())
	}

	// Idempotent, and it applies a new budget.
	if err := broker.EnsureStreams(ctx, js, 2<<20, nil); err != nil {
		t.Fatalf("EnsureStreams again: %v", err)
	}
	info, err := str.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Config.MaxBytes != 2<<20 {
		t.Fatalf("MaxBytes after update = %d", info.Config.MaxBytes)
	}
}

func TestStartMaxPayload(t *testing.T) {
	b := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MaxPayload: 8 << 20})
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if got := nc.MaxPayload(); got != 8<<20 {
		t.Fatalf("MaxPayload() = %d, want %d", got, 8<<20)
	}
}

func TestStartFailsFast(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()

	busyDir := t.TempDir()
	start(t, broker.Config{DataDir: busyDir, Listen: "127.0.0.1:0"})

	addr := taken.Addr().String()
	tests := []struct {
		name  string
		given broker.Config
		want  string
		inUse bool // errors.Is syscall.EADDRINUSE
	}{
		{name: "port in use", given: broker.Config{DataDir: t.TempDir(), Listen: addr}, inUse: true,
			want: "broker: cannot listen for clients on " + addr + ": address already in use: another server or program has this port; stop it, or pick another port (port 0 picks a free one)"},
		{name: "mqtt port in use", given: broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MQTT: addr}, inUse: true,
			want: "broker: cannot listen for MQTT clients on " + addr + ": address already in use"},
		{name: "data dir in use", given: broker.Config{DataDir: busyDir, Listen: "127.0.0.1:0"}, want: "in use by another running server"},
		{name: "not loopback without credentials", given: broker.Config{DataDir: t.TempDir(), Listen: "0.0.0.0:0"}, want: "without credentials"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			began := time.Now()
			b, err := broker.Start(ctx, tt.given)
			if err == nil {
				b.Shutdown()
				t.Fatal("Start succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start() = %v, want error containing %q", err, tt.want)
			}
			if errors.Is(err, syscall.EADDRINUSE) != tt.inUse {
				t.Fatalf("Start() = %v: errors.Is(err, syscall.EADDRINUSE) is %v", err, !tt.inUse)
			}
			if d := time.Since(began); d > 2*time.Second {
				t.Fatalf("Start took %v to fail", d)
			}
		})
	}

	// A failed start released the directory it had locked.
	t.Run("dir reusable after failure", func(t *testing.T) {
		dir := t.TempDir()
		if _, err := broker.Start(context.Background(), broker.Config{DataDir: dir, Listen: taken.Addr().String()}); err == nil {
			t.Fatal("Start on a taken port succeeded")
		}
		start(t, broker.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	})
}

// TestHoldClients: with HoldClients the client port stays closed while
// in-process connections work, and opens at Listen (with the port it
// picked in ClientURL); a taken port fails there as Start would. A
// JetStream reload before Listen (taking a smaller budget) keeps the
// random port.
func TestHoldClients(t *testing.T) {
	// A data dir made under a larger budget: the start reloads JetStream
	// to take the smaller one.
	dir := t.TempDir()
	former, err := broker.Start(context.Background(), broker.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	former.Shutdown()
	b := start(t, broker.Config{DataDir: dir, Listen: "127.0.0.1:0", HoldClients: true,
		StoreMax: 64 << 20, MaxBytes: broker.StreamBytes(64 << 20)})
	nc, err := b.Connect()
	if err != nil {
		t.Fatalf("in-process connection before Listen: %v", err)
	}
	defer nc.Close()
	if _, err := nc.Subscribe(subject.Cmd("held", "ping"), func(m *nats.Msg) { _ = m.Respond([]byte("pong")) }); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := b.Listen(); err != nil {
		t.Fatalf("Listen: %v", err)
	}
	if err := b.Listen(); err != nil {
		t.Fatalf("Listen again: %v", err)
	}
	if strings.HasSuffix(b.ClientURL(), ":0") || strings.HasSuffix(b.ClientURL(), ":-1") {
		t.Fatalf("ClientURL %s after Listen: want the port it picked", b.ClientURL())
	}
	out, err := nats.Connect(b.ClientURL(), nats.Token("wrong"))
	if err == nil {
		out.Close()
		t.Fatal("a client with a wrong password connected")
	}
	out, err = nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatalf("a client after Listen: %v", err)
	}
	defer out.Close()
	if m, err := out.Request(subject.Cmd("held", "ping"), nil, 5*time.Second); err != nil || string(m.Data) != "pong" {
		t.Fatalf("request over the port = %v, %v", m, err)
	}

	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	held := start(t, broker.Config{DataDir: t.TempDir(), Listen: addr, HoldClients: true})
	err = held.Listen()
	if !errors.Is(err, syscall.EADDRINUSE) || !strings.Contains(err.Error(), "cannot listen for clients on "+addr) {
		t.Fatalf("Listen on a taken port = %v, want EADDRINUSE naming %s", err, addr)
	}
}

func TestCredentials(t *testing.T) {
	tests := []struct {
		name  string
		given broker.Config
		auth  nats.Option
	}{
		{name: "user and password", given: broker.Config{User: "lumen", Password: "s3cret"}, auth: nats.UserInfo("lumen", "s3cret")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.given
			cfg.DataDir = t.TempDir()
			// Loopback stands in for 0.0.0.0 so the test exposes nothing.
			cfg.Listen = "127.0.0.1:0"
			b := start(t, cfg) // its own in-process client had to authenticate

			nc, err := b.Connect()
			if err != nil {
				t.Fatalf("in-process Connect: %v", err)
			}
			nc.Close()

			if nc, err := nats.Connect(b.ClientURL(), nats.NoReconnect()); err == nil {
				nc.Close()
				t.Fatal("TCP connect without credentials succeeded")
			}
			nc, err = nats.Connect(b.ClientURL(), tt.auth)
			if err != nil {
				t.Fatalf("TCP connect with credentials: %v", err)
			}
			nc.Close()
		})
	}
}

func TestLogf(t *testing.T) {
	lines := make(chan string, 1000)
	b := start(t, broker.Config{
		DataDir: t.TempDir(),
		Listen:  "127.0.0.1:0",
		Sync:    broker.SyncBatch,
		Logf: func(format string, args ...any) {
			select {
			case lines <- format:
			default:
			}
		},
	})
	b.Shutdown()
	close(lines)
	var sawServer, sawBatch bool
	for l := range lines {
		sawServer = sawServer || strings.HasPrefix(l, "nats: ")
		sawBatch = sawBatch || strings.Contains(l, "sync batch")
	}
	if !sawServer || !sawBatch {
		t.Fatalf("server lines %v, sync batch warning %v", sawServer, sawBatch)
	}
}
