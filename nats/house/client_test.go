package house_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

// readOnly is what an account of clients imports from account from to
// read streams with no consumer (issue 27), and what from exports for
// it: the read-only JetStream API of each stream.
func readOnly(from string, streams ...string) (exports, imports []string) {
	add := func(subj, how string) {
		exports = append(exports, fmt.Sprintf("{service: %q%s}", subj, how))
		imports = append(imports, fmt.Sprintf("{service: {account: %s, subject: %q}}", from, subj))
	}
	for _, s := range []string{"$JS.API.INFO", "$JS.API.STREAM.NAMES", "$JS.API.STREAM.LIST"} {
		add(s, "")
	}
	for _, s := range streams {
		add("$JS.API.STREAM.INFO."+s, "")
		add("$JS.API.STREAM.MSG.GET."+s, "")
		// A batched direct get answers with many messages.
		add("$JS.API.DIRECT.GET."+s, ", response_type: stream")
		add("$JS.API.DIRECT.GET."+s+".>", ", response_type: stream")
	}
	return exports, imports
}

// houseConfig is a Pi and a hub in one server, as accounts: PI holds the
// Pi's journal (LUMEN) and its house consumer, reached from HUB as the
// hub reaches a Pi's domain ($JS.kitchenpi.API); HUB holds the house
// stream, which copies it, and the house's buckets. Their clients are
// PICLIENTS and CLIENTS, which import only the read-only API of their
// daemon's streams.
func houseConfig() string {
	piExports, piClients := readOnly("PI", subject.Stream)
	hubExports, hubClients := readOnly("HUB", house.Stream, "KV_"+house.LightsBucket, "KV_"+house.PisBucket)
	piExports = append(piExports, `{service: "$JS.API.>"}`, `{service: "$JS.FC.>"}`, `{stream: "deliver.>"}`)
	return fmt.Sprintf(`accounts {
	PI: { jetstream: enabled, users: [{user: pi, password: p}], exports: [%s] }
	HUB: { jetstream: enabled, users: [{user: hub, password: h}], exports: [%s], imports: [
		{service: {account: PI, subject: "$JS.API.>"}, to: "$JS.kitchenpi.API.>"},
		{service: {account: PI, subject: "$JS.FC.>"}},
		{stream: {account: PI, subject: "deliver.>"}} ] }
	PICLIENTS: { users: [{user: piclient, password: c}], imports: [%s] }
	CLIENTS: { users: [{user: client, password: c}], imports: [%s] }
}`, strings.Join(piExports, ", "), strings.Join(hubExports, ", "), strings.Join(piClients, ", "), strings.Join(hubClients, ", "))
}

func startHouseAccounts(t *testing.T) string {
	t.Helper()
	opts := &server.Options{}
	if err := opts.ProcessConfigString(houseConfig()); err != nil {
		t.Fatal(err)
	}
	opts.Host, opts.Port = "127.0.0.1", -1
	opts.JetStream, opts.StoreDir = true, t.TempDir()
	opts.NoLog, opts.NoSigs = true, true
	s, err := server.NewServer(opts)
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("nats-server did not start")
	}
	t.Cleanup(s.Shutdown)
	return s.ClientURL()
}

func connectAs(t *testing.T, url, user, password string) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, nats.UserInfo(user, password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// A client of a hub, whose account imports only the read-only API of the
// house stream and buckets, opens the house journal and reads it with
// the Pi's sequences (replay, follow, last message, lights), lists the
// unreachable lights and says why none runs; a client of a Pi, whose
// account imports only LUMEN's, opens LUMEN and sees no hub.
func TestClientReadsHouse(t *testing.T) {
	url := startHouseAccounts(t)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	pijs, hubjs := connectAs(t, url, "pi", "p"), connectAs(t, url, "hub", "h")
	if err := broker.EnsureStreams(ctx, pijs, 0, nil); err != nil {
		t.Fatal(err)
	}
	pj := journal.New(pijs)
	// The Pi's first events are gone before the house copies: the house's
	// sequences (from 1) are not the Pi's (from 6), as at a hub with
	// several Pis.
	for range 5 {
		if _, err := pj.Append(ctx, subject.In("kitchen", "noise"), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	if err := pj.Purge(ctx, "", 6); err != nil {
		t.Fatal(err)
	}
	for i := 6; i <= 20; i++ {
		subj := subject.In("kitchen", "button")
		if i%2 == 0 {
			subj = subject.Out("kitchen", "state")
		}
		if _, err := pj.Append(ctx, subj, fmt.Appendf(nil, "%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := pijs.CreateOrUpdatePushConsumer(ctx, subject.Stream, house.ConsumerConfig("kitchenpi")); err != nil {
		t.Fatal(err)
	}
	reg := house.Registry{Pis: []house.Pi{{Name: "kitchenpi", Lights: []string{"kitchen"}}}}
	if _, err := hubjs.CreateOrUpdateStream(ctx, house.StreamConfig(reg, 1<<30)); err != nil {
		t.Fatal(err)
	}
	bucket := func(name string, put map[string]string, gone ...string) {
		kv, err := hubjs.CreateOrUpdateKeyValue(ctx, jetstream.KeyValueConfig{Bucket: name, History: 1})
		if err != nil {
			t.Fatal(err)
		}
		for k, v := range put {
			if _, err := kv.Put(ctx, k, []byte(v)); err != nil {
				t.Fatal(err)
			}
		}
		for i, k := range gone {
			if _, err := kv.Put(ctx, k, []byte("x")); err != nil {
				t.Fatal(err)
			}
			del := kv.Delete
			if i%2 == 1 {
				del = kv.Purge
			}
			if err := del(ctx, k); err != nil {
				t.Fatal(err)
			}
		}
	}
	since := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	state, _ := json.Marshal(house.PiState{Lights: []string{"kitchen"}, Since: since})
	bucket(house.LightsBucket, map[string]string{"kitchen": "kitchenpi"}, "attic", "cellar")
	bucket(house.PisBucket, map[string]string{"kitchenpi": string(state)}, "gonepi", "lostpi")
	copied := func(n uint64) {
		t.Helper()
		lumentest.WaitFor(t, 60*time.Second, fmt.Sprintf("the house to have %d events", n), func() bool {
			s, err := hubjs.Stream(ctx, house.Stream)
			return err == nil && s.CachedInfo().State.LastSeq >= n
		})
	}
	copied(15)

	cjs := connectAs(t, url, "client", "c")
	j, err := house.OpenJournal(ctx, cjs)
	if err != nil {
		t.Fatal(err)
	}
	if !j.Copied() {
		t.Fatal("the hub's client opened no copy")
	}
	var got []string
	err = j.Replay(ctx, subject.Events("kitchen"), 9, 12, func(m journal.Msg) error {
		got = append(got, fmt.Sprintf("%d:%s", m.Seq, m.Data))
		return nil
	})
	if err != nil || strings.Join(got, " ") != "9:9 10:10 11:11 12:12" {
		t.Errorf("replay of the Pi's 9..12 at the hub: %v, %v", got, err)
	}
	if m, err := j.LastMsg(ctx, subject.AllIn("kitchen")); err != nil || m.Seq != 19 || string(m.Data) != "19" {
		t.Errorf("the last kitchen input at the hub: %d %q, %v; want 19", m.Seq, m.Data, err)
	}
	if lights, err := j.Lights(ctx); err != nil || strings.Join(lights, ",") != "kitchen" {
		t.Errorf("the house's lights: %v, %v", lights, err)
	}
	if seq, err := j.SeqAt(ctx, "", time.Now()); err != nil || seq != 0 {
		t.Errorf("SeqAt through a copy = %d, %v; want 0", seq, err)
	}

	// Follow from the Pi's 18: the history, then an event the Pi
	// journals now, once the house has it.
	events := make(chan uint64, 16)
	fctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		done <- j.Follow(fctx, subject.Out("kitchen", "state"), 18, func(m journal.Msg) error {
			events <- m.Seq
			return nil
		}, func() { events <- 0 })
	}()
	want := []uint64{18, 20, 0, 22}
	for i, w := range want {
		if w == 22 {
			for _, subj := range []string{subject.In("kitchen", "button"), subject.Out("kitchen", "state")} {
				if _, err := pj.Append(ctx, subj, nil); err != nil {
					t.Fatal(err)
				}
			}
		}
		select {
		case g := <-events:
			if g != w {
				t.Fatalf("follow at the hub: event %d is %d, want %d (0: caught up)", i, g, w)
			}
		case err := <-done:
			t.Fatalf("Follow ended: %v", err)
		case <-ctx.Done():
			t.Fatalf("follow at the hub: no event %d", w)
		}
	}
	stop()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Follow after its context ended = %v", err)
	}

	absent, err := house.Unreachable(ctx, cjs, nil)
	if err != nil || len(absent) != 1 || absent[0] != (house.Absent{Light: "kitchen", Pi: "kitchenpi", Since: since}) {
		t.Errorf("Unreachable = %+v, %v", absent, err)
	}
	if absent, err := house.Unreachable(ctx, cjs, []string{"kitchen"}); err != nil || len(absent) != 0 {
		t.Errorf("Unreachable with kitchen running = %+v, %v", absent, err)
	}
	if err := house.NoLights(ctx, cjs, url); err == nil || !strings.Contains(err.Error(), "none of its Pis (kitchenpi) is connected") {
		t.Errorf("NoLights at the hub = %v", err)
	}

	// At the Pi, its own client reads LUMEN and sees no hub.
	picjs := connectAs(t, url, "piclient", "c")
	pj2, err := house.OpenJournal(ctx, picjs)
	if err != nil || pj2.Copied() {
		t.Fatalf("OpenJournal at the Pi: copied %v, %v", pj2 != nil && pj2.Copied(), err)
	}
	if m, err := pj2.LastMsg(ctx, subject.Events("kitchen")); err != nil || m.Seq != 22 {
		t.Errorf("the Pi's last kitchen event: %d, %v", m.Seq, err)
	}
	if absent, err := house.Unreachable(ctx, picjs, nil); err != nil || absent != nil {
		t.Errorf("Unreachable at a Pi = %+v, %v", absent, err)
	}
	if err := house.NoLights(ctx, picjs, url); err == nil || !strings.Contains(err.Error(), "start one with 'lumen up'") {
		t.Errorf("NoLights at a Pi = %v", err)
	}

	// Neither account made a consumer beyond the house's own.
	if s, err := pijs.Stream(ctx, subject.Stream); err != nil || s.CachedInfo().State.Consumers != 1 {
		t.Errorf("the Pi's journal has consumers beyond the house's: %+v, %v", s, err)
	}
}
