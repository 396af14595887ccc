package main_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/house"
)

// The house by accounts: what a Pi's creds, or a Pi's own clients, can
// do to the rest of the house. Each attack a probe found is tried here
// with the real nats CLI and with a leaf node built on nats-server's
// library from a Pi's creds file.

// rogueLeaf joins the hub at leaf with a Pi's creds, as any program
// holding the creds file could (its server calls itself by the Pi's name
// with no instance, as an older lumen does, and is let in as that Pi),
// and returns a client of it.
func rogueLeaf(t *testing.T, leaf, credsFile string) *nats.Conn {
	t.Helper()
	c, err := house.ReadCreds(credsFile)
	if err != nil {
		t.Fatal(err)
	}
	cas, err := c.CAPool()
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse("tls://" + leaf)
	if err != nil {
		t.Fatal(err)
	}
	s, err := server.NewServer(&server.Options{ServerName: "lumen-" + c.Pi, Host: "127.0.0.1", Port: -1, NoLog: true, NoSigs: true,
		LeafNode: server.LeafNodeOpts{ReconnectInterval: time.Second, Remotes: []*server.RemoteLeafOpts{{
			URLs: []*url.URL{u}, Nkey: c.Seed, TLS: true, TLSTimeout: 2,
			TLSConfig: &tls.Config{RootCAs: cas, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12},
		}}}})
	if err != nil {
		t.Fatal(err)
	}
	go s.Start()
	t.Cleanup(s.Shutdown)
	if !s.ReadyForConnections(10 * time.Second) {
		t.Fatal("the rogue leaf's server did not start")
	}
	lumentest.WaitFor(t, 20*time.Second, "the rogue leaf to join the hub", func() bool { return s.NumLeafNodes() > 0 })
	return connect(t, s.ClientURL())
}

// heard keeps what a subscription to > receives.
type heard struct {
	mu   sync.Mutex
	msgs []*nats.Msg
}

func listen(t *testing.T, nc *nats.Conn, subj string) *heard {
	t.Helper()
	h := &heard{}
	if _, err := nc.Subscribe(subj, func(m *nats.Msg) {
		h.mu.Lock()
		h.msgs = append(h.msgs, m)
		h.mu.Unlock()
	}); err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	return h
}

// about returns what was heard that mentions s, but for the rogue's own
// forgeries.
func (h *heard) about(s string) []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, m := range h.msgs {
		if strings.Contains(string(m.Data), "FORGED") {
			continue
		}
		if strings.Contains(m.Subject, s) || strings.Contains(string(m.Data), s) {
			out = append(out, m.Subject+" "+string(m.Data))
		}
	}
	return out
}

func TestHouseAttacks(t *testing.T) {
	t.Parallel()
	hubData := t.TempDir()
	credsA := addPi(t, hubData, "pia", "kitchen")
	credsB := addPi(t, hubData, "pib", "hall")
	hub := lumentest.StartHub(t, hubData)
	a := startPi(t, hub.Leaf, credsA, "--light", "kitchen", "--group", "down=kitchen")
	b := startPi(t, hub.Leaf, credsB, "--light", "hall", "--group", "down=hall")
	waitLights(t, hub.URL, "kitchen", "hall")

	// Pi A's creds, in a program of the attacker's: it answers the
	// fleet, hall's commands and discovery with forgeries, and hears
	// everything its account is sent.
	rogue := rogueLeaf(t, hub.Leaf, credsA)
	forged := `{"ok":true,"light":"hall","state":"FORGED-BY-PIA"}`
	for _, subj := range []string{"lumen.fleet.cmd.get", "lumen.group.down.cmd.get", "lumen.hall.cmd.get", "lumen.hall.cmd.fire"} {
		if _, err := rogue.Subscribe(subj, func(m *nats.Msg) { _ = m.Respond([]byte(forged)) }); err != nil {
			t.Fatal(err)
		}
	}
	info := `{"type":"io.nats.micro.v1.info_response","name":"lumen","id":"FORGED","version":"0.1.0","metadata":{"light":"hall"},` +
		`"description":"FORGED-BY-PIA","endpoints":[{"name":"get","subject":"lumen.hall.cmd.get"}]}`
	if _, err := rogue.Subscribe("$SRV.>", func(m *nats.Msg) { _ = m.Respond([]byte(info)) }); err != nil {
		t.Fatal(err)
	}
	rogueHeard := listen(t, rogue, ">")
	// A plain client of Pi A's own server listens to every inbox.
	localHeard := listen(t, connect(t, a.URL), "_INBOX.>")
	time.Sleep(500 * time.Millisecond) // the rogue's interest reaches the hub

	// 2. The hub's clients hear only the lights' own Pis.
	out := natsCLI(t, hub.URL, "req", "lumen.fleet.cmd.get", `{}`, "--replies", "0", "--timeout", "2s")
	if strings.Count(out, `"ok":true`) != 2 || strings.Contains(out, "FORGED") || !strings.Contains(out, `"light":"hall"`) {
		t.Errorf("a fleet get at the hub: want kitchen's and hall's own replies only:\n%s", out)
	}
	if out := natsCLI(t, hub.URL, "req", "lumen.group.down.cmd.get", `{}`, "--replies", "0", "--timeout", "2s"); strings.Count(out, `"ok":true`) != 2 || strings.Contains(out, "FORGED") {
		t.Errorf("a group get at the hub: want two genuine replies:\n%s", out)
	}
	for range 5 {
		if out := natsCLI(t, hub.URL, "req", "lumen.hall.cmd.get", `{}`); strings.Contains(out, "FORGED") || !strings.Contains(out, `"light":"hall"`) {
			t.Fatalf("hall's get at the hub:\n%s", out)
		}
	}
	if out := natsCLI(t, hub.URL, "micro", "ls"); strings.Count(out, "Lumen light") != 2 || strings.Contains(out, "FORGED") {
		t.Errorf("nats micro ls at the hub: want kitchen's and hall's own services only:\n%s", out)
	}
	if out, code := runCLI(t, hub.URL, "fire", "button_click", "--light", "hall"); code != 0 || !strings.Contains(out, "off → red") {
		t.Errorf("fire hall at the hub: exit %d\n%s", code, out)
	}
	// 1. Neither Pi A's clients nor its creds hear hall's replies or
	// commands.
	time.Sleep(300 * time.Millisecond)
	if got := localHeard.about("hall"); len(got) > 0 {
		t.Errorf("a client of Pi A's server heard hall's traffic: %q", got)
	}
	if got := rogueHeard.about("hall"); len(got) > 0 {
		t.Errorf("a leaf with Pi A's creds heard hall's traffic: %q", got)
	}
	if got := rogueHeard.about("$SRV"); len(got) == 0 {
		t.Error("the rogue leaf heard no discovery request: the test proves nothing about forged discovery")
	}

	// 3. The house's copy of Pi B's journal: its clients cannot delete
	// the consumer or ack for it; Pi A's creds do not reach Pi B's API.
	if out, err := natsRun(t, b.URL, "consumer", "rm", "LUMEN", "HOUSE", "-f"); err == nil {
		t.Errorf("a client of Pi B deleted the house consumer:\n%s", out)
	}
	bnc := connect(t, b.URL)
	for seq := 1; seq <= 5; seq++ {
		_ = bnc.Publish(fmtAck(seq), []byte("+ACK"))
	}
	if _, err := rogue.Request("$JS.pib.API.CONSUMER.DELETE.LUMEN.HOUSE", nil, 2*time.Second); err == nil {
		t.Error("Pi A's creds reached Pi B's JetStream API")
	}
	for range 3 {
		runCLI(t, hub.URL, "fire", "button_click", "--light", "hall")
	}
	waitHouse(t, jsOf(t, hub.URL), jsOf(t, b.URL), "hall")

	// A Pi asks the house for an everyday verb of another Pi's light:
	// it is journaled by the Pi; its configuration stays Pi B's.
	anc := connect(t, a.URL)
	mustOK(t, request(t, anc, "lumen.sys.house.hall.cmd.set_state", `{"name":"off"}`))
	if out, _ := runCLI(t, hub.URL, "state", "--light", "hall"); strings.TrimSpace(out) != "off" {
		t.Errorf("hall after Pi A asked the house to turn it off: %s", out)
	}
	if by := lastBy(t, jsOf(t, b.URL), "hall"); by != "pi:pia" {
		t.Errorf("hall's set_state asked by Pi A is journaled by %q, want pi:pia", by)
	}
	for _, nc := range []*nats.Conn{anc, rogue} {
		r := request(t, nc, "lumen.sys.house.hall.cmd.apply", `{"states":[{"name":"pwned","r":1,"g":2,"b":3}]}`)
		if r.Code != "403" || !strings.Contains(string(r.Raw), "a Pi may ask the house for fire, power, set_brightness, set_color, set_state and toggle") {
			t.Errorf("apply to hall through the house: code %q %s", r.Code, r.Raw)
		}
	}
	r := request(t, rogue, "lumen.sys.house.hall.cmd.fire", `{"transition":"button_click"}`)
	mustOK(t, r)
	if by := lastBy(t, jsOf(t, b.URL), "hall"); by != "pi:pia" {
		t.Errorf("a fire asked by Pi A's creds is journaled by %q", by)
	}
	if r := request(t, anc, "lumen.sys.house.attic.cmd.fire", `{"transition":"button_click"}`); r.Code != "404" {
		t.Errorf("a light the house does not have: code %q %s", r.Code, r.Raw)
	}
	if out, _ := runCLI(t, hub.URL, "get", "--light", "hall", "--json"); strings.Contains(out, "pwned") {
		t.Errorf("hall took a configuration from Pi A:\n%s", out)
	}
}

// fmtAck is an ack of the house consumer on a Pi.
func fmtAck(seq int) string { return fmt.Sprintf("$JS.ACK.LUMEN.HOUSE.1.%d.%d.0.0", seq, seq) }

// lastBy is who made light's last input, in the journal js reaches.
func lastBy(t *testing.T, js jetstream.JetStream, light string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := js.Stream(ctx, "LUMEN")
	if err != nil {
		t.Fatal(err)
	}
	m, err := s.GetLastMsgForSubject(ctx, "lumen."+light+".evt.in.>")
	if errors.Is(err, jetstream.ErrMsgNotFound) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	var env struct{ By string }
	if err := json.Unmarshal(m.Data, &env); err != nil {
		t.Fatal(err)
	}
	return env.By
}
