package egress

import "net/netip"

// withLabPublic marks the test internet's ranges public: the one way to
// set labPublic, reachable from this package's tests only.
func (p Policy) withLabPublic(r ...netip.Prefix) Policy {
	p.labPublic = r
	return p
}
