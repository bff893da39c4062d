package egress

import "net/netip"

// special is a range of addresses that is not the public internet, with
// what it is, for the refusal's words.
type special struct {
	prefix netip.Prefix
	what   string
}

func sp(cidr, what string) special { return special{netip.MustParsePrefix(cidr), what} }

// nonPublic are the IPv4 ranges a name may not resolve into, and the
// IPv6 ranges inside 2000::/3 (global unicast) that are not public; IPv6
// outside 2000::/3 is refused whole (IANA's special-purpose registries,
// RFC 6890 and its updates). Where ranges nest, the narrower comes first
// so that the refusal names it. Ranges that embed an IPv4 address
// (IPv4-mapped and -compatible, NAT64, 6to4, Teredo) are refused whole:
// the IPv4 address inside would reach, through a translator, what its
// own check refuses (a metadata endpoint at 64:ff9b::a9fe:a9fe), and no
// public API needs them.
var nonPublic = []special{
	sp("0.0.0.0/8", "this-network (0.0.0.0/8), which reaches the host itself"),
	sp("10.0.0.0/8", "private (RFC 1918)"),
	sp("100.64.0.0/10", "shared carrier-grade NAT space (RFC 6598)"),
	sp("127.0.0.0/8", "loopback"),
	sp("169.254.169.254/32", "link-local: a cloud instance's metadata endpoint"),
	sp("169.254.0.0/16", "link-local"),
	sp("172.16.0.0/12", "private (RFC 1918)"),
	sp("192.0.0.0/24", "IETF protocol assignments"),
	sp("192.0.2.0/24", "documentation (TEST-NET-1)"),
	sp("192.88.99.0/24", "6to4 relay anycast"),
	sp("192.168.0.0/16", "private (RFC 1918)"),
	sp("198.18.0.0/15", "benchmarking (RFC 2544)"),
	sp("198.51.100.0/24", "documentation (TEST-NET-2)"),
	sp("203.0.113.0/24", "documentation (TEST-NET-3)"),
	sp("224.0.0.0/4", "multicast"),
	sp("255.255.255.255/32", "broadcast"),
	sp("240.0.0.0/4", "reserved"),

	sp("::/128", "unspecified"),
	sp("::1/128", "loopback"),
	sp("::ffff:0:0/96", "IPv4-mapped"),
	sp("::/96", "IPv4-compatible"),
	sp("64:ff9b::/96", "NAT64, which embeds an IPv4 address"),
	sp("64:ff9b:1::/48", "local-use NAT64, which embeds an IPv4 address"),
	sp("100::/64", "discard-only"),
	sp("fc00::/7", "unique local (private)"),
	sp("fe80::/10", "link-local"),
	sp("fec0::/10", "site-local"),
	sp("ff00::/8", "multicast"),
	sp("2001::/32", "Teredo, which embeds an IPv4 address"),
	sp("2001:2::/48", "benchmarking"),
	sp("2001:10::/28", "ORCHID"),
	sp("2001:20::/28", "ORCHIDv2"),
	sp("2001:db8::/32", "documentation"),
	sp("2002::/16", "6to4, which embeds an IPv4 address"),
	sp("3fff::/20", "documentation"),
	sp("5f00::/16", "segment routing identifiers"),
}

var globalUnicast6 = netip.MustParsePrefix("2000::/3")

// checkAddr says whether a name may be dialled at a: a public address, or
// one in a range the policy names. The reason names the range either way.
func (p Policy) checkAddr(a netip.Addr) (bool, string) {
	if a.Zone() != "" {
		return false, a.String() + " has a zone (link-local scope)"
	}
	for _, r := range p.Ranges {
		if r.Contains(a) {
			return true, a.String() + " is in " + r.String() + ", allowed by the profile"
		}
	}
	for _, r := range p.labPublic {
		if r.Contains(a) {
			return true, a.String() + " is public (the test internet's)"
		}
	}
	for _, s := range nonPublic {
		if s.prefix.Contains(a) {
			return false, a.String() + " is " + s.what
		}
	}
	if a.Is6() && !globalUnicast6.Contains(a) {
		return false, a.String() + " is outside IPv6 global unicast (2000::/3)"
	}
	if !a.IsValid() {
		return false, "no address"
	}
	return true, a.String() + " is public"
}
