package netpolicy_test

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/plugins/netpolicy"
)

// The httptest certificate is for example.com, *.example.com, 127.0.0.1
// and ::1, so test hosts are subdomains of example.com; the resolver below
// is the only one that ever hears of them.

// server is an httptest server with its port and hit count.
type server struct {
	*httptest.Server
	port string
	hits atomic.Int64
}

func newServer(t *testing.T, tls bool, h http.HandlerFunc) *server {
	t.Helper()
	s := &server{}
	wrapped := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		h(w, r)
	})
	s.Server = httptest.NewUnstartedServer(wrapped)
	s.Config.ErrorLog = log.New(io.Discard, "", 0) // refused handshakes are expected
	if tls {
		s.StartTLS()
	} else {
		s.Start()
	}
	t.Cleanup(s.Close)
	u, _ := url.Parse(s.URL)
	s.port = u.Port()
	return s
}

func (s *server) roots() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(s.Certificate())
	return p
}

// resolver answers from a table and counts its calls.
type resolver struct {
	names map[string][]string
	calls atomic.Int64
}

func (r *resolver) resolve(_ context.Context, host string) ([]netip.Addr, error) {
	r.calls.Add(1)
	ss, ok := r.names[host]
	if !ok {
		return nil, fmt.Errorf("no such host %s", host)
	}
	var out []netip.Addr
	for _, s := range ss {
		out = append(out, netip.MustParseAddr(s))
	}
	return out, nil
}

// dialer records the addresses the client dials and connects every one of
// them to a test server, so that a checked "public" or "LAN" address can
// be served locally.
type dialer struct {
	mu    sync.Mutex
	addrs []string
	to    func(addr string) string
}

func (d *dialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	d.mu.Unlock()
	var nd net.Dialer
	return nd.DialContext(ctx, network, d.to(addr))
}

func (d *dialer) dialed() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

func mustOp(t *testing.T, allow ...string) netpolicy.Operator {
	t.Helper()
	op, err := netpolicy.ParseAllow(allow)
	if err != nil {
		t.Fatal(err)
	}
	return op
}

func hello(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Reply", "yes")
	w.Header().Add("X-Multi", "a")
	w.Header().Add("X-Multi", "b")
	io.WriteString(w, "hello "+r.Method)
}

// TestFetchPolicy runs each request through the whole client: every
// connection lands on a local test server, whatever address was checked,
// so a case shows exactly what the policy decided.
func TestFetchPolicy(t *testing.T) {
	tlsSrv := newServer(t, true, hello)
	plainSrv := newServer(t, false, hello)
	P := tlsSrv.port
	HP := plainSrv.port
	sub := func(s string) string { return strings.NewReplacer("{HP}", HP, "{P}", P).Replace(s) }

	tests := []struct {
		name    string
		allow   []string // --allow-net
		hosts   []string // the tool's declared hosts
		addrs   []string // what api.example.com resolves to
		req     netpolicy.Request
		refused string // a substring of the *Refused reason; "" to succeed
		dialed  string // the address dialed on success
	}{
		// Allowed.
		{name: "https to a public address", hosts: []string{"api.example.com:{P}"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/x"}, dialed: "93.184.215.14:{P}"},
		{name: "declared host without port is reached on 443", hosts: []string{"api.example.com"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "https://api.example.com/x"}, dialed: "93.184.215.14:443"},
		{name: "host and method are case-insensitive", hosts: []string{"API.example.com:{P}"}, addrs: []string{"2606:2800:21f:cb07:6820:80da:af6b:8b2c"},
			req: netpolicy.Request{URL: "https://api.EXAMPLE.com.:{P}/x", Method: "post", Body: []byte("{}")}, dialed: "[2606:2800:21f:cb07:6820:80da:af6b:8b2c]:{P}"},
		{name: "loopback the operator listed by name", allow: []string{"api.example.com"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"127.0.0.1"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, dialed: "127.0.0.1:{P}"},
		{name: "private address in an operator CIDR", allow: []string{"10.0.0.0/8"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"10.0.0.1"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, dialed: "10.0.0.1:{P}"},
		{name: "operator IP with its port", allow: []string{"10.0.0.1:{P}"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"10.0.0.1"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, dialed: "10.0.0.1:{P}"},
		{name: "IPv4-mapped answer in an operator CIDR", allow: []string{"192.168.0.0/16"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"::ffff:192.168.1.20"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, dialed: "192.168.1.20:{P}"},
		{name: "IP literal the operator listed", allow: []string{"127.0.0.1"}, hosts: []string{"127.0.0.1:{P}"},
			req: netpolicy.Request{URL: "https://127.0.0.1:{P}/"}, dialed: "127.0.0.1:{P}"},
		{name: "metadata address the operator listed exactly", allow: []string{"169.254.169.254"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"169.254.169.254"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, dialed: "169.254.169.254:{P}"},
		{name: "plain http to an operator-listed host", allow: []string{"api.example.com"}, hosts: []string{"api.example.com:{HP}"}, addrs: []string{"192.168.1.20"},
			req: netpolicy.Request{URL: "http://api.example.com:{HP}/"}, dialed: "192.168.1.20:{HP}"},
		{name: "plain http into an operator CIDR", allow: []string{"192.168.1.0/24"}, hosts: []string{"api.example.com:{HP}"}, addrs: []string{"192.168.1.20"},
			req: netpolicy.Request{URL: "http://api.example.com:{HP}/"}, dialed: "192.168.1.20:{HP}"},
		{name: "plain http on the default port", allow: []string{"api.example.com:80"}, hosts: []string{"api.example.com"}, addrs: []string{"192.168.1.20"},
			req: netpolicy.Request{URL: "http://api.example.com/"}, dialed: "192.168.1.20:80"},

		// Schemes and plain HTTP.
		{name: "http to a host the operator did not list", hosts: []string{"api.example.com:{HP}"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "http://api.example.com:{HP}/"}, refused: "plain http:// to api.example.com:{HP} is refused"},
		{name: "http to a host listed for another port", allow: []string{"api.example.com:81"}, hosts: []string{"api.example.com:{HP}"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "http://api.example.com:{HP}/"}, refused: "plain http://"},
		{name: "http to an address outside the operator CIDR", allow: []string{"192.168.1.0/24"}, hosts: []string{"api.example.com:{HP}"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "http://api.example.com:{HP}/"}, refused: "plain http://"},
		{name: "ftp", hosts: []string{"api.example.com"}, req: netpolicy.Request{URL: "ftp://api.example.com/f"}, refused: "only https:// URLs"},
		{name: "file", hosts: []string{"api.example.com"}, req: netpolicy.Request{URL: "file:///etc/passwd"}, refused: "only https:// URLs"},
		{name: "no scheme", hosts: []string{"api.example.com"}, req: netpolicy.Request{URL: "//api.example.com/"}, refused: "only https:// URLs"},
		{name: "user info", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://u:p@api.example.com:{P}/"}, refused: "send credentials in a header"},
		{name: "malformed URL", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/%zz"}, refused: "the URL is not valid"},
		{name: "short numeric host", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://127.1:{P}/"}, refused: "shortened IP address"},

		// Hosts the tool declared.
		{name: "host the tool did not declare", hosts: []string{"api.example.com:{P}"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "https://other.example.com:{P}/"}, refused: "other.example.com:{P} is not one of this tool's hosts (api.example.com:{P})"},
		{name: "port the tool did not declare", hosts: []string{"api.example.com"}, addrs: []string{"93.184.215.14"},
			req: netpolicy.Request{URL: "https://api.example.com:8443/"}, refused: "api.example.com:8443 is not one of this tool's hosts"},
		{name: "suffix is not a match", hosts: []string{"example.com"}, req: netpolicy.Request{URL: "https://api.example.com/"}, refused: "is not one of this tool's hosts"},
		{name: "a tool that declares nothing", req: netpolicy.Request{URL: "https://api.example.com/"}, refused: "this tool declares no hosts"},
		{name: "operator listing does not declare", allow: []string{"api.example.com"}, hosts: []string{"other.example.com"},
			req: netpolicy.Request{URL: "https://api.example.com/"}, refused: "is not one of this tool's hosts"},

		// Addresses.
		{name: "loopback", hosts: []string{"api.example.com:{P}"}, addrs: []string{"127.0.0.1"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "api.example.com resolves to 127.0.0.1, which is a loopback address; a tool reaches the local network only if the operator allows the host, so ask the user to run lumen up --allow-net api.example.com:{P}"},
		{name: "private 10/8", hosts: []string{"api.example.com:{P}"}, addrs: []string{"10.0.0.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "10.0.0.1, which is a private address"},
		{name: "private 172.16/12", hosts: []string{"api.example.com:{P}"}, addrs: []string{"172.16.5.4"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a private address"},
		{name: "private 192.168/16", hosts: []string{"api.example.com:{P}"}, addrs: []string{"192.168.1.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a private address"},
		{name: "metadata", hosts: []string{"api.example.com:{P}"}, addrs: []string{"169.254.169.254"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a cloud metadata address"},
		{name: "metadata over IPv6", hosts: []string{"api.example.com:{P}"}, addrs: []string{"fd00:ec2::254"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a cloud metadata address"},
		{name: "metadata though the operator listed the name", allow: []string{"api.example.com"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"169.254.169.254"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a cloud metadata address"},
		{name: "metadata though the operator listed its CIDR", allow: []string{"169.254.0.0/16"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"169.254.169.254"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "lists that exact address"},
		{name: "link-local", hosts: []string{"api.example.com:{P}"}, addrs: []string{"169.254.1.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a link-local address"},
		{name: "IPv6 link-local", hosts: []string{"api.example.com:{P}"}, addrs: []string{"fe80::1%eth0"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a link-local address"},
		{name: "IPv6 unique local", hosts: []string{"api.example.com:{P}"}, addrs: []string{"fd12::1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a private address"},
		{name: "CGNAT", hosts: []string{"api.example.com:{P}"}, addrs: []string{"100.64.0.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a carrier-grade NAT address"},
		{name: "unspecified", hosts: []string{"api.example.com:{P}"}, addrs: []string{"0.0.0.0"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "an unspecified address"},
		{name: "IPv6 unspecified", hosts: []string{"api.example.com:{P}"}, addrs: []string{"::"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "an unspecified address"},
		{name: "multicast", hosts: []string{"api.example.com:{P}"}, addrs: []string{"224.0.0.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a multicast address"},
		{name: "broadcast", hosts: []string{"api.example.com:{P}"}, addrs: []string{"255.255.255.255"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a broadcast address"},
		{name: "IPv6 loopback", hosts: []string{"api.example.com:{P}"}, addrs: []string{"::1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "::1, which is a loopback address"},
		{name: "IPv4-mapped loopback", hosts: []string{"api.example.com:{P}"}, addrs: []string{"::ffff:127.0.0.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "127.0.0.1, which is a loopback address"},
		{name: "NAT64 of a private address", hosts: []string{"api.example.com:{P}"}, addrs: []string{"64:ff9b::a00:1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "which is a NAT64 or 6to4 form of a private address"},
		{name: "6to4 of loopback", hosts: []string{"api.example.com:{P}"}, addrs: []string{"2002:7f00:1::1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "which is a NAT64 or 6to4 form of a loopback address"},
		{name: "one private address among public ones", hosts: []string{"api.example.com:{P}"}, addrs: []string{"93.184.215.14", "10.0.0.1"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "10.0.0.1, which is a private address"},
		{name: "operator listed another host", allow: []string{"other.example.com"}, hosts: []string{"api.example.com:{P}"}, addrs: []string{"127.0.0.1"},
			req: netpolicy.Request{URL: "https://api.example.com:{P}/"}, refused: "a loopback address"},
		{name: "IP literal 127.0.0.1", hosts: []string{"127.0.0.1:{P}"}, req: netpolicy.Request{URL: "https://127.0.0.1:{P}/"}, refused: "127.0.0.1 is a loopback address"},
		{name: "IP literal 10.0.0.1", hosts: []string{"10.0.0.1"}, req: netpolicy.Request{URL: "https://10.0.0.1/"}, refused: "10.0.0.1 is a private address"},
		{name: "IP literal 169.254.169.254", hosts: []string{"169.254.169.254"}, req: netpolicy.Request{URL: "https://169.254.169.254/latest/meta-data/"}, refused: "169.254.169.254 is a cloud metadata address"},
		{name: "IP literal [::1]", hosts: []string{"[::1]:{P}"}, req: netpolicy.Request{URL: "https://[::1]:{P}/"}, refused: "::1 is a loopback address"},
		{name: "IP literal [::ffff:127.0.0.1]", hosts: []string{"[::ffff:127.0.0.1]:{P}"}, req: netpolicy.Request{URL: "https://[::ffff:127.0.0.1]:{P}/"}, refused: "127.0.0.1 is a loopback address"},

		// Methods and headers.
		{name: "TRACE", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Method: "TRACE"}, refused: `method "TRACE" is not supported`},
		{name: "CONNECT", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Method: "CONNECT"}, refused: "use GET, POST, PUT, PATCH, DELETE or HEAD"},
		{name: "GET with a body", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Body: []byte("x")}, refused: "a GET request cannot have a body"},
		{name: "Host header", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"Host": "internal"}}, refused: `header "Host" cannot be set by a tool`},
		{name: "hop-by-hop header", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"connection": "upgrade"}}, refused: "cannot be set by a tool"},
		{name: "Transfer-Encoding", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"Transfer-Encoding": "chunked"}}, refused: "cannot be set by a tool"},
		{name: "Content-Length", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"Content-Length": "1"}}, refused: "cannot be set by a tool"},
		{name: "header name with a space", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"X Key": "1"}}, refused: `header name "X Key" is not valid`},
		{name: "header name with a newline", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"X-A\r\nHost": "1"}}, refused: "is not valid"},
		{name: "header value with a newline", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"X-A": "1\r\nHost: internal"}}, refused: "line break or control character"},
		{name: "header twice", hosts: []string{"api.example.com:{P}"}, req: netpolicy.Request{URL: "https://api.example.com:{P}/", Headers: map[string]string{"X-A": "1", "x-a": "2"}}, refused: "given twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hosts := make([]string, len(tt.hosts))
			for i, h := range tt.hosts {
				hosts[i] = sub(h)
			}
			allow := make([]string, len(tt.allow))
			for i, a := range tt.allow {
				allow[i] = sub(a)
			}
			res := &resolver{names: map[string][]string{"api.example.com": tt.addrs}}
			d := &dialer{to: func(string) string {
				if strings.HasPrefix(tt.req.URL, "http:") {
					return plainSrv.Listener.Addr().String()
				}
				return tlsSrv.Listener.Addr().String()
			}}
			c, err := netpolicy.New(mustOp(t, allow...), hosts, netpolicy.Limits{},
				netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(tlsSrv.roots()), netpolicy.WithDialer(d.dial))
			if err != nil {
				t.Fatal(err)
			}
			req := tt.req
			req.URL = sub(req.URL)
			before := tlsSrv.hits.Load() + plainSrv.hits.Load()
			resp, err := c.Fetch(context.Background(), req)
			hits := tlsSrv.hits.Load() + plainSrv.hits.Load() - before

			if tt.refused != "" {
				var ref *netpolicy.Refused
				if !errors.As(err, &ref) {
					t.Fatalf("Fetch = %+v, %v; want *Refused", resp, err)
				}
				if want := sub(tt.refused); !strings.Contains(ref.Reason, want) {
					t.Errorf("reason %q\nwant it to contain %q", ref.Reason, want)
				}
				if got := d.dialed(); len(got) > 0 || hits > 0 {
					t.Errorf("a refused request dialed %v and reached the server %d times", got, hits)
				}
				return
			}
			if err != nil {
				t.Fatalf("Fetch: %v", err)
			}
			method := strings.ToUpper(req.Method)
			if method == "" {
				method = "GET"
			}
			if resp.Status != 200 || string(resp.Body) != "hello "+method {
				t.Errorf("response %d %q, want 200 %q", resp.Status, resp.Body, "hello "+method)
			}
			if got := d.dialed(); len(got) != 1 || got[0] != sub(tt.dialed) {
				t.Errorf("dialed %v, want [%s]", got, sub(tt.dialed))
			}
		})
	}
}

// TestFetchRoundTrip checks what goes over the wire and what comes back,
// against a real TLS server the operator allowed (no injected dialer).
func TestFetchRoundTrip(t *testing.T) {
	srv := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Got-Token", r.Header.Get("X-Token"))
		w.Header().Set("X-Got-Agent", r.Header.Get("User-Agent"))
		w.Header().Set("X-Got-Host", r.Host)
		w.Header().Add("X-Multi", "a")
		w.Header().Add("X-Multi", "b")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.RequestURI(), body)
	})
	res := &resolver{names: map[string][]string{"api.example.com": {"127.0.0.1"}}}
	c, err := netpolicy.New(mustOp(t, "api.example.com"), []string{"api.example.com:" + srv.port}, netpolicy.Limits{},
		netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Fetch(context.Background(), netpolicy.Request{
		URL:     "https://api.example.com:" + srv.port + "/v1/items?q=1#frag",
		Method:  "PUT",
		Headers: map[string]string{"X-Token": "abc", "Content-Type": "application/json"},
		Body:    []byte(`{"a":1}`),
	})
	if err != nil {
		t.Fatal(err)
	}
	want := netpolicy.Response{Status: 201, Body: []byte(`PUT /v1/items?q=1 {"a":1}`)}
	if resp.Status != want.Status || string(resp.Body) != string(want.Body) {
		t.Errorf("got %d %q, want %d %q", resp.Status, resp.Body, want.Status, want.Body)
	}
	for k, v := range map[string]string{
		"x-got-token":  "abc",
		"x-got-agent":  "lumen-fetch/1",
		"x-got-host":   "api.example.com:" + srv.port,
		"x-multi":      "a, b",
		"content-type": "text/plain; charset=utf-8",
	} {
		if resp.Headers[k] != v {
			t.Errorf("header %s = %q, want %q (all: %v)", k, resp.Headers[k], v, resp.Headers)
		}
	}
	for k := range resp.Headers {
		if k != strings.ToLower(k) {
			t.Errorf("header %q is not lowercased", k)
		}
	}

	// Concurrent fetches share the client (and its rate limit) safely.
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := c.Fetch(context.Background(), netpolicy.Request{URL: "https://api.example.com:" + srv.port + "/", Method: "HEAD"}); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()

	// A certificate for another name fails the handshake: ServerName is
	// the URL's host, not the address dialed.
	res.names["evil.test"] = []string{"127.0.0.1"}
	c, err = netpolicy.New(mustOp(t, "evil.test"), []string{"evil.test:" + srv.port}, netpolicy.Limits{},
		netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Fetch(context.Background(), netpolicy.Request{URL: "https://evil.test:" + srv.port + "/secret?key=s3cr3t"})
	var herr x509.HostnameError
	if !errors.As(err, &herr) {
		t.Fatalf("Fetch with a certificate for another name = %v, want an x509.HostnameError", err)
	}
	if strings.Contains(err.Error(), "s3cr3t") || strings.Contains(err.Error(), "/secret") {
		t.Errorf("error %q shows the URL's path or query", err)
	}
}

// TestFetchDialsTheCheckedAddress: the resolver answers a public address
// first and loopback afterwards. The client must dial the address it
// checked; a client that resolved again (or let the dialer resolve the
// name) would reach 127.0.0.1 or hand the dialer a name, and fail here.
func TestFetchDialsTheCheckedAddress(t *testing.T) {
	srv := newServer(t, true, hello)
	var calls atomic.Int64
	resolve := func(_ context.Context, host string) ([]netip.Addr, error) {
		if calls.Add(1) == 1 {
			return []netip.Addr{netip.MustParseAddr("93.184.215.14")}, nil
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	d := &dialer{to: func(addr string) string {
		if addr == "93.184.215.14:"+srv.port {
			return srv.Listener.Addr().String()
		}
		return "127.0.0.1:1" // nothing listens there
	}}
	c, err := netpolicy.New(netpolicy.Operator{}, []string{"api.example.com:" + srv.port}, netpolicy.Limits{},
		netpolicy.WithResolver(resolve), netpolicy.WithRootCAs(srv.roots()), netpolicy.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Fetch(context.Background(), netpolicy.Request{URL: "https://api.example.com:" + srv.port + "/"})
	if err != nil {
		t.Fatalf("Fetch: %v (dialed %v)", err, d.dialed())
	}
	if resp.Status != 200 {
		t.Errorf("status %d", resp.Status)
	}
	if got := d.dialed(); len(got) != 1 || got[0] != "93.184.215.14:"+srv.port {
		t.Errorf("dialed %v, want only the checked 93.184.215.14:%s", got, srv.port)
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("resolved %d times, want once", n)
	}
	// The next fetch resolves again, gets loopback, and is refused.
	_, err = c.Fetch(context.Background(), netpolicy.Request{URL: "https://api.example.com:" + srv.port + "/"})
	var ref *netpolicy.Refused
	if !errors.As(err, &ref) || !strings.Contains(ref.Reason, "loopback") {
		t.Errorf("second fetch = %v, want refused for loopback", err)
	}
}

func TestFetchRedirects(t *testing.T) {
	var b *server
	var loops atomic.Int64
	a := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		to := map[string]string{
			"/same":       "/final",
			"/relative":   "final",
			"/toB":        "https://b.example.com:" + b.port + "/final",
			"/postToB":    "https://b.example.com:" + b.port + "/final",
			"/internal":   "https://internal.example.com:" + b.port + "/",
			"/meta":       "https://meta.example.com/",
			"/undeclared": "https://evil.example.com/",
			"/plain":      "http://c.example.com/",
			"/loop":       "/loop",
			"/bad":        "https://a.example.com:%zz/",
		}[r.URL.Path]
		switch r.URL.Path {
		case "/final":
			hello(w, r)
			return
		case "/loop":
			loops.Add(1)
		}
		code := http.StatusFound
		if q := r.URL.Query().Get("code"); q != "" {
			fmt.Sscan(q, &code)
		}
		w.Header().Set("Location", to)
		w.WriteHeader(code)
	})
	b = newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Got-Key", r.Header.Get("X-Key"))
		hello(w, r)
	})
	res := &resolver{names: map[string][]string{
		"a.example.com":        {"127.0.0.1"},
		"b.example.com":        {"127.0.0.1"},
		"internal.example.com": {"10.0.0.1"},
		"meta.example.com":     {"169.254.169.254"},
		"c.example.com":        {"93.184.215.14"},
	}}
	d := &dialer{to: func(addr string) string { return addr }}
	c, err := netpolicy.New(mustOp(t, "a.example.com", "b.example.com"),
		[]string{"a.example.com:" + a.port, "b.example.com:" + b.port, "internal.example.com:" + b.port, "meta.example.com", "c.example.com"},
		netpolicy.Limits{}, netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(a.roots()), netpolicy.WithDialer(d.dial))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		method  string
		body    string
		want    string // response body, or a substring of the *Refused reason
		refused bool
		key     string // X-Key as B saw it
	}{
		{name: "same host", path: "/same", want: "hello GET"},
		{name: "relative location", path: "/relative", want: "hello GET"},
		{name: "303 turns POST into GET", path: "/same?code=303", method: "POST", body: "x", want: "hello GET"},
		{name: "307 keeps POST on the same host", path: "/same?code=307", method: "POST", body: "x", want: "hello POST"},
		{name: "another declared host gets no guest headers", path: "/toB", want: "hello GET", key: ""},
		{name: "307 with a body to another host", path: "/postToB?code=307", method: "POST", body: "x", refused: true, want: "the body is not sent to another host"},
		{name: "to a private address", path: "/internal", refused: true, want: "the redirect to https://internal.example.com:" + b.port + " was refused: internal.example.com resolves to 10.0.0.1, which is a private address"},
		{name: "to a metadata address", path: "/meta", refused: true, want: "cloud metadata"},
		{name: "to an undeclared host", path: "/undeclared", refused: true, want: "redirected to another location that is refused: evil.example.com is not one of this tool's hosts"},
		{name: "down to plain http", path: "/plain", refused: true, want: "plain http:// to c.example.com is refused"},
		{name: "more than 5", path: "/loop", refused: true, want: "redirected more than 5 times"},
		{name: "invalid location", path: "/bad", refused: true, want: "redirected to an invalid location"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := c.Fetch(context.Background(), netpolicy.Request{
				URL: "https://a.example.com:" + a.port + tt.path, Method: tt.method, Body: []byte(tt.body),
				Headers: map[string]string{"X-Key": "secret-for-a"},
			})
			if tt.refused {
				var ref *netpolicy.Refused
				if !errors.As(err, &ref) || !strings.Contains(ref.Reason, tt.want) {
					t.Fatalf("Fetch = %v, want refused with %q", err, tt.want)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(resp.Body) != tt.want {
				t.Errorf("body %q, want %q", resp.Body, tt.want)
			}
			if got := resp.Headers["x-got-key"]; got != tt.key {
				t.Errorf("B saw X-Key %q, want %q", got, tt.key)
			}
		})
	}
	if n := loops.Load(); n != 6 {
		t.Errorf("the loop was requested %d times, want 6 (the request and 5 redirects)", n)
	}
	for _, addr := range d.dialed() {
		if ap, err := netip.ParseAddrPort(addr); err != nil || !ap.Addr().IsLoopback() {
			t.Errorf("dialed %s, which was never allowed", addr)
		}
	}
}

func TestFetchSizeCap(t *testing.T) {
	const limit = 1024
	tests := []struct {
		name     string
		n        int64
		length   bool // send Content-Length
		method   string
		limit    int64
		tooLarge bool
	}{
		{name: "at the cap", n: limit, length: true, limit: limit},
		{name: "at the cap, streamed", n: limit, limit: limit},
		{name: "one byte over", n: limit + 1, length: true, limit: limit, tooLarge: true},
		{name: "one byte over, streamed", n: limit + 1, limit: limit, tooLarge: true},
		{name: "HEAD of a large resource", n: 50 << 20, length: true, method: "HEAD", limit: limit},
		{name: "50 MiB declared", n: 50 << 20, length: true, tooLarge: true},
		{name: "50 MiB streamed", n: 50 << 20, tooLarge: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var written atomic.Int64
			done := make(chan struct{})
			srv := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
				defer close(done)
				if tt.length {
					w.Header().Set("Content-Length", fmt.Sprint(tt.n))
				}
				if r.Method == "HEAD" {
					return
				}
				chunk := make([]byte, 32<<10)
				for written.Load() < tt.n {
					k := min(int64(len(chunk)), tt.n-written.Load())
					if _, err := w.Write(chunk[:k]); err != nil {
						return
					}
					written.Add(k)
					w.(http.Flusher).Flush()
				}
			})
			res := &resolver{names: map[string][]string{"api.example.com": {"127.0.0.1"}}}
			c, err := netpolicy.New(mustOp(t, "api.example.com"), []string{"api.example.com:" + srv.port},
				netpolicy.Limits{MaxResponse: tt.limit}, netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()))
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Fetch(context.Background(), netpolicy.Request{URL: "https://api.example.com:" + srv.port + "/big", Method: tt.method})
			if !tt.tooLarge {
				if err != nil {
					t.Fatal(err)
				}
				if want := tt.n; tt.method == "HEAD" {
					if len(resp.Body) != 0 {
						t.Errorf("HEAD body has %d bytes", len(resp.Body))
					}
				} else if int64(len(resp.Body)) != want {
					t.Errorf("body has %d bytes, want %d", len(resp.Body), want)
				}
				return
			}
			if !errors.Is(err, netpolicy.ErrTooLarge) {
				t.Fatalf("Fetch = %d bytes, %v; want ErrTooLarge", len(resp.Body), err)
			}
			want := "response larger than 1 MiB"
			if tt.limit != 0 {
				want = "response larger than 1 KiB"
			}
			if !strings.Contains(err.Error(), want) {
				t.Errorf("error %q, want it to contain %q", err, want)
			}
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				t.Fatal("the server is still writing: the client did not stop reading")
			}
			if tt.n == 50<<20 && written.Load() >= tt.n {
				t.Errorf("the server wrote all %d bytes; the client should have hung up after the cap", written.Load())
			}
		})
	}
}

func TestFetchTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := newServer(t, true, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow-body" {
			io.WriteString(w, "partial")
			w.(http.Flusher).Flush()
		}
		select {
		case <-r.Context().Done():
		case <-release:
		}
	})
	t.Cleanup(func() { close(release) }) // before srv.Close, which waits for handlers
	res := &resolver{names: map[string][]string{"api.example.com": {"127.0.0.1"}}}
	tests := []struct {
		name     string
		timeout  time.Duration // Limits.Timeout
		deadline time.Duration // the caller's
		path     string
		want     error
	}{
		{name: "no headers in time", timeout: 50 * time.Millisecond, path: "/slow", want: netpolicy.ErrTimeout},
		{name: "no full body in time", timeout: 50 * time.Millisecond, path: "/slow-body", want: netpolicy.ErrTimeout},
		{name: "the caller's deadline comes first", timeout: time.Minute, deadline: 50 * time.Millisecond, path: "/slow", want: context.DeadlineExceeded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := netpolicy.New(mustOp(t, "api.example.com"), []string{"api.example.com:" + srv.port},
				netpolicy.Limits{Timeout: tt.timeout}, netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			start := time.Now()
			resp, err := c.Fetch(ctx, netpolicy.Request{URL: "https://api.example.com:" + srv.port + tt.path})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Fetch = %+v %v after %v, want %v", resp, err, time.Since(start), tt.want)
			}
			if tt.want == netpolicy.ErrTimeout && !strings.Contains(err.Error(), "did not answer within 50ms") {
				t.Errorf("error %q does not say how long it waited", err)
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("Fetch took %v", took)
			}
		})
	}
}

func TestFetchRateLimit(t *testing.T) {
	srv := newServer(t, true, hello)
	res := &resolver{names: map[string][]string{"api.example.com": {"127.0.0.1"}}}
	clk := clocktest.New(time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC))
	c, err := netpolicy.New(mustOp(t, "api.example.com"), []string{"api.example.com:" + srv.port},
		netpolicy.Limits{PerMinute: 2}, netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()),
		netpolicy.WithClock(clk))
	if err != nil {
		t.Fatal(err)
	}
	ok := netpolicy.Request{URL: "https://api.example.com:" + srv.port + "/"}
	refused := netpolicy.Request{URL: "https://elsewhere.example.com/"}
	steps := []struct {
		name    string
		advance time.Duration
		req     netpolicy.Request
		want    string // "" ok, "limited", "refused"
	}{
		{name: "first", req: ok},
		{name: "a refused request costs nothing", req: refused, want: "refused"},
		{name: "second", req: ok},
		{name: "third at once", req: ok, want: "limited"},
		{name: "after 10s", advance: 10 * time.Second, req: ok, want: "limited"},
		{name: "after 30s a token is back", advance: 20 * time.Second, req: ok},
		{name: "and spent", req: ok, want: "limited"},
		{name: "after an hour the bucket is full, not fuller", advance: time.Hour, req: ok},
		{name: "two", req: ok},
		{name: "three", req: ok, want: "limited"},
	}
	for _, s := range steps {
		clk.Advance(s.advance)
		_, err := c.Fetch(context.Background(), s.req)
		var ref *netpolicy.Refused
		switch s.want {
		case "":
			if err != nil {
				t.Errorf("%s: %v", s.name, err)
			}
		case "refused":
			if !errors.As(err, &ref) {
				t.Errorf("%s: %v, want refused", s.name, err)
			}
		case "limited":
			if !errors.Is(err, netpolicy.ErrRateLimited) || !strings.Contains(err.Error(), "rate limited: this tool may fetch 2 times a minute; wait ") {
				t.Errorf("%s: %v, want rate limited", s.name, err)
			}
		}
	}
	if n := srv.hits.Load(); n != 5 {
		t.Errorf("the server saw %d requests, want 5", n)
	}
}
