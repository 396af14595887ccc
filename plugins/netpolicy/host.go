package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// splitPort splits "host", "host:port", "[v6]", "[v6]:port" and a bare IPv6
// address or prefix (which cannot carry a port without brackets). Port 0
// means none was given.
func splitPort(s string) (host string, port uint16, err error) {
	if rest, ok := strings.CutPrefix(s, "["); ok {
		host, after, ok := strings.Cut(rest, "]")
		if !ok {
			return "", 0, errors.New("missing ] after an IPv6 address")
		}
		if after == "" {
			return host, 0, nil
		}
		p, ok := strings.CutPrefix(after, ":")
		if !ok {
			return "", 0, fmt.Errorf("unexpected %q after ]", after)
		}
		port, err := parsePort(p)
		return host, port, err
	}
	if strings.Count(s, ":") > 1 {
		return s, 0, nil
	}
	if h, p, ok := strings.Cut(s, ":"); ok {
		port, err := parsePort(p)
		return h, port, err
	}
	return s, 0, nil
}

func parsePort(p string) (uint16, error) {
	n, err := strconv.ParseUint(p, 10, 16)
	if err != nil || n == 0 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", p)
	}
	return uint16(n), nil
}

// canonHost returns a host in the form every comparison uses: an IP
// address in netip's canonical form (IPv4-mapped addresses unmapped), or a
// lowercased host name without a trailing dot.
func canonHost(h string) (host string, ip netip.Addr, err error) {
	if a, err := netip.ParseAddr(h); err == nil {
		if a.Zone() != "" {
			return "", netip.Addr{}, fmt.Errorf("%s has a zone; give the address without %%%s", h, a.Zone())
		}
		a = a.Unmap()
		return a.String(), a, nil
	}
	name := strings.TrimSuffix(strings.ToLower(h), ".")
	if err := checkName(name); err != nil {
		return "", netip.Addr{}, err
	}
	return name, netip.Addr{}, nil
}

// checkName accepts DNS names in ASCII. Wildcards are refused (a tool lists
// each host it needs), and so are names whose last label starts with a
// digit, which resolvers may read as a short or hex IPv4 address
// ("127.1", "0x7f.1").
func checkName(name string) error {
	switch {
	case name == "":
		return errors.New("the host is empty")
	case strings.Contains(name, "*"):
		return fmt.Errorf("%s has a wildcard; list each host name, e.g. api.example.com", name)
	case len(name) > 253:
		return fmt.Errorf("host name is longer than 253 characters")
	}
	labels := strings.Split(name, ".")
	for _, l := range labels {
		if l == "" || len(l) > 63 {
			return fmt.Errorf("%q is not a host name: each part between dots must have 1 to 63 characters", name)
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return fmt.Errorf("%q is not a host name: a part cannot start or end with '-'", name)
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_':
			case c >= 0x80:
				return fmt.Errorf("%q is not an ASCII host name; use its xn-- (punycode) form", name)
			default:
				return fmt.Errorf("%q is not a host name: %q is not allowed", name, string(c))
			}
		}
	}
	if last := labels[len(labels)-1]; last[0] >= '0' && last[0] <= '9' {
		return fmt.Errorf("%q looks like a shortened IP address; write the address in full, e.g. 192.168.1.10", name)
	}
	return nil
}

// hostPort is one host a tool declared. Port 0 means the scheme's default
// port (443 for https, 80 for http).
type hostPort struct {
	host string
	port uint16
}

func parseToolHost(s string) (hostPort, error) {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") || strings.ContainsAny(s, "/?#@") {
		return hostPort{}, fmt.Errorf("%q is not a host; give a host name or host:port, without scheme or path", s)
	}
	h, port, err := splitPort(s)
	if err != nil {
		return hostPort{}, fmt.Errorf("%q: %v", s, err)
	}
	host, _, err := canonHost(h)
	if err != nil {
		return hostPort{}, fmt.Errorf("%q: %v", s, err)
	}
	return hostPort{host: host, port: port}, nil
}

func defaultPort(scheme string) uint16 {
	if scheme == "http" {
		return 80
	}
	return 443
}

// display writes host and port the way a URL would, leaving out the
// scheme's default port.
func display(scheme, host string, port uint16) string {
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port == 0 || port == defaultPort(scheme) {
		return host
	}
	return host + ":" + strconv.Itoa(int(port))
}
