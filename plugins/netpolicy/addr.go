package netpolicy

import "net/netip"

// specialRanges are the addresses a tool may not reach unless the operator
// allows the host: everything that is not the public internet. Earlier
// entries win, so that 255.255.255.255 is called broadcast, not reserved.
var specialRanges = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("10.0.0.0/8"), "private"},
	{netip.MustParsePrefix("100.64.0.0/10"), "carrier-grade NAT"},
	{netip.MustParsePrefix("127.0.0.0/8"), "loopback"},
	{netip.MustParsePrefix("169.254.0.0/16"), "link-local"},
	{netip.MustParsePrefix("172.16.0.0/12"), "private"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation"},
	{netip.MustParsePrefix("192.168.0.0/16"), "private"},
	{netip.MustParsePrefix("198.18.0.0/15"), "reserved"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation"},
	{netip.MustParsePrefix("224.0.0.0/4"), "multicast"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("::/128"), "unspecified"},
	{netip.MustParsePrefix("::1/128"), "loopback"},
	{netip.MustParsePrefix("::/96"), "reserved"}, // IPv4-compatible, deprecated
	{netip.MustParsePrefix("64:ff9b:1::/48"), "private"},
	{netip.MustParsePrefix("100::/64"), "reserved"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("fc00::/7"), "private"},
	{netip.MustParsePrefix("fe80::/10"), "link-local"},
	{netip.MustParsePrefix("fec0::/10"), "private"}, // site-local, deprecated
	{netip.MustParsePrefix("ff00::/8"), "multicast"},
}

// metadataAddrs are the cloud instance metadata services, which hand out
// credentials. They are only reachable when the operator lists the exact
// address: no host name or CIDR entry opens them by accident.
var metadataAddrs = []netip.Addr{
	netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack …
	netip.MustParseAddr("169.254.170.2"),   // AWS ECS task metadata
	netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
}

var (
	nat64  = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4 = netip.MustParsePrefix("2002::/16")
)

// plain returns the address without IPv4 mapping or zone, the form every
// check and every dial uses (netip.Prefix.Contains is false with a zone).
func plain(a netip.Addr) netip.Addr { return a.Unmap().WithZone("") }

func isMetadata(a netip.Addr) bool {
	a = plain(a)
	for _, m := range metadataAddrs {
		if a == m {
			return true
		}
	}
	if v4, ok := embedded(a); ok {
		return isMetadata(v4)
	}
	return false
}

// embedded returns the IPv4 address inside a NAT64 (well-known prefix) or
// 6to4 address, which a gateway may forward to that IPv4 address.
func embedded(a netip.Addr) (netip.Addr, bool) {
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return netip.AddrFrom4([4]byte(b[12:16])), true
	case sixTo4.Contains(a):
		return netip.AddrFrom4([4]byte(b[2:6])), true
	}
	return netip.Addr{}, false
}

// classify says which kind of special address a is ("loopback",
// "private" …), or "" for a public address.
func classify(a netip.Addr) string {
	a = plain(a)
	if isMetadata(a) {
		return "cloud metadata"
	}
	if v4, ok := embedded(a); ok {
		if what := classify(v4); what != "" {
			return "NAT64 or 6to4 form of " + article(what) + " " + what
		}
		return ""
	}
	for _, r := range specialRanges {
		if r.prefix.Contains(a) {
			return r.what
		}
	}
	return ""
}
