package netpolicy

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Operator is what the operator allows beyond the public internet, from
// `lumen up --allow-net HOST[:PORT]` (repeatable). Only the operator can
// open the local network to tools, because tool definitions are written by
// an LLM. The zero Operator allows nothing extra.
type Operator struct {
	entries []allowEntry
}

// allowEntry is one --allow-net entry: a name, or an IP or CIDR as a
// prefix; port 0 allows every port.
type allowEntry struct {
	name   string
	prefix netip.Prefix
	port   uint16
}

// ParseAllow parses --allow-net entries. An entry is a host name, an IP
// address or a CIDR, with an optional port: hue.lan, hue.lan:80,
// 192.168.1.10, 192.168.1.0/24, 192.168.1.0/24:8080, [fd00::1]:8080,
// fd00::/8. Every bad entry is reported, each with what to write instead.
func ParseAllow(entries []string) (Operator, error) {
	var op Operator
	var errs []error
	for _, s := range entries {
		e, err := parseAllowEntry(s)
		if err != nil {
			errs = append(errs, fmt.Errorf("netpolicy: --allow-net %q: %v; write HOST, HOST:PORT, an IP address or a CIDR such as 192.168.1.0/24", s, err))
			continue
		}
		op.entries = append(op.entries, e)
	}
	if len(errs) > 0 {
		return Operator{}, errors.Join(errs...)
	}
	return op, nil
}

func parseAllowEntry(s string) (allowEntry, error) {
	s = strings.TrimSpace(s)
	switch {
	case s == "":
		return allowEntry{}, errors.New("the entry is empty")
	case strings.Contains(s, "://"):
		return allowEntry{}, errors.New("that is a URL; give only its host")
	case strings.ContainsAny(s, "?#@"):
		return allowEntry{}, errors.New("that is not a host")
	}
	h, port, err := splitPort(s)
	if err != nil {
		return allowEntry{}, err
	}
	if strings.Contains(h, "/") {
		p, err := netip.ParsePrefix(h)
		if err != nil {
			return allowEntry{}, fmt.Errorf("%q is not a CIDR", h)
		}
		if p.Addr().Is4In6() {
			if p.Bits() < 96 {
				return allowEntry{}, fmt.Errorf("%q mixes IPv4-mapped and IPv6 addresses; give the IPv4 CIDR", h)
			}
			p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
		}
		return allowEntry{prefix: p.Masked(), port: port}, nil
	}
	host, ip, err := canonHost(h)
	if err != nil {
		return allowEntry{}, err
	}
	if ip.IsValid() {
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port}, nil
	}
	return allowEntry{name: host, port: port}, nil
}

// String lists the entries in the form ParseAllow accepts.
func (op Operator) String() string {
	s := make([]string, len(op.entries))
	for i, e := range op.entries {
		s[i] = e.String()
	}
	return strings.Join(s, " ")
}

func (e allowEntry) String() string {
	h := e.name
	if h == "" {
		h = e.prefix.String()
		if e.prefix.IsSingleIP() {
			h = e.prefix.Addr().String()
		}
		if e.prefix.Addr().Is6() && e.port != 0 {
			h = "[" + h + "]"
		}
	}
	if e.port != 0 {
		h += ":" + strconv.Itoa(int(e.port))
	}
	return h
}

func (e allowEntry) portOK(port uint16) bool { return e.port == 0 || e.port == port }

// allowsName reports whether the operator listed the host name (canonical).
func (op Operator) allowsName(host string, port uint16) bool {
	for _, e := range op.entries {
		if e.name != "" && e.name == host && e.portOK(port) {
			return true
		}
	}
	return false
}

// allowsAddr reports whether the operator listed the address by IP or CIDR.
func (op Operator) allowsAddr(a netip.Addr, port uint16) bool {
	for _, e := range op.entries {
		if e.name == "" && e.prefix.Contains(a) && e.portOK(port) {
			return true
		}
	}
	return false
}

// allowsExact reports whether the operator listed exactly this address.
func (op Operator) allowsExact(a netip.Addr, port uint16) bool {
	for _, e := range op.entries {
		if e.name == "" && e.prefix.IsSingleIP() && e.prefix.Addr() == a && e.portOK(port) {
			return true
		}
	}
	return false
}

// mayAllow reports whether the operator may have listed the host, before
// it is resolved: by name, by IP, or, for a name, by an IP or CIDR that
// its addresses may fall in. The dialer decides for each address.
func (op Operator) mayAllow(host string, ip netip.Addr, port uint16) bool {
	if ip.IsValid() {
		return op.allowsAddr(ip, port)
	}
	if op.allowsName(host, port) {
		return true
	}
	for _, e := range op.entries {
		if e.name == "" && e.portOK(port) {
			return true
		}
	}
	return false
}
