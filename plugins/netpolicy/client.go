package netpolicy

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/lumen-home/lumen/internal/clock"
)

// Request is what the guest asks for. Method defaults to GET.
type Request struct {
	URL     string
	Method  string
	Headers map[string]string
	Body    []byte
}

// Response is what the guest gets back. Headers holds every response
// header, its name lowercased and repeated values joined with ", " (as the
// Fetch API's Headers.get does): a tool may need any of them (rate-limit
// headers, ETag, Link), and none can carry more than the body can. When
// the guest sets no Accept-Encoding, the transport asks for gzip and
// decompresses; the size cap applies to the decompressed body.
type Response struct {
	Status  int
	Headers map[string]string
	Body    []byte
}

// Limits bound what one tool may do. A zero field takes its default.
type Limits struct {
	// MaxResponse is the largest response body, in bytes; a larger one is
	// an error, never silently truncated.
	MaxResponse int64
	// Timeout bounds each request, redirects and body included, inside
	// whatever deadline the caller's context already has.
	Timeout time.Duration
	// PerMinute is the tool's rate: a token bucket that holds PerMinute
	// requests and refills PerMinute a minute.
	PerMinute int
}

// The defaults for zero Limits fields.
const (
	DefaultMaxResponse = 1 << 20
	DefaultTimeout     = 10 * time.Second
	DefaultPerMinute   = 60
)

// maxRedirects is how many redirects one fetch follows.
const maxRedirects = 5

// userAgent is sent when the guest sets none, instead of Go's.
const userAgent = "lumen-fetch/1"

func (l Limits) withDefaults() (Limits, error) {
	if l.MaxResponse < 0 || l.Timeout < 0 || l.PerMinute < 0 {
		return l, fmt.Errorf("netpolicy: limits must not be negative (got %+v); leave a field zero for its default", l)
	}
	if l.MaxResponse == 0 {
		l.MaxResponse = DefaultMaxResponse
	}
	if l.Timeout == 0 {
		l.Timeout = DefaultTimeout
	}
	if l.PerMinute == 0 {
		l.PerMinute = DefaultPerMinute
	}
	return l, nil
}

// An Option changes how a Client reaches the network, mostly for tests.
type Option func(*Client)

// WithResolver replaces the system resolver (net.DefaultResolver). The
// client calls it once per connection and dials only what it returned.
func WithResolver(resolve func(ctx context.Context, host string) ([]netip.Addr, error)) Option {
	return func(c *Client) {
		if resolve != nil {
			c.resolve = resolve
		}
	}
}

// WithRootCAs replaces the system's root certificates.
func WithRootCAs(pool *x509.CertPool) Option {
	return func(c *Client) { c.roots = pool }
}

// WithDialer replaces the TCP dialer. It is only ever given an address the
// policy checked, as "IP:port", never a host name.
func WithDialer(dial func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(c *Client) {
		if dial != nil {
			c.dialIP = dial
		}
	}
}

// WithClock sets the clock of the rate limit (default the wall clock).
func WithClock(clk clock.Clock) Option {
	return func(c *Client) {
		if clk != nil {
			c.clock = clk
		}
	}
}

// Client fetches for one tool, whose definition declares the hosts it may
// reach. Keep one Client per tool for as long as the tool exists: the rate
// limit lives in it. It is safe for concurrent use.
//
// Every fetch dials afresh (no keep-alive): a tool fetches at most
// PerMinute times a minute, so a handshake each time costs little, and
// every request is checked against a fresh resolution. It speaks HTTP/1.1.
type Client struct {
	op      Operator
	hosts   []hostPort
	lim     Limits
	resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	roots   *x509.CertPool
	dialIP  func(ctx context.Context, network, addr string) (net.Conn, error)
	clock   clock.Clock
	bucket  *bucket
	rt      http.RoundTripper
}

// New returns the Client of a tool that declared toolHosts: host names or
// IP addresses, each with an optional port ("api.example.com",
// "hue.lan:8080", "[fd00::1]:8443"); without a port, a host may be reached
// on 443 (and on 80 over plain HTTP). Wildcards are refused: a tool lists
// each host it needs. Declaring a host never lets the tool past the
// address checks; only op does.
func New(op Operator, toolHosts []string, lim Limits, opts ...Option) (*Client, error) {
	lim, err := lim.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{op: op, lim: lim, clock: clock.System(clock.Trust)}
	var errs []error
	for _, s := range toolHosts {
		h, err := parseToolHost(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("netpolicy: tool host %v", err))
			continue
		}
		if !slices.Contains(c.hosts, h) {
			c.hosts = append(c.hosts, h)
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
		return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	}
	c.dialIP = (&net.Dialer{Timeout: lim.Timeout}).DialContext
	for _, o := range opts {
		o(c)
	}
	c.bucket = newBucket(lim.PerMinute)
	c.rt = c.transport()
	return c, nil
}

// WithHosts returns a Client for the same tool that may reach hosts
// instead of the ones it was made with: same operator, limits and
// options, and the same rate limit (the bucket is shared, so deriving a
// Client per request does not reset it). It serves tools without a
// declared host list, the built-in fetch_json and fetch_text and
// precompiled plugins, whose every request names its own host: the host
// is declared for that request only, and every other rule (HTTPS, the
// address checks, --allow-net, the caps) applies as to any tool.
func (c *Client) WithHosts(hosts []string) (*Client, error) {
	d := &Client{op: c.op, lim: c.lim, resolve: c.resolve, roots: c.roots, dialIP: c.dialIP, clock: c.clock, bucket: c.bucket}
	for _, s := range hosts {
		h, err := parseToolHost(s)
		if err != nil {
			return nil, fmt.Errorf("netpolicy: host %v", err)
		}
		if !slices.Contains(d.hosts, h) {
			d.hosts = append(d.hosts, h)
		}
	}
	d.rt = d.transport()
	return d, nil
}

// transport is c's HTTP transport: it dials through c's checks only.
func (c *Client) transport() http.RoundTripper {
	// The transport never follows redirects: Fetch does, to check each hop
	// and to decide what the next hop may carry.
	return &http.Transport{
		Proxy: nil, // a proxy would dial on our behalf, past the checks
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return c.dial(ctx, "http", addr)
		},
		DialTLSContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return c.dial(ctx, "https", addr)
		},
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// target is one checked hop of a fetch.
type target struct {
	url    *url.URL
	scheme string
	host   string // canonical
	ip     netip.Addr
	port   uint16
	method string
	header http.Header
	body   []byte
}

// origin names the hop in errors: scheme, host and port, never the path
// or query.
func (t *target) origin() string {
	return t.scheme + "://" + display(t.scheme, t.host, t.port)
}

func (t *target) sameOrigin(u *target) bool {
	return t.scheme == u.scheme && t.host == u.host && t.port == u.port
}

// Fetch sends r if the policy allows it and returns the response, after at
// most 5 redirects. Errors are *Refused (not sent), *Exceeded (a limit),
// the caller's ctx error, or a network error.
func (c *Client) Fetch(ctx context.Context, r Request) (Response, error) {
	t, err := c.prepare(r)
	if err != nil {
		return Response{}, err
	}
	if wait, ok := c.bucket.take(c.clock.Now()); !ok {
		return Response{}, &Exceeded{Limit: ErrRateLimited, Reason: fmt.Sprintf(
			"rate limited: this tool may fetch %d times a minute; wait %s before fetching again, or fetch less often",
			c.lim.PerMinute, roundUp(wait))}
	}
	rctx, cancel := context.WithTimeout(ctx, c.lim.Timeout)
	defer cancel()
	for hop := 0; ; hop++ {
		resp, err := c.send(rctx, t)
		if err != nil {
			var ref *Refused
			if hop > 0 && errors.As(err, &ref) {
				return Response{}, refusedf("the redirect to %s was refused: %s", t.origin(), ref.Reason)
			}
			return Response{}, c.explain(ctx, rctx, t, err)
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			out, err := c.read(resp, t)
			if err == nil {
				// A response that completed as the deadline passed is late
				// too: the transport may deliver it after the cancellation.
				err = rctx.Err()
			}
			if err != nil {
				return Response{}, c.explain(ctx, rctx, t, err)
			}
			return out, nil
		}
		resp.Body.Close()
		if hop == maxRedirects {
			return Response{}, refusedf("%s redirected more than %d times; fetch the final URL directly", t.origin(), maxRedirects)
		}
		if t, err = c.redirect(t, resp.StatusCode, loc); err != nil {
			return Response{}, err
		}
	}
}

var methods = []string{"GET", "POST", "PUT", "PATCH", "DELETE", "HEAD"}

// forbiddenHeaders are headers the transport owns: the host comes from the
// URL, the framing and the connection from the client.
var forbiddenHeaders = []string{
	"host", "connection", "keep-alive", "proxy-connection", "proxy-authorization",
	"proxy-authenticate", "te", "trailer", "transfer-encoding", "upgrade",
	"content-length", "expect", "http2-settings",
}

// prepare checks the guest's request and turns it into the first hop.
func (c *Client) prepare(r Request) (*target, error) {
	u, err := url.Parse(r.URL)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, refusedf("the URL is not valid (%v); give an absolute https:// URL", err)
	}
	t, err := c.check(u)
	if err != nil {
		return nil, err
	}
	t.method = strings.ToUpper(r.Method)
	if t.method == "" {
		t.method = "GET"
	}
	if !slices.Contains(methods, t.method) {
		return nil, refusedf("method %q is not supported; use GET, POST, PUT, PATCH, DELETE or HEAD", r.Method)
	}
	if len(r.Body) > 0 && (t.method == "GET" || t.method == "HEAD") {
		return nil, refusedf("a %s request cannot have a body; use POST or PUT, or put the parameters in the URL", t.method)
	}
	t.body = r.Body
	t.header = http.Header{}
	names := make([]string, 0, len(r.Headers))
	for name := range r.Headers {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		v := r.Headers[name]
		switch {
		case !validHeaderName(name):
			return nil, refusedf("header name %q is not valid; use letters, digits and - only", name)
		case slices.Contains(forbiddenHeaders, strings.ToLower(name)):
			return nil, refusedf("header %q cannot be set by a tool; remove it (the host sets it from the URL and the body)", name)
		case !validHeaderValue(v):
			return nil, refusedf("header %q has a line break or control character in its value; remove it", name)
		case len(t.header.Values(name)) > 0:
			return nil, refusedf("header %q is given twice with different capitalisation; give it once", name)
		}
		t.header.Set(name, v)
	}
	if t.header.Get("User-Agent") == "" {
		t.header.Set("User-Agent", userAgent)
	}
	return t, nil
}

// check applies the URL rules: scheme, host the tool declared, plain HTTP
// only to a host the operator may have listed. Addresses are checked when
// dialing.
func (c *Client) check(u *url.URL) (*target, error) {
	t := &target{url: u, scheme: strings.ToLower(u.Scheme)}
	if t.scheme != "https" && t.scheme != "http" {
		return nil, refusedf("only https:// URLs can be fetched (and http:// to hosts the operator allows), not %q", u.Scheme+":")
	}
	u.Scheme = t.scheme
	if u.User != nil {
		return nil, refusedf("URLs with a user name or password are refused; send credentials in a header")
	}
	if u.Opaque != "" || u.Host == "" {
		return nil, refusedf("the URL has no host; give an absolute URL such as https://api.example.com/path")
	}
	host, ip, err := canonHost(u.Hostname())
	if err != nil {
		return nil, refusedf("the URL's host is not valid: %v", err)
	}
	t.host, t.ip, t.port = host, ip, defaultPort(t.scheme)
	if p := u.Port(); p != "" {
		if t.port, err = parsePort(p); err != nil {
			return nil, refusedf("the URL's %v", err)
		}
	}
	u.Fragment, u.RawFragment = "", ""
	if !c.declared(t.scheme, t.host, t.port) {
		return nil, c.undeclared(t.scheme, t.host, t.port)
	}
	if t.scheme == "http" && !c.op.mayAllow(t.host, t.ip, t.port) {
		return nil, plainRefused(t.scheme, t.host, t.port)
	}
	return t, nil
}

func (c *Client) declared(scheme, host string, port uint16) bool {
	for _, h := range c.hosts {
		if h.host == host && (h.port == port || h.port == 0 && port == defaultPort(scheme)) {
			return true
		}
	}
	return false
}

func (c *Client) undeclared(scheme, host string, port uint16) *Refused {
	if len(c.hosts) == 0 {
		return refusedf("this tool declares no hosts, so it cannot fetch %s; add %q to the tool's hosts", display(scheme, host, port), display(scheme, host, port))
	}
	list := make([]string, len(c.hosts))
	for i, h := range c.hosts {
		list[i] = display("", h.host, h.port)
	}
	return refusedf("%s is not one of this tool's hosts (%s); add it to the tool's hosts to fetch it",
		display(scheme, host, port), strings.Join(list, ", "))
}

func plainRefused(scheme, host string, port uint16) *Refused {
	return refusedf("plain http:// to %s is refused; use https://, or, for a device on the local network without TLS, ask the user to allow it (lumen up --allow-net %s)",
		display(scheme, host, port), display("", host, port))
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// redirect checks the next hop like the first one and decides what it
// carries, as browsers do: 301 and 302 turn POST into GET, 303 turns
// everything but HEAD into GET, 307 and 308 keep method and body. A hop to
// another origin gets none of the guest's headers, which may hold secrets
// the host substituted for the first host only, and never the body.
func (c *Client) redirect(from *target, code int, loc string) (*target, error) {
	u, err := from.url.Parse(loc)
	if err != nil {
		return nil, refusedf("%s redirected to an invalid location; fetch a different URL", from.origin())
	}
	t, err := c.check(u)
	if err != nil {
		var ref *Refused
		if errors.As(err, &ref) {
			return nil, refusedf("%s redirected to another location that is refused: %s", from.origin(), ref.Reason)
		}
		return nil, err
	}
	t.method, t.body, t.header = from.method, from.body, from.header.Clone()
	if code == http.StatusSeeOther && t.method != "HEAD" ||
		(code == http.StatusMovedPermanently || code == http.StatusFound) && t.method == "POST" {
		t.method, t.body = "GET", nil
		for _, h := range []string{"Content-Type", "Content-Encoding", "Content-Language"} {
			t.header.Del(h)
		}
	}
	if !from.sameOrigin(t) {
		if len(t.body) > 0 {
			return nil, refusedf("%s redirected a request with a body to %s; the body is not sent to another host, so fetch that URL directly if it is meant",
				from.origin(), t.origin())
		}
		t.header = http.Header{"User-Agent": {userAgent}}
	}
	return t, nil
}

func (c *Client) send(ctx context.Context, t *target) (*http.Response, error) {
	var body io.Reader
	if len(t.body) > 0 {
		body = bytes.NewReader(t.body)
	}
	req, err := http.NewRequestWithContext(ctx, t.method, t.url.String(), body)
	if err != nil {
		return nil, err
	}
	req.Header = t.header.Clone()
	return c.rt.RoundTrip(req)
}

// read reads at most MaxResponse+1 bytes of the body: one byte more than
// the cap is enough to know it is too large.
func (c *Client) read(resp *http.Response, t *target) (Response, error) {
	defer resp.Body.Close()
	max := c.lim.MaxResponse
	tooLarge := &Exceeded{Limit: ErrTooLarge, Reason: fmt.Sprintf(
		"response larger than %s from %s; ask for less (a filter, fewer fields or a smaller page)", size(max), t.origin())}
	if t.method != "HEAD" && resp.ContentLength > max {
		return Response{}, tooLarge
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, max+1))
	if err != nil {
		return Response{}, err
	}
	if int64(len(b)) > max {
		return Response{}, tooLarge
	}
	h := make(map[string]string, len(resp.Header))
	for k, v := range resp.Header {
		h[strings.ToLower(k)] = strings.Join(v, ", ")
	}
	return Response{Status: resp.StatusCode, Headers: h, Body: b}, nil
}

// explain turns a failure into the error Fetch returns; it never includes
// the URL's path or query (net/http's *url.Error does).
func (c *Client) explain(parent, rctx context.Context, t *target, err error) error {
	var ref *Refused
	var ex *Exceeded
	switch {
	case errors.As(err, &ref):
		return ref
	case errors.As(err, &ex):
		return ex
	case parent.Err() != nil:
		return fmt.Errorf("netpolicy: fetch %s: %w", t.origin(), parent.Err())
	case rctx.Err() != nil:
		return &Exceeded{Limit: ErrTimeout, Reason: fmt.Sprintf(
			"%s did not answer within %s; try again later, or ask for less", t.origin(), c.lim.Timeout)}
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fmt.Errorf("netpolicy: fetch %s: %w", t.origin(), err)
}

// dial resolves the host once, checks every address, and connects to one
// of them; for https it then does the TLS handshake for the host name.
func (c *Client) dial(ctx context.Context, scheme, addr string) (net.Conn, error) {
	h, p, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	port, err := parsePort(p)
	if err != nil {
		return nil, err
	}
	host, ip, err := canonHost(h)
	if err != nil {
		return nil, refusedf("the host is not valid: %v", err)
	}
	if !c.declared(scheme, host, port) { // checked before; kept as a last line
		return nil, c.undeclared(scheme, host, port)
	}
	addrs := []netip.Addr{ip}
	if !ip.IsValid() {
		if addrs, err = c.resolve(ctx, host); err != nil {
			return nil, fmt.Errorf("look up %s: %w", host, err)
		}
		if len(addrs) == 0 {
			return nil, fmt.Errorf("look up %s: no addresses", host)
		}
	}
	for i, a := range addrs {
		addrs[i] = a.Unmap()
		if err := c.checkAddr(scheme, host, port, addrs[i]); err != nil {
			return nil, err
		}
	}
	var errs []error
	for _, a := range addrs {
		conn, err := c.dialIP(ctx, "tcp", netip.AddrPortFrom(a, port).String())
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if scheme == "http" {
			return conn, nil
		}
		tc := tls.Client(conn, &tls.Config{
			ServerName: host,
			RootCAs:    c.roots,
			MinVersion: tls.VersionTLS12,
			NextProtos: []string{"http/1.1"},
		})
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, err
		}
		return tc, nil
	}
	return nil, errors.Join(errs...)
}

// checkAddr applies the address rules to one address the host resolved to.
func (c *Client) checkAddr(scheme, host string, port uint16, a netip.Addr) error {
	bare := plain(a)
	subject := host + " resolves to " + bare.String() + ", which is"
	if host == bare.String() {
		subject = host + " is"
	}
	if isMetadata(bare) {
		if c.op.allowsExact(bare, port) {
			return nil
		}
		return refusedf("%s a cloud metadata address; tools cannot reach it unless the operator lists that exact address with --allow-net", subject)
	}
	listed := c.op.allowsName(host, port) || c.op.allowsAddr(bare, port)
	if listed {
		return nil
	}
	if scheme == "http" {
		return plainRefused(scheme, host, port)
	}
	if kind := classify(bare); kind != "" {
		return refusedf("%s %s %s address; a tool reaches the local network only if the operator allows the host, so ask the user to run lumen up --allow-net %s",
			subject, article(kind), kind, display("", host, port))
	}
	return nil
}

func article(s string) string {
	if strings.IndexByte("aeiou", s[0]) >= 0 {
		return "an"
	}
	return "a"
}

// validHeaderName reports whether s is an HTTP header name (an RFC 9110
// token).
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0:
		default:
			return false
		}
	}
	return true
}

// validHeaderValue refuses control characters other than tab, which would
// let a value end the header early.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < ' ' && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
