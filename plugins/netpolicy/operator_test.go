package netpolicy_test

import (
	"strings"
	"testing"

	"github.com/lumen-home/lumen/plugins/netpolicy"
)

func TestParseAllow(t *testing.T) {
	tests := []struct {
		name  string
		given []string
		want  string // Operator.String, or a substring of the error
		ok    bool
	}{
		{name: "none", given: nil, want: "", ok: true},
		{name: "names, IPs and CIDRs", ok: true,
			given: []string{"Hue.LAN.", "hue.lan:80", "192.168.1.10", "192.168.1.0/24", "10.1.2.3/8:8080", "[fd00::1]:8443", "fd00::/8", "[fd00::/8]:80", "::ffff:10.0.0.0/104"},
			want:  "hue.lan hue.lan:80 192.168.1.10 192.168.1.0/24 10.0.0.0/8:8080 [fd00::1]:8443 fd00::/8 [fd00::/8]:80 10.0.0.0/8"},
		{name: "empty", given: []string{" "}, want: "the entry is empty"},
		{name: "URL", given: []string{"http://hue.lan"}, want: "give only its host"},
		{name: "port zero", given: []string{"hue.lan:0"}, want: "not a number from 1 to 65535"},
		{name: "port too large", given: []string{"hue.lan:99999"}, want: "not a number from 1 to 65535"},
		{name: "port not a number", given: []string{"hue.lan:http"}, want: "not a number from 1 to 65535"},
		{name: "wildcard", given: []string{"*.lan"}, want: "wildcard"},
		{name: "bad CIDR", given: []string{"10.0.0.0/33"}, want: "is not a CIDR"},
		{name: "path", given: []string{"hue.lan/api"}, want: "is not a CIDR"},
		{name: "unclosed bracket", given: []string{"[fd00::1:80"}, want: "missing ]"},
		{name: "zone", given: []string{"fe80::1%eth0"}, want: "has a zone"},
		{name: "empty label", given: []string{"a..lan"}, want: "1 to 63 characters"},
		{name: "hyphen", given: []string{"-hue.lan"}, want: "cannot start or end with '-'"},
		{name: "short IPv4", given: []string{"127.1"}, want: "shortened IP address"},
		{name: "not ASCII", given: []string{"lümen.lan"}, want: "punycode"},
		{name: "every bad entry is reported", given: []string{"ok.lan", "a:0", "b:0"}, want: `"b:0"`},
		{name: "says what to write", given: []string{"x y"}, want: "write HOST, HOST:PORT, an IP address or a CIDR"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			op, err := netpolicy.ParseAllow(tt.given)
			if tt.ok {
				if err != nil {
					t.Fatalf("ParseAllow(%q): %v", tt.given, err)
				}
				if got := op.String(); got != tt.want {
					t.Errorf("String() = %q, want %q", got, tt.want)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseAllow(%q) = %v, want an error containing %q", tt.given, err, tt.want)
			}
		})
	}
}

func TestNewRefusesBadHostsAndLimits(t *testing.T) {
	tests := []struct {
		name  string
		hosts []string
		lim   netpolicy.Limits
		want  string
	}{
		{name: "wildcard", hosts: []string{"*.example.com"}, want: "wildcard"},
		{name: "URL", hosts: []string{"https://api.example.com"}, want: "without scheme or path"},
		{name: "path", hosts: []string{"api.example.com/v1"}, want: "without scheme or path"},
		{name: "CIDR", hosts: []string{"10.0.0.0/8"}, want: "without scheme or path"},
		{name: "port", hosts: []string{"api.example.com:0"}, want: "1 to 65535"},
		{name: "empty", hosts: []string{""}, want: "the host is empty"},
		{name: "every bad host", hosts: []string{"a:0", "ok.example.com", "*.b"}, want: "wildcard"},
		{name: "negative limit", lim: netpolicy.Limits{Timeout: -1}, want: "must not be negative"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := netpolicy.New(netpolicy.Operator{}, tt.hosts, tt.lim)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New(%q) = %v, want an error containing %q", tt.hosts, err, tt.want)
			}
		})
	}
	if _, err := netpolicy.New(netpolicy.Operator{}, []string{"api.example.com", "API.example.com.", "hue.lan:8080", "[fd00::1]:8443", "10.0.0.1"}, netpolicy.Limits{}); err != nil {
		t.Fatalf("New with good hosts: %v", err)
	}
}
