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
	deadline := time.Now().Add(15 * time.Second)
	for on, _ := b.HubLinked(); !on; on, _ = b.HubLinked() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not linked to the hub", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// The same Pi coming back while the hub still holds its old connection
// (its link dropped; it restarted after a power cut) is taken at once; a
// second machine with its creds is kept out, told why, and the first
// stays.
func TestOnePiOneMachine(t *testing.T) {
	data := t.TempDir()
	var r house.Registry
	seed, err := r.Add("hallpi", []string{"hall"}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Save(data); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	hub, err := house.NewHub(house.HubConfig{Data: data, Listen: "127.0.0.1:0", LeafListen: "127.0.0.1:0",
		Logf: func(format string, args ...any) {
			logMu.Lock()
			defer logMu.Unlock()
			logs.WriteString(strings.TrimSpace(fmt.Sprintf(format, args...)) + "\n")
		}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := hub.Run(ctx); err != nil {
		t.Fatal(err)
	}
	defer hub.Close()
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

	logMu.Lock()
	before := logs.Len()
	logMu.Unlock()
	b := piVia(t, hub.LeafAddr(), data, "hallpi", "second", seed, "hall")
	waitLinked(t, "the second machine", b)
	var w string
	for deadline := time.Now().Add(5 * time.Second); w == "" && time.Now().Before(deadline); {
		w = why(t, b, "hallpi")
	}
	if !strings.Contains(w, "each Pi needs its own creds") {
		t.Fatalf("the second machine is told %q", w)
	}
	time.Sleep(time.Second)
	logMu.Lock()
	after := logs.String()[before:]
	logMu.Unlock()
	if on, why := a.HubLinked(); !on || strings.Contains(after, "Duplicate") {
		t.Errorf("the first Pi was pushed out (%s):\n%s", why, after)
	}
	if n := strings.Count(after, "pi hallpi connects from"); n != 1 {
		t.Errorf("the hub said %d times that hallpi connects twice:\n%s", n, after)
	}
}

func portOf(addr string) string {
	_, p, _ := net.SplitHostPort(addr)
	return p
}
