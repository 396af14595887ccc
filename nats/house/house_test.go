package house_test

import (
	"context"
	"crypto/x509"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/nats-io/nkeys"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
	"github.com/lumen-home/lumen/nats/journal"
	"github.com/lumen-home/lumen/nats/subject"
)

func TestValidPi(t *testing.T) {
	for _, tc := range []struct {
		name, err string
	}{
		{"kitchenpi", ""},
		{"pi-2_b", ""},
		{"", "use a-z"},
		{"Kitchen", "use a-z"},
		{"a.b", "use a-z"},
		{"hub", "the hub's own"},
		{strings.Repeat("p", 33), "longer than 32"},
	} {
		err := house.ValidPi(tc.name)
		if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("ValidPi(%q) = %v, want %q", tc.name, err, tc.err)
		}
	}
}

func TestRegistry(t *testing.T) {
	data := t.TempDir()
	r, err := house.LoadRegistry(data)
	if err != nil || r.Generation != 0 || len(r.Pis) != 0 {
		t.Fatalf("a new hub's registry: %+v, %v", r, err)
	}
	now := time.Date(2026, 11, 25, 8, 0, 0, 0, time.UTC)
	seed, err := r.Add("kitchenpi", []string{"kitchen", "hall"}, now)
	if err != nil || !strings.HasPrefix(seed, "SU") {
		t.Fatalf("Add: %q, %v", seed, err)
	}
	for _, tc := range []struct {
		pi     string
		lights []string
		err    string
	}{
		{"kitchenpi", []string{"desk"}, "registered already"},
		{"deskpi", nil, "give the Pi's lights"},
		{"deskpi", []string{"hall"}, "light hall is Pi kitchenpi's already"},
		{"deskpi", []string{"desk", "desk"}, "listed twice"},
		{"deskpi", []string{"Desk!"}, "Desk!"},
		{"hub", []string{"desk"}, "the hub's own"},
	} {
		if _, err := r.Add(tc.pi, tc.lights, now); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("Add(%s, %v) = %v, want %q", tc.pi, tc.lights, err, tc.err)
		}
	}
	if _, err := r.Add("deskpi", []string{"desk"}, now); err != nil {
		t.Fatal(err)
	}
	if err := r.Save(data); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(house.Dir(data), "registry.json")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("registry file: %v, %v", fi, err)
	}
	got, err := house.LoadRegistry(data)
	if err != nil {
		t.Fatal(err)
	}
	if got.Generation != 1 || len(got.Pis) != 2 || got.Owner("hall") != "kitchenpi" || got.Owner("desk") != "deskpi" || got.Owner("attic") != "" {
		t.Errorf("read back: %+v", got)
	}
	if p := got.Find("kitchenpi"); p == nil || !p.Added.Equal(now) || strings.HasPrefix(p.PublicKey, "SU") || !strings.HasPrefix(p.PublicKey, "U") {
		t.Errorf("the hub keeps the public key only: %+v", p)
	}
	if err := got.Remove("attic"); err == nil || !strings.Contains(err.Error(), "kitchenpi, deskpi") {
		t.Errorf("Remove of an unknown Pi: %v", err)
	}
	if err := got.Remove("kitchenpi"); err != nil || got.Find("kitchenpi") != nil || got.Owner("hall") != "" {
		t.Errorf("Remove: %v, %+v", err, got)
	}
	// Its lights are free again.
	if _, err := got.Add("hallpi", []string{"hall"}, now); err != nil {
		t.Error(err)
	}
	if err := got.Save(data); err != nil {
		t.Fatal(err)
	}
	if r, _ := house.LoadRegistry(data); r.Generation != 2 {
		t.Errorf("generation %d after two saves", r.Generation)
	}

	if err := os.WriteFile(filepath.Join(house.Dir(data), "registry.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := house.LoadRegistry(data); err == nil || !strings.Contains(err.Error(), "registry.json") {
		t.Errorf("a broken registry: %v", err)
	}
}

func TestCreds(t *testing.T) {
	dir := t.TempDir()
	ca, err := house.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	var r house.Registry
	seed := register(t, &r, "kitchenpi", "kitchen", "hall")
	c := house.Creds{Pi: "kitchenpi", Lights: []string{"kitchen", "hall"}, Seed: seed, CA: string(ca.PEM)}
	path := filepath.Join(dir, "kitchenpi.creds")
	if err := c.Write(path); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the creds hold a secret: %v, %v", fi, err)
	}
	got, err := house.ReadCreds(path)
	if err != nil {
		t.Fatal(err)
	}
	if pub, err := got.PublicKey(); err != nil || pub != r.Find("kitchenpi").PublicKey {
		t.Errorf("the creds' key %s, %v; the hub's %s", pub, err, r.Find("kitchenpi").PublicKey)
	}
	if m := got.Allows([]string{"kitchen", "attic", "hall", "desk"}); strings.Join(m, ",") != "attic,desk" {
		t.Errorf("Allows: missing %v", m)
	}

	for _, tc := range []struct {
		name, body, err string
	}{
		{"not json", "hello", "not a file 'lumen hub pi add' wrote"},
		{"unknown key", `{"pi":"kitchenpi","extra":1}`, "not a file 'lumen hub pi add' wrote"},
		{"no lights", `{"pi":"kitchenpi","lights":[],"seed":"` + seed + `"}`, "lists no light"},
		{"bad seed", `{"pi":"kitchenpi","lights":["kitchen"],"seed":"SUxyz"}`, "not an nkey seed"},
		{"no CA", `{"pi":"kitchenpi","lights":["kitchen"],"seed":"` + seed + `","ca":"x"}`, "no house CA"},
		{"bad pi", `{"pi":"hub","lights":["kitchen"],"seed":"` + seed + `"}`, "the hub's own"},
	} {
		p := filepath.Join(dir, "bad.creds")
		if err := os.WriteFile(p, []byte(tc.body), 0o600); err != nil {
			t.Fatal(err)
		}
		if _, err := house.ReadCreds(p); err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.err)
		}
	}
	if _, err := house.ReadCreds(filepath.Join(dir, "none.creds")); err == nil || !strings.Contains(err.Error(), "none.creds") {
		t.Errorf("a missing file: %v", err)
	}
}

// The CA is made once and kept; the hub's certificate it signs covers
// the hosts asked for, and nothing else.
func TestCA(t *testing.T) {
	dir := t.TempDir()
	ca, err := house.EnsureCA(dir)
	if err != nil {
		t.Fatal(err)
	}
	again, err := house.EnsureCA(dir)
	if err != nil || !again.Cert.Equal(ca.Cert) {
		t.Fatalf("a second EnsureCA made another CA: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(dir, "ca-key.pem")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("the CA key: %v, %v", fi, err)
	}
	cert, err := ca.ServerCert(house.HubHosts("hub.example", []string{"10.0.0.7"}))
	if err != nil {
		t.Fatal(err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca.Cert)
	for host, ok := range map[string]bool{"hub.example": true, "10.0.0.7": true, "127.0.0.1": true, "localhost": true, "other.example": false, "10.0.0.8": false} {
		_, err := leaf.Verify(x509.VerifyOptions{Roots: pool, DNSName: host})
		if (err == nil) != ok {
			t.Errorf("certificate for %s: %v, want ok=%v", host, err, ok)
		}
	}
	if hosts := house.HubHosts("0.0.0.0", nil); strings.Contains(strings.Join(hosts, " "), "0.0.0.0") {
		t.Errorf("an unspecified listen address is no name: %v", hosts)
	}
}

// pi starts a Pi's server joined to hub as name, running lights.
func pi(t *testing.T, hub *house.Hub, data, name, seed string, lights ...string) *broker.Broker {
	t.Helper()
	return piVia(t, hub.LeafAddr(), data, name, "test", seed, lights...)
}

// piVia starts a Pi's server, instance inst of name, that dials the hub
// at leaf.
func piVia(t *testing.T, leaf, data, name, inst, seed string, lights ...string) *broker.Broker {
	t.Helper()
	ca, err := house.EnsureCA(house.Dir(data))
	if err != nil {
		t.Fatal(err)
	}
	creds := house.Creds{Pi: name, Lights: lights, Seed: seed, CA: string(ca.PEM)}
	cas, err := creds.CAPool()
	if err != nil {
		t.Fatal(err)
	}
	_, port, _ := net.SplitHostPort(leaf)
	ctx := context.Background()
	b := lumentest.StartBus(t, broker.Config{Lights: lights, Name: house.ServerName(name, inst), Domain: name,
		Hub: &broker.HubLink{URL: "tls://localhost:" + port, Seed: seed, CAs: cas}}).Broker
	if _, err := b.JetStream().CreateOrUpdatePushConsumer(ctx, subject.Stream, house.ConsumerConfig(name)); err != nil {
		t.Fatal(err)
	}
	return b
}

// A hub and a Pi in process: the house stream copies the Pi's journal;
// each event names its journal as SourceName says and keeps its own
// sequence there; OpenJournal at the hub reads it back with that
// sequence; and the Pi cannot publish for a light that is not its own.
func TestHouseStream(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	seed := register(t, &r, "kitchenpi", "kitchen")
	hallSeed := register(t, &r, "hallpi", "hall")
	save(t, &r, data)
	hub := runHub(t, house.HubConfig{Data: data})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	hubNC, err := nats.Connect(hub.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer hubNC.Close()
	hjs, err := jetstream.New(hubNC)
	if err != nil {
		t.Fatal(err)
	}
	// The other Pi's events first, so that the house's sequences of
	// kitchen's events differ from kitchen's own.
	hall := pi(t, hub, data, "hallpi", hallSeed, "hall")
	for range 5 {
		if _, err := hall.JetStream().Publish(ctx, subject.In("hall", "noise"), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	lumentest.WaitFor(t, 30*time.Second, "hall's 5 events in the house", func() bool {
		s, err := hjs.Stream(ctx, house.Stream)
		return err == nil && s.CachedInfo().State.Msgs == 5
	})
	b := pi(t, hub, data, "kitchenpi", seed, "kitchen")
	js := b.JetStream()
	for range 3 {
		if _, err := js.Publish(ctx, subject.In("kitchen", "noise"), []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	ack, err := js.Publish(ctx, subject.In("kitchen", "fire"), []byte(`{"transition":"button_click"}`))
	if err != nil {
		t.Fatal(err)
	}
	var copied *jetstream.RawStreamMsg
	lumentest.WaitFor(t, 30*time.Second, "the house stream's copy of the event", func() bool {
		s, err := hjs.Stream(ctx, house.Stream)
		if err != nil {
			t.Fatal(err)
		}
		copied, _ = s.GetLastMsgForSubject(ctx, subject.In("kitchen", "fire"))
		return copied != nil
	})
	if copied.Sequence == ack.Sequence {
		t.Fatalf("the copy has the sequence of the original (%d): the test proves nothing", ack.Sequence)
	}
	src := copied.Header.Get("Nats-Stream-Source")
	if name, _, _ := strings.Cut(src, ":C="); name != house.SourceName("kitchenpi") {
		t.Errorf("Nats-Stream-Source %q does not start with SourceName %q", src, house.SourceName("kitchenpi"))
	}
	owners := func(string) string { return "kitchenpi" }
	if seq, ok := house.Origin(owners)(copied.Subject, copied.Header); !ok || seq != ack.Sequence {
		t.Errorf("Origin = %d, %v; the Pi journaled it at %d", seq, ok, ack.Sequence)
	}
	if _, ok := house.Origin(func(string) string { return "otherpi" })(copied.Subject, copied.Header); ok {
		t.Error("an event from a Pi that does not own the light is taken")
	}
	if _, ok := house.Origin(owners)(copied.Subject, nats.Header{}); ok {
		t.Error("an event with no source is taken")
	}

	j, err := house.OpenJournal(ctx, hjs)
	if err != nil {
		t.Fatal(err)
	}
	m, err := j.LastMsg(ctx, subject.In("kitchen", ">"))
	if err != nil || m.Seq != ack.Sequence {
		t.Errorf("the house journal's last kitchen input: seq %d, %v; want %d", m.Seq, err, ack.Sequence)
	}
	// A range is of the Pi's sequences.
	var got []uint64
	if err := j.Replay(ctx, "lumen.kitchen.evt.>", ack.Sequence-1, ack.Sequence, func(m journal.Msg) error {
		got = append(got, m.Seq)
		return nil
	}); err != nil || len(got) != 2 || got[0] != ack.Sequence-1 || got[1] != ack.Sequence {
		t.Errorf("replay of kitchen's %d..%d at the hub: %v, %v", ack.Sequence-1, ack.Sequence, got, err)
	}
	if lights, err := j.Lights(ctx); err != nil || strings.Join(lights, ",") != "hall,kitchen" {
		t.Errorf("the house's lights: %v, %v", lights, err)
	}

	// The Pi may speak for its own lights only (its daemon's account
	// is what its leaf connection carries).
	// What the hub's clients see of the Pis: a light's LED
	// announcements, say.
	probes, err := hubNC.SubscribeSync(subject.LED("*"))
	if err != nil {
		t.Fatal(err)
	}
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	for got := ""; got != subject.LED("kitchen"); {
		if ctx.Err() != nil {
			t.Fatal("the hub never had the Pi's own light's message")
		}
		for _, l := range []string{"hall", "kitchen"} {
			if err := nc.Publish(subject.LED(l), nil); err != nil {
				t.Fatal(err)
			}
		}
		if m, err := probes.NextMsg(200 * time.Millisecond); err == nil {
			if m.Subject != subject.LED("kitchen") {
				t.Fatalf("the hub had %s from the Pi of kitchen", m.Subject)
			}
			got = m.Subject
		}
	}

	// A Pi's key logs in on leaf connections only: as a client of the
	// hub it is refused.
	kp, err := nkeys.FromSeed([]byte(seed))
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := kp.PublicKey()
	if c, err := nats.Connect(hub.URL(), nats.Nkey(pub, kp.Sign), nats.NoReconnect()); err == nil {
		c.Close()
		t.Error("the hub took a Pi's key on its client port")
	} else if !strings.Contains(strings.ToLower(err.Error()), "authorization") {
		t.Errorf("a Pi's key on the client port: %v", err)
	}
}

// A Pi whose copy stops (its house consumer gone: only the Pi's daemon
// could delete it) is reported lagging by how many events the house
// does not have, though the source the hub keeps says nothing new.
func TestHouseLag(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	seed := register(t, &r, "kitchenpi", "kitchen")
	save(t, &r, data)
	hub := runHub(t, house.HubConfig{Data: data})
	b := pi(t, hub, data, "kitchenpi", seed, "kitchen")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	publish := func(n int) {
		for range n {
			if _, err := b.JetStream().Publish(ctx, subject.In("kitchen", "noise"), []byte(`{}`)); err != nil {
				t.Fatal(err)
			}
		}
	}
	waitLag := func(what string, want uint64) {
		t.Helper()
		var got house.PiStatus
		for {
			st, err := house.ReadStatus(data)
			if err != nil {
				t.Fatal(err)
			}
			got = st.Pis["kitchenpi"]
			if got.Connected && got.Lag == want {
				return
			}
			select {
			case <-ctx.Done():
				t.Fatalf("%s: the hub says %+v, want lag %d", what, got, want)
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	publish(5)
	lumentest.WaitFor(t, time.Minute, "the 5 events in the house", func() bool {
		s, err := hub.JetStream().Stream(ctx, house.Stream)
		return err == nil && s.CachedInfo().State.Msgs == 5
	})
	waitLag("the copy caught up", 0)
	if err := b.JetStream().DeleteConsumer(ctx, subject.Stream, house.Consumer); err != nil {
		t.Fatal(err)
	}
	publish(7)
	waitLag("the copy stopped", 7)
}

// A light moved to another Pi while the hub runs (pi rm, then pi add
// with the light): the hub sends its commands to the new Pi only, and
// the old account, which holds the light's subjects still, answers
// nothing.
func TestLightMoves(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	oldSeed := register(t, &r, "oldpi", "kitchen")
	save(t, &r, data)
	hub := runHub(t, house.HubConfig{Data: data})
	old := pi(t, hub, data, "oldpi", oldSeed, "kitchen")
	answer := func(b *broker.Broker, who string) {
		nc, err := b.Connect()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(nc.Close)
		if _, err := nc.Subscribe(subject.Cmd("kitchen", "get"), func(m *nats.Msg) { _ = m.Respond([]byte(who)) }); err != nil {
			t.Fatal(err)
		}
		if err := nc.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	answer(old, "old")
	hubNC, err := nats.Connect(hub.URL())
	if err != nil {
		t.Fatal(err)
	}
	defer hubNC.Close()
	ask := func() string {
		m, err := hubNC.Request(subject.Cmd("kitchen", "get"), nil, 2*time.Second)
		if err != nil {
			return err.Error()
		}
		return string(m.Data)
	}
	waitFor := func(what, want string) {
		t.Helper()
		lumentest.WaitFor(t, 20*time.Second, what+": kitchen answering "+want, func() bool { return ask() == want })
	}
	waitFor("the first Pi", "old")

	if err := r.Remove("oldpi"); err != nil {
		t.Fatal(err)
	}
	newSeed := register(t, &r, "newpi", "kitchen")
	save(t, &r, data)
	if err := house.WaitApplied(context.Background(), data, r.Generation); err != nil {
		t.Fatal(err)
	}
	answer(pi(t, hub, data, "newpi", newSeed, "kitchen"), "new")
	waitFor("the light moved", "new")
	for range 20 {
		if got := ask(); got != "new" {
			t.Fatalf("kitchen answers %q once moved", got)
		}
	}
}

// register adds a Pi that runs lights to r and returns its seed.
func register(t *testing.T, r *house.Registry, name string, lights ...string) string {
	t.Helper()
	seed, err := r.Add(name, lights, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	return seed
}

// save writes r as the registry of the hub of data.
func save(t *testing.T, r *house.Registry, data string) {
	t.Helper()
	if err := r.Save(data); err != nil {
		t.Fatal(err)
	}
}
