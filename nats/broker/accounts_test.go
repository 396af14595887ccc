package broker_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// TestClientsReachOnlyExports: an outside client sees the daemon's
// events and commands, reads history, and its input reaches the ingress
// (not the journal, not other clients as it was sent); it can create,
// restore or consume nothing, and what it publishes elsewhere reaches the
// daemon under the clients' prefix.
func TestClientsReachOnlyExports(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  broker.Config
		opts []nats.Option
	}{
		{"anonymous", broker.Config{}, nil},
		{"user", broker.Config{User: "u", Password: "p"}, []nats.Option{nats.UserInfo("u", "p")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			cfg.DataDir, cfg.Listen = t.TempDir(), "127.0.0.1:0"
			b := start(t, cfg)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			d, err := b.Connect()
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ingress, _ := d.SubscribeSync(subject.AllIngress())
			outside, _ := d.SubscribeSync(subject.Outside("home.doorbell")[1])
			if _, err := d.Subscribe(subject.Cmd("demo", "get"), func(m *nats.Msg) { _ = m.Respond([]byte(`{"ok":true}`)) }); err != nil {
				t.Fatal(err)
			}
			_ = d.Flush()

			c, err := nats.Connect(b.ClientURL(), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			watch, _ := c.SubscribeSync(subject.Events("demo"))
			_ = c.Flush()

			if m, err := c.Request(subject.Cmd("demo", "get"), nil, 5*time.Second); err != nil || string(m.Data) != `{"ok":true}` {
				t.Fatalf("a command: %v, %v", m, err)
			}
			// An input reaches the ingress, and no watcher as it was sent.
			if err := c.Publish(subject.In("demo", "fired"), []byte(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			if m, err := ingress.NextMsg(5 * time.Second); err != nil || m.Subject != "lumen.sys.in.demo.fired" {
				t.Fatalf("the ingress got %v, %v", m, err)
			}
			if m, err := watch.NextMsg(300 * time.Millisecond); err == nil {
				t.Fatalf("a watcher saw the raw input on %s", m.Subject)
			}
			// What the daemon journals, watchers see.
			if _, err := journal.New(b.JetStream()).Append(ctx, subject.In("demo", "fired"), []byte(`{"v":1}`)); err != nil {
				t.Fatal(err)
			}
			if m, err := watch.NextMsg(5 * time.Second); err != nil || m.Subject != subject.In("demo", "fired") {
				t.Fatalf("the watcher got %v, %v", m, err)
			}
			if err := c.Publish("home.doorbell", []byte("ding")); err != nil {
				t.Fatal(err)
			}
			if m, err := outside.NextMsg(5 * time.Second); err != nil || string(m.Data) != "ding" {
				t.Fatalf("the daemon did not see home.doorbell: %v, %v", m, err)
			}

			js, err := jetstream.New(c)
			if err != nil {
				t.Fatal(err)
			}
			s, err := js.Stream(ctx, subject.Stream)
			if err != nil {
				t.Fatalf("stream info as a client: %v", err)
			}
			if _, err := s.GetMsg(ctx, 1); err != nil {
				t.Fatalf("get as a client: %v", err)
			}
			short, cancelShort := context.WithTimeout(ctx, 2*time.Second)
			defer cancelShort()
			if _, err := js.CreateStream(short, jetstream.StreamConfig{Name: "EVIL", Subjects: []string{"evil.>"}}); err == nil {
				t.Error("a client created a stream")
			}
			if _, err := s.CreateOrUpdateConsumer(short, jetstream.ConsumerConfig{Durable: "x"}); err == nil {
				t.Error("a client created a consumer on LUMEN")
			}
			if _, err := c.Request("$JS.API.STREAM.RESTORE.EVIL", []byte(`{"config":{"name":"EVIL"}}`), time.Second); !errors.Is(err, nats.ErrNoResponders) {
				t.Errorf("a restore: %v, want no responders", err)
			}
			if _, err := c.Request("$JS.API.STREAM.PURGE.LUMEN", nil, time.Second); !errors.Is(err, nats.ErrNoResponders) {
				t.Errorf("a purge: %v, want no responders", err)
			}
			if n, err := journal.New(b.JetStream()).LastSeq(ctx); err != nil || n != 1 {
				t.Errorf("the journal's last sequence is %d, %v; want 1", n, err)
			}
		})
	}
}

// TestMQTTInputsReachTheIngress: an MQTT client's publish to a light's
// inputs reaches the daemon's ingress, anonymous and with the clients'
// credentials.
func TestMQTTInputsReachTheIngress(t *testing.T) {
	for _, user := range []string{"", "u"} {
		var password string
		if user != "" {
			password = "pw"
		}
		b := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0", MQTT: "127.0.0.1:0", User: user, Password: password})
		d, err := b.Connect()
		if err != nil {
			t.Fatal(err)
		}
		defer d.Close()
		sub, _ := d.SubscribeSync(subject.AllIngress())
		_ = d.Flush()
		mqttPublish(t, b.MQTTAddr(), user, password, "lumen/demo/evt/in/fired", `{"v":1}`)
		if m, err := sub.NextMsg(5 * time.Second); err != nil || m.Subject != "lumen.sys.in.demo.fired" {
			t.Fatalf("user %q: the ingress got %v, %v", user, m, err)
		}
	}
}

// TestMigrateAccount: a data directory of the global account starts with
// its journal in the daemon's account.
func TestMigrateAccount(t *testing.T) {
	dir := t.TempDir()
	b := start(t, broker.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	ctx := context.Background()
	if _, err := journal.New(b.JetStream()).Append(ctx, subject.In("k", "fired"), []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	b.Shutdown()
	// As the previous version left it.
	js := filepath.Join(dir, "jetstream")
	if err := os.Rename(filepath.Join(js, broker.DaemonAccount), filepath.Join(js, "$G")); err != nil {
		t.Fatal(err)
	}
	if got := broker.StreamsDir(dir); got != filepath.Join(js, "$G", "streams") {
		t.Errorf("StreamsDir before the move = %s", got)
	}
	b = start(t, broker.Config{DataDir: dir, Listen: "127.0.0.1:0"})
	if n, err := journal.New(b.JetStream()).LastSeq(ctx); err != nil || n != 1 {
		t.Fatalf("after the move the journal's last sequence is %d, %v; want 1", n, err)
	}
	if got := broker.StreamsDir(dir); got != filepath.Join(js, broker.DaemonAccount, "streams") {
		t.Errorf("StreamsDir after the move = %s", got)
	}
	if _, err := os.Stat(filepath.Join(js, "$G")); err == nil {
		t.Error("the global account's directory is still there")
	}
}

// TestClientsCannotTouchConsumers: a client reaches no consumer of the
// daemon's account — not a light's, not the one a hub sources a Pi's
// journal through (HOUSE): delete, reset, pull and acknowledge all reach
// no one, and the consumer stays with its state.
func TestClientsCannotTouchConsumers(t *testing.T) {
	b := start(t, broker.Config{DataDir: t.TempDir(), Listen: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	j := journal.New(b.JetStream())
	for range 3 {
		if _, err := j.Append(ctx, subject.In("demo", "fired"), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	s, err := b.JetStream().Stream(ctx, subject.Stream)
	if err != nil {
		t.Fatal(err)
	}
	cons, err := s.CreateOrUpdateConsumer(ctx, jetstream.ConsumerConfig{Durable: "HOUSE", AckPolicy: jetstream.AckExplicitPolicy})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's account takes the three events: each waits for its
	// ack, which a client's forged ack would give.
	batch, err := cons.Fetch(3, jetstream.FetchMaxWait(10*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	var taken []jetstream.Msg
	for m := range batch.Messages() {
		taken = append(taken, m)
	}
	if len(taken) != 3 {
		t.Fatalf("the daemon's account took %d events, want 3: %v", len(taken), batch.Error())
	}
	c, err := nats.Connect(b.ClientURL())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, subj := range []string{
		"$JS.API.CONSUMER.DELETE.LUMEN.HOUSE", "$JS.API.CONSUMER.RESET.LUMEN.HOUSE",
		"$JS.API.CONSUMER.MSG.NEXT.LUMEN.HOUSE", "$JS.API.CONSUMER.INFO.LUMEN.HOUSE",
		"$JS.API.CONSUMER.CREATE.LUMEN.HOUSE",
	} {
		if _, err := c.Request(subj, []byte(`{}`), time.Second); err == nil {
			t.Errorf("%s answered a client", subj)
		}
	}
	if err := c.Publish("$JS.ACK.LUMEN.HOUSE.1.3.3.0.0", []byte("+ACK")); err != nil {
		t.Fatal(err)
	}
	_ = c.Flush()
	// The consumer handles its acks in the order they reach the server:
	// once the daemon's own ack of event 1 is confirmed, the client's of
	// event 3, which the server read before, would have been taken too.
	if err := taken[0].DoubleAck(ctx); err != nil {
		t.Fatal(err)
	}
	cons, err = s.Consumer(ctx, "HOUSE")
	if err != nil {
		t.Fatalf("the consumer is gone: %v", err)
	}
	info, err := cons.Info(ctx)
	if err != nil || info.AckFloor.Stream != 1 || info.NumAckPending != 2 || info.NumPending != 0 {
		t.Fatalf("the consumer changed: %+v, %v", info, err)
	}
}
