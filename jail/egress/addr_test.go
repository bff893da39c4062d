package egress

import (
	"net/netip"
	"strings"
	"testing"
)

func TestCheckAddr(t *testing.T) {
	plain := Policy{}
	ranged, err := Parse(nil, []string{"10.20.0.0/16", "fd00:1::/32"})
	if err != nil {
		t.Fatal(err)
	}
	lab := Policy{}.withLabPublic(netip.MustParsePrefix("198.18.0.0/15"))
	tests := []struct {
		p    Policy
		addr string
		ok   bool
		want string
	}{
		{plain, "93.184.215.14", true, "public"},
		{plain, "2606:4700::6810:84e5", true, "public"},
		{plain, "127.0.0.1", false, "loopback"},
		{plain, "127.255.255.254", false, "loopback"},
		{plain, "0.0.0.0", false, "this-network"},
		{plain, "10.0.0.5", false, "private"},
		{plain, "172.16.3.4", false, "private"},
		{plain, "172.32.0.1", true, "public"},
		{plain, "192.168.1.1", false, "private"},
		{plain, "100.64.0.1", false, "carrier-grade NAT"},
		{plain, "100.128.0.1", true, "public"},
		{plain, "169.254.169.254", false, "metadata"},
		{plain, "169.254.1.1", false, "link-local"},
		{plain, "224.0.0.1", false, "multicast"},
		{plain, "255.255.255.255", false, "broadcast"},
		{plain, "240.0.0.1", false, "reserved"},
		{plain, "192.0.2.1", false, "documentation"},
		{plain, "198.51.100.1", false, "documentation"},
		{plain, "203.0.113.1", false, "documentation"},
		{plain, "198.18.0.10", false, "benchmarking"},
		{plain, "192.0.0.8", false, "IETF"},
		{plain, "::", false, "unspecified"},
		{plain, "::1", false, "loopback"},
		{plain, "::ffff:127.0.0.1", false, "IPv4-mapped"},
		{plain, "::ffff:93.184.215.14", false, "IPv4-mapped"},
		{plain, "::7f00:1", false, "IPv4-compatible"},
		{plain, "64:ff9b::a9fe:a9fe", false, "NAT64"},
		{plain, "2002:a9fe:a9fe::1", false, "6to4"},
		{plain, "2001:0:4136:e378:8000:63bf:3fff:fdd2", false, "Teredo"},
		{plain, "2001:db8::1", false, "documentation"},
		{plain, "fd00::1", false, "unique local"},
		{plain, "fe80::1", false, "link-local"},
		{plain, "fe80::1%eth0", false, "zone"},
		{plain, "fec0::1", false, "site-local"},
		{plain, "ff02::1", false, "multicast"},
		{plain, "100::1", false, "discard"},
		{plain, "4000::1", false, "outside IPv6 global unicast"},
		{ranged, "10.20.3.4", true, "allowed by the profile"},
		{ranged, "10.21.3.4", false, "private"},
		{ranged, "fd00:1::5", true, "allowed by the profile"},
		{ranged, "::ffff:10.20.3.4", false, "IPv4-mapped"},
		{lab, "198.18.0.10", true, "test internet"},
		{lab, "10.0.0.5", false, "private"},
	}
	for _, tt := range tests {
		ok, why := tt.p.checkAddr(netip.MustParseAddr(tt.addr))
		if ok != tt.ok || !strings.Contains(why, tt.want) {
			t.Errorf("checkAddr(%s) = %v, %q, want %v, %q", tt.addr, ok, why, tt.ok, tt.want)
		}
	}
}
