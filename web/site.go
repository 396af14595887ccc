package web

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/nats/broker"
)

// A Site is the HTTP door on its port: the listener, bound before the
// daemon says it is ready (so a taken port fails the start), and the
// server, started once the door has what it serves.
type Site struct {
	ln   net.Listener
	srv  *http.Server
	door *Server
	url  string
	done chan struct{} // closed when Serve has returned
}

// Settings of an HTTP address besides HOST:PORT.
const (
	// Auto serves on DefaultAddr when that port is free, and without
	// HTTP (saying so) when it is not.
	Auto = "auto"
	// Off serves no HTTP.
	Off = "off"
	// DefaultAddr is where Auto serves.
	DefaultAddr = "127.0.0.1:8642"
)

// Listen binds addr (flag names it in errors): Auto binds DefaultAddr,
// and if that is taken logs it and returns nil; Off or "" returns nil. A
// host that is not loopback needs credentials, as NATS's --listen does.
func Listen(flag, addr string, credentials bool, logf func(string, ...any)) (*Site, error) {
	if addr == "" || addr == Off {
		return nil, nil
	}
	auto := addr == Auto
	if auto {
		addr = DefaultAddr
	}
	if err := broker.CheckAddr("HTTP", addr, credentials); err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil && auto {
		logf("http: %s is taken (another lumen?): running without the page and API; give %s HOST:PORT to choose a port", addr, flag)
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", flag, err)
	}
	s := &Site{ln: ln, done: make(chan struct{}), srv: &http.Server{
		// Webhook senders are small devices and scripts on the LAN; a
		// slow or stuck one must not hold connections forever. (Event
		// streams lift the write deadline for themselves.)
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}}
	tcp := ln.Addr().(*net.TCPAddr)
	s.url = "http://" + broker.DialAddr(tcp.IP.String(), tcp.Port)
	return s, nil
}

// Serve starts answering with the door cfg describes.
func (s *Site) Serve(cfg Config) error {
	if s == nil {
		return nil
	}
	door, err := New(cfg)
	if err != nil {
		return err
	}
	s.door, s.srv.Handler = door, door
	// Shutdown waits for requests; the event streams end at once.
	s.srv.RegisterOnShutdown(door.Close)
	go func() {
		defer close(s.done)
		if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			door.cfg.Logf("http: %v", err)
		}
	}()
	return nil
}

// URL is http://HOST:PORT, with the port picked when the address asked
// for 0; "" when s is nil (no HTTP).
func (s *Site) URL() string {
	if s == nil {
		return ""
	}
	return s.url
}

// Advertised is the page's address for others to link to: the first of
// names (--http-name) if any, else the address as bound (0.0.0.0 stays
// so: only who sees the machine from outside knows its address); ""
// when s is nil.
func (s *Site) Advertised(names []string) string {
	if s == nil {
		return ""
	}
	tcp := s.ln.Addr().(*net.TCPAddr)
	host := tcp.IP.String()
	if len(names) > 0 {
		host = names[0]
	}
	return "http://" + net.JoinHostPort(host, strconv.Itoa(tcp.Port)) + "/"
}

// Close stops accepting requests and waits a little for those under way.
func (s *Site) Close() {
	if s == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.srv.Shutdown(ctx); err != nil {
		_ = s.srv.Close()
	}
	if s.door == nil {
		_ = s.ln.Close() // never served
	} else {
		s.door.Close()
	}
}

// Dial connects a door to the NATS server at url as an outside client,
// with the credentials the broker gives its door (broker.Door), so the
// page and API have exactly a client's rights, and replies of their own.
func Dial(url string, door ...nats.Option) (*nats.Conn, error) {
	nc, err := nats.Connect(url, append([]nats.Option{nats.Name("lumen-http")}, door...)...)
	if err != nil {
		return nil, fmt.Errorf("web: connect the HTTP door: %w", err)
	}
	return nc, nil
}
