package house_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/internal/lumentest"
	"github.com/lumen-home/lumen/nats/broker"
	"github.com/lumen-home/lumen/nats/house"
)

// linkProxy forwards a Pi's link to the hub. cut closes the Pi's side
// only: the hub keeps its end open and notices nothing until its pings go
// unanswered (about 20 s), as after a Wi-Fi drop or a power cut.
type linkProxy struct {
	l      net.Listener
	mu     sync.Mutex
	pis    []net.Conn
	hubs   []net.Conn
	target string
}

func newLinkProxy(t *testing.T, target string) *linkProxy {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &linkProxy{l: l, target: target}
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			h, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.pis, p.hubs = append(p.pis, c), append(p.hubs, h)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(h, c) }() // the hub's end stays open
			go func() { _, _ = io.Copy(c, h); c.Close() }()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range append(p.pis, p.hubs...) {
			c.Close()
		}
	})
	return p
}

func (p *linkProxy) addr() string { return p.l.Addr().String() }

func (p *linkProxy) cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.pis {
		c.Close()
	}
	p.pis = nil
}

// why asks the hub, from a Pi's server, why it refuses the Pi: "" when
// it does not.
func why(t *testing.T, b *broker.Broker, pi string) string {
	t.Helper()
	nc, err := b.Connect()
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	m, err := nc.Request(house.WhySubject, []byte(pi), time.Second)
	if errors.Is(err, nats.ErrNoResponders) {
		return ""
	} else if err != nil {
		t.Fatal(err)
	}
	return string(m.Data)
}

func waitLinked(t *testing.T, what string, b *broker.Broker) {
	t.Helper()
	lumentest.WaitFor(t, 15*time.Second, what+" linked to the hub", func() bool {
		on, _ := b.HubLinked()
		return on
	})
}

// The same Pi coming back while the hub still holds its old connection
// (its link dropped; it restarted after a power cut) is taken at once; a
// second machine with its creds is kept out, told why, and the first
// stays.
func TestOnePiOneMachine(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	seed := register(t, &r, "hallpi", "hall")
	save(t, &r, data)
	var logs lumentest.Buffer
	cfg := house.HubConfig{Data: data, LeafListen: lumentest.FreeAddr(t),
		Logf: func(format string, args ...any) { fmt.Fprintf(&logs, format+"\n", args...) }}
	hub := runHub(t, cfg)
	proxy := newLinkProxy(t, hub.LeafAddr())
	leaf := "localhost:" + portOf(proxy.addr())

	a := piVia(t, leaf, data, "hallpi", "first", seed, "hall")
	waitLinked(t, "the Pi", a)
	proxy.cut()
	waitLinked(t, "the Pi back after its link dropped", a)
	if w := why(t, a, "hallpi"); w != "" {
		t.Fatalf("the Pi back after its link dropped is refused: %s", w)
	}
	a.Shutdown()
	proxy.cut()
	a = piVia(t, leaf, data, "hallpi", "first", seed, "hall")
	waitLinked(t, "the Pi restarted", a)
	if w := why(t, a, "hallpi"); w != "" {
		t.Fatalf("the Pi restarted is refused: %s", w)
	}

	before := len(logs.String())
	b := piVia(t, hub.LeafAddr(), data, "hallpi", "second", seed, "hall")
	waitLinked(t, "the second machine", b)
	var w string
	for deadline := time.Now().Add(5 * time.Second); w == "" && time.Now().Before(deadline); {
		w = why(t, b, "hallpi")
	}
	if !strings.Contains(w, "each Pi needs its own creds") {
		t.Fatalf("the second machine is told %q", w)
	}
	// The hub says so once it has refused the second link, which came
	// after the first Pi's: a push-out of the first would be logged by
	// then.
	lumentest.WaitFor(t, 10*time.Second, "the hub to log the second machine", func() bool {
		return strings.Contains(logs.String()[before:], "pi hallpi connects from")
	})
	after := logs.String()[before:]
	if on, why := a.HubLinked(); !on || strings.Contains(after, "Duplicate") {
		t.Errorf("the first Pi was pushed out (%s):\n%s", why, after)
	}
	if n := strings.Count(after, "pi hallpi connects from"); n != 1 {
		t.Errorf("the hub said %d times that hallpi connects twice:\n%s", n, after)
	}

	// The hub restarted keeps the same machine, whichever comes first.
	_ = hub.Close()
	restarted := time.Now()
	runHub(t, cfg)
	lumentest.WaitFor(t, 20*time.Second, "the second machine refused again after a hub restart", func() bool {
		st, err := house.ReadStatus(data)
		if err != nil {
			t.Fatal(err)
		}
		s := st.Pis["hallpi"]
		return st.Updated.After(restarted) && s.Connected && s.Refused != "" && strings.Contains(why(t, b, "hallpi"), "each Pi needs its own creds")
	})
	if w := why(t, a, "hallpi"); w != "" {
		t.Errorf("after a hub restart the first Pi is refused: %s", w)
	}
}

// runHub runs a hub on cfg (a free client port) until the test ends.
func runHub(t *testing.T, cfg house.HubConfig) *house.Hub {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	if cfg.LeafListen == "" {
		cfg.LeafListen = "127.0.0.1:0"
	}
	hub, err := house.NewHub(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := hub.Run(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = hub.Close() })
	return hub
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}

// The hub checks its clients itself too: the admin with its password;
// nobody else, not even the user a client without credentials is when
// the hub has no admin.
func TestHubClients(t *testing.T) {
	for _, tc := range []struct {
		name      string
		user, pw  string // the hub's admin
		opts      []nats.Option
		connected bool
	}{
		{"admin", "admin", "s3cret", []nats.Option{nats.UserInfo("admin", "s3cret")}, true},
		{"wrong password", "admin", "s3cret", []nats.Option{nats.UserInfo("admin", "guess")}, false},
		{"no credentials with an admin", "admin", "s3cret", nil, false},
		{"no credentials without an admin", "", "", nil, true},
		{"the anonymous user by name", "", "", []nats.Option{nats.UserInfo("lumen-client", "")}, false},
		{"the daemon's user", "", "", []nats.Option{nats.UserInfo(broker.DaemonUser, "")}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hub := runHub(t, house.HubConfig{Data: t.TempDir(), User: tc.user, Password: tc.pw})
			nc, err := nats.Connect(hub.URL(), append(tc.opts, nats.NoReconnect())...)
			if err == nil {
				nc.Close()
			}
			if connected := err == nil; connected != tc.connected {
				t.Errorf("connected %v (%v), want %v", connected, err, tc.connected)
			} else if err != nil && !strings.Contains(strings.ToLower(err.Error()), "authorization") {
				t.Errorf("refused with %v", err)
			}
		})
	}
}
