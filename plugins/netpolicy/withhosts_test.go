package netpolicy_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/lumen-home/lumen/internal/clock/clocktest"
	"github.com/lumen-home/lumen/plugins/netpolicy"
)

// A Client derived with WithHosts reaches only its own hosts, still under
// the address checks, and spends the rate limit of the Client it came from.
func TestWithHosts(t *testing.T) {
	srv := newServer(t, true, hello)
	res := &resolver{names: map[string][]string{
		"api.example.com": {"127.0.0.1"}, // reachable: the operator lists it
		"lan.example.com": {"192.168.1.20"},
	}}
	d := &dialer{to: func(string) string { return "127.0.0.1:" + srv.port }}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	base, err := netpolicy.New(mustOp(t, "api.example.com"), nil, netpolicy.Limits{PerMinute: 4},
		netpolicy.WithResolver(res.resolve), netpolicy.WithRootCAs(srv.roots()), netpolicy.WithDialer(d.dial),
		netpolicy.WithClock(clocktest.New(now)))
	if err != nil {
		t.Fatal(err)
	}
	api := "https://api.example.com:" + srv.port + "/"
	tests := []struct {
		name  string
		hosts []string
		url   string
		want  string // "" ok, else a part of the error
	}{
		{"its own host", []string{"api.example.com:" + srv.port}, api, ""},
		{"another host", []string{"other.example.com"}, api, "not one of this tool's hosts"},
		{"the base declares nothing", nil, api, "declares no hosts"},
		{"a LAN address still needs --allow-net", []string{"lan.example.com"}, "https://lan.example.com/", "private address"},
		{"plain http still needs --allow-net", []string{"lan.example.com"}, "http://lan.example.com/", "plain http://"},
		{"the rate limit is shared", []string{"api.example.com:" + srv.port}, api, ""},
		{"and spent", []string{"api.example.com:" + srv.port}, api, "rate limited"},
	}
	// Tokens: this first fetch, "its own host", the LAN address (refused
	// as it dials, after the bucket) and "the rate limit is shared"; the
	// requests refused before they are sent cost none.
	if _, err := base.Fetch(context.Background(), netpolicy.Request{URL: api}); err == nil {
		t.Fatal("the base client fetched a host it did not declare")
	}
	first, err := base.WithHosts([]string{"api.example.com:" + srv.port})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := first.Fetch(context.Background(), netpolicy.Request{URL: api}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range tests {
		c := base
		if tt.hosts != nil {
			if c, err = base.WithHosts(tt.hosts); err != nil {
				t.Fatalf("%s: %v", tt.name, err)
			}
		}
		resp, err := c.Fetch(context.Background(), netpolicy.Request{URL: tt.url})
		switch {
		case tt.want == "" && err != nil:
			t.Errorf("%s: %v", tt.name, err)
		case tt.want == "" && string(resp.Body) != "hello GET":
			t.Errorf("%s: body %q", tt.name, resp.Body)
		case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
			t.Errorf("%s: got %v, want an error with %q", tt.name, err, tt.want)
		}
	}
	if _, err := base.WithHosts([]string{"*.example.com"}); err == nil || !strings.Contains(err.Error(), "wildcard") {
		t.Errorf("a wildcard host: %v", err)
	}
}
