package secrets

import (
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// MaxValueLen is the longest value a secret may have.
const MaxValueLen = 8 << 10

// MinValueLen is the shortest: a shorter value could not be told apart
// from ordinary text when responses are redacted.
const MinValueLen = 4

var nameRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,63}$`)

// ValidName reports whether name can name a secret: an upper-case letter,
// then up to 63 upper-case letters, digits or underscores.
func ValidName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("secrets: name %q: %w: want an upper-case letter, then up to 63 upper-case letters, digits or underscores, like OPENWEATHER_KEY", name, ErrInvalid)
	}
	return nil
}

func validValue(name, v string) error {
	switch {
	case len(v) < MinValueLen:
		return fmt.Errorf("secrets: %s: %w: the value is empty or shorter than %d bytes", name, ErrInvalid, MinValueLen)
	case len(v) > MaxValueLen:
		return fmt.Errorf("secrets: %s: %w: the value is longer than %d bytes", name, ErrInvalid, MaxValueLen)
	case !utf8.ValidString(v):
		return fmt.Errorf("secrets: %s: %w: the value is not UTF-8 text", name, ErrInvalid)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("secrets: %s: %w: the value holds a control character (a newline or tab?); it must fit on one line of an HTTP header", name, ErrInvalid)
		}
	}
	return nil
}

// normalizeHosts validates hosts and returns them in canonical form,
// without duplicates, in the order given.
func normalizeHosts(name string, hosts []string) ([]string, error) {
	if len(hosts) == 0 {
		return nil, fmt.Errorf("secrets: %s: %w: bind it to at least one host it may be sent to (--host api.example.com)", name, ErrInvalid)
	}
	out := make([]string, 0, len(hosts))
	seen := map[string]bool{}
	for _, h := range hosts {
		hp, err := parseHost(h)
		if err != nil {
			return nil, fmt.Errorf("secrets: %s: %w", name, err)
		}
		c := hp.String()
		if !seen[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out, nil
}

// hostPort is a canonical host: a lower-case DNS name without a trailing
// dot, or an IP address; the port is "" when none was given.
type hostPort struct {
	host string
	port string
	ipv6 bool
}

func (h hostPort) String() string {
	host := h.host
	if h.ipv6 {
		host = "[" + host + "]"
	}
	if h.port == "" {
		return host
	}
	return host + ":" + h.port
}

// allows reports whether a binding h allows a request to r: the same
// host, and the same port unless the binding names none.
func (h hostPort) allows(r hostPort) bool {
	return h.host == r.host && (h.port == "" || h.port == r.port)
}

// parseHost parses "name", "name:port", "1.2.3.4[:port]", "[::1][:port]"
// or "::1".
func parseHost(raw string) (hostPort, error) {
	bad := func(why string) (hostPort, error) {
		return hostPort{}, fmt.Errorf("host %q: %w: %s", raw, ErrInvalid, why)
	}
	h := strings.ToLower(strings.TrimSpace(raw))
	if h == "" {
		return bad("empty; want a host name like api.example.com or HOST:PORT")
	}
	if strings.Contains(h, "://") || strings.ContainsAny(h, "/?#@\\ \t*") {
		return bad("want a host name like api.example.com or HOST:PORT, without scheme, path or wildcard")
	}
	if strings.HasSuffix(h, ":") {
		return bad("the port is missing after ':'")
	}
	var hp hostPort
	host := h
	switch {
	case strings.HasPrefix(h, "[") && strings.HasSuffix(h, "]"):
		host = h[1 : len(h)-1]
	case strings.HasPrefix(h, "[") || strings.Count(h, ":") == 1:
		var err error
		if host, hp.port, err = net.SplitHostPort(h); err != nil {
			return bad("want HOST or HOST:PORT")
		}
		n, err := strconv.Atoi(hp.port)
		if err != nil || n < 1 || n > 65535 {
			return bad("the port must be a number from 1 to 65535")
		}
		hp.port = strconv.Itoa(n)
	}
	if addr, err := netip.ParseAddr(host); err == nil {
		if addr.Zone() != "" {
			return bad("an IPv6 zone is not allowed")
		}
		addr = addr.Unmap()
		hp.host, hp.ipv6 = addr.String(), addr.Is6()
		return hp, nil
	}
	if strings.HasPrefix(h, "[") {
		return bad("not an IPv6 address between brackets")
	}
	host = strings.TrimSuffix(host, ".")
	if err := validDNSName(host); err != "" {
		return bad(err)
	}
	hp.host = host
	return hp, nil
}

func validDNSName(s string) string {
	if len(s) == 0 || len(s) > 253 {
		return "a host name has 1 to 253 characters"
	}
	labels := strings.Split(s, ".")
	for _, l := range labels {
		if len(l) == 0 || len(l) > 63 {
			return "each part of a host name between dots has 1 to 63 characters"
		}
		if l[0] == '-' || l[len(l)-1] == '-' {
			return "a part of a host name cannot start or end with '-'"
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return fmt.Sprintf("%q is not allowed in a host name", c)
			}
		}
	}
	if strings.Trim(labels[len(labels)-1], "0123456789") == "" {
		return "neither a host name nor an IP address"
	}
	return ""
}

// NormalizeHost validates a host a secret may be bound to, "name",
// "name:port", an IP address or "[ipv6]:port", and returns its canonical
// form: lower-case, without a trailing dot.
func NormalizeHost(host string) (string, error) {
	hp, err := parseHost(host)
	if err != nil {
		return "", fmt.Errorf("secrets: %w", err)
	}
	return hp.String(), nil
}
