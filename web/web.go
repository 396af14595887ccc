// Package web is Lumen's HTTP door, served by the daemon on --http: the
// page, and under /api/v1 the wire contract over HTTP (the same verbs,
// bodies, replies and codes; Server-Sent Events for the journal). It
// adds no behaviour of its own: every request becomes the NATS request
// or journal read a `nats` or `lumen` client would make.
package web

import (
	"context"
	"crypto/subtle"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/nats-io/nats.go"

	"github.com/lumen-home/lumen/messages"
	"github.com/lumen-home/lumen/nats/wire"
)

// Config configures the HTTP door.
type Config struct {
	// NC reaches the lights and reads the journal.
	NC *nats.Conn
	// Lights are the lights to show and list; nil finds them on the bus
	// (micro discovery, which waits a moment for the last answer).
	Lights []string
	// House, at a hub, is the house's directory: the page shows the
	// house by room, with each Pi's page and the lights that do not
	// answer, and GET /api/v1/house answers it. nil on a Pi.
	House House
	// Hooks serves the data sources' webhooks under /hooks/ (nil: none).
	Hooks http.Handler
	// Metrics serves GET /metrics, the daemon's Prometheus metrics (nil:
	// none). It asks the Host and credentials the API asks.
	Metrics http.Handler
	// User and Password, when set, are asked of every request (HTTP
	// Basic), loopback included, as NATS asks them of clients.
	User, Password string
	// Hosts are more names the page may be reached by (the Host header),
	// besides IP addresses, localhost and this machine's names: a page
	// reached by any other name may be a DNS rebinding attack.
	Hosts []string
	// Logf receives what goes wrong serving; nil keeps it quiet.
	Logf func(format string, args ...any)
}

// Server is the HTTP door: an http.Handler.
type Server struct {
	cfg     Config
	wire    *wire.Client
	handler http.Handler
	hosts   map[string]bool

	ctx    context.Context // ends at Close
	cancel context.CancelFunc
	tapMu  sync.Mutex
	tap    *tap // the event streams' shared follower, made at the first
}

// Body limits: a recording for talk, and everything else (the wire's).
const (
	maxAudio = 8 << 20
	maxBody  = 1 << 20
)

// New returns the HTTP door over cfg.NC.
func New(cfg Config) (*Server, error) {
	if cfg.NC == nil {
		return nil, errors.New("web: no NATS connection")
	}
	if (cfg.User == "") != (cfg.Password == "") {
		return nil, errors.New("web: give User and Password together, or neither")
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	s := &Server{cfg: cfg, wire: wire.New(cfg.NC, wire.WithWho(messages.WhoHTTP)), hosts: map[string]bool{"localhost": true}}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	if name, err := os.Hostname(); err == nil && name != "" {
		s.hosts[strings.ToLower(name)] = true
		s.hosts[strings.ToLower(name)+".local"] = true
	}
	for _, h := range cfg.Hosts {
		s.hosts[strings.ToLower(h)] = true
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/v1/lights", s.lights)
	mux.HandleFunc("POST /api/v1/lights/{light}/{verb}", s.command)
	mux.HandleFunc("GET /api/v1/lights/{light}/events", s.lightEvents)
	mux.HandleFunc("GET /api/v1/events", s.allEvents)
	mux.HandleFunc("GET /api/v1/lights/{light}/led", s.lightLED)
	mux.HandleFunc("GET /api/v1/lights/{light}/config", s.getConfig)
	mux.HandleFunc("PUT /api/v1/lights/{light}/config", s.putConfig)
	mux.HandleFunc("GET /api/v1/lights/{light}/states/{state}/preview", s.preview)
	mux.HandleFunc("GET /api/v1/led", s.allLED)
	mux.HandleFunc("GET /api/v1/house", s.house)
	mux.HandleFunc("GET /api/v1/log", s.allLog)
	mux.HandleFunc("GET /api/v1/lights/{light}/log", s.lightLog)
	mux.HandleFunc("GET /api/v1/lights/{light}/coming", s.coming)
	mux.HandleFunc("PUT /api/v1/lights/{light}/rules/{id}", s.editRule)
	mux.HandleFunc("GET /api/v1/lights/{light}/diff", s.diff)
	mux.HandleFunc("GET /api/v1/openapi.json", serveOpenAPI)
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no such API path: see /api/v1/openapi.json")
	})
	mux.HandleFunc("GET /{$}", s.page)
	mux.Handle("GET /static/", staticFiles())
	if cfg.Hooks != nil {
		mux.Handle("/hooks/", cfg.Hooks)
	}
	if cfg.Metrics != nil {
		mux.Handle("GET /metrics", cfg.Metrics)
	}
	// Another site must not drive the light from a visitor's browser:
	// cross-site browser requests that change anything are refused;
	// requests without Origin or Sec-Fetch-Site (curl, scripts, webhook
	// senders) pass.
	cop := http.NewCrossOriginProtection()
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusForbidden, "a request from another site's page is refused: use this page, or a client that is not a browser")
	}))
	s.handler = cop.Handler(mux)
	return s, nil
}

// Close stops what the server runs besides its requests (the event
// streams' follower).
func (s *Server) Close() { s.cancel() }

// ServeHTTP checks the Host and the credentials, then serves. The
// webhooks check their own (the daemon's credentials, or the source's
// token) and take any Host: their senders are servers, not browsers.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if strings.HasPrefix(r.URL.Path, "/hooks/") {
		s.handler.ServeHTTP(w, r)
		return
	}
	if !s.knownHost(r.Host) {
		writeError(w, http.StatusMisdirectedRequest, "this Lumen does not answer to the name "+r.Host+" (a page of another site could use it): use its address, or start it with --http-name "+hostOnly(r.Host))
		return
	}
	if s.cfg.User != "" && !s.authorized(r) {
		w.Header().Set("WWW-Authenticate", `Basic realm="lumen", charset="UTF-8"`)
		writeError(w, http.StatusUnauthorized, "give the user and password lumen up was started with")
		return
	}
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; media-src 'self' blob:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	s.handler.ServeHTTP(w, r)
}

// knownHost says whether host (the Host header) names this machine: an
// IP address, localhost, its names, or one the config allows. A name
// anyone else controls could point at this machine after the page
// loaded (DNS rebinding), so it is refused.
func (s *Server) knownHost(host string) bool {
	host = hostOnly(host)
	return host != "" && (net.ParseIP(host) != nil || s.hosts[host])
}

// hostOnly is a Host header's name, lower case, without port or final dot.
func hostOnly(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
}

func (s *Server) authorized(r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	return ok && subtle.ConstantTimeCompare([]byte(u), []byte(s.cfg.User)) == 1 &&
		subtle.ConstantTimeCompare([]byte(p), []byte(s.cfg.Password)) == 1
}
