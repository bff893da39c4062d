package egress

import (
	"hash/fnv"
	"net/netip"
	"sync"
)

// FakeRange holds the addresses the DNS stub answers with: loopback
// addresses of the run's own namespace, where listeners bound to
// 0.0.0.0 on each allowed port accept connections to any of them with no
// route or interface to set up (all of 127.0.0.0/8 is local on lo). It
// stays clear of 127.0.0.0/16, so that 127.0.0.1 (the stub, the proxy)
// and 127.0.1.1 (a Debian host name) are never a name's.
var FakeRange = netip.MustParsePrefix("127.64.0.0/10")

// fakeMap is a run's map of fake addresses to names and back. A name's
// address is a hash of the name into FakeRange (the same in every run,
// which makes reports comparable), probing on past a collision; a name
// keeps its address for the whole run, and an address never changes
// names (a client holding on to an address can never reach another name
// through it). It holds at most max names; past that the stub refuses.
type fakeMap struct {
	mu     sync.Mutex // the DNS stub gives, every captured connection reads
	max    int
	byName map[string]netip.Addr
	byAddr map[netip.Addr]string
}

func newFakeMap(max int) *fakeMap {
	return &fakeMap{max: max, byName: map[string]netip.Addr{}, byAddr: map[netip.Addr]string{}}
}

// addr is name's fake address, given on first ask; false when the map is
// full.
func (m *fakeMap) addr(name string) (netip.Addr, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if a, ok := m.byName[name]; ok {
		return a, true
	}
	if len(m.byName) >= m.max {
		return netip.Addr{}, false
	}
	base := FakeRange.Addr().As4()
	start := uint32(base[0])<<24 | uint32(base[1])<<16 | uint32(base[2])<<8 | uint32(base[3])
	size := uint32(1) << (32 - FakeRange.Bits())
	h := fnv.New32a()
	h.Write([]byte(name))
	// Offsets 0 and size-1 (the range's .0.0 and .255.255 ends) are left
	// out: harmless on lo, but they read like network and broadcast.
	off := 1 + h.Sum32()%(size-2)
	for {
		n := start + off
		a := netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)})
		if _, taken := m.byAddr[a]; !taken {
			m.byName[name], m.byAddr[a] = a, name
			return a, true
		}
		off = 1 + off%(size-2)
	}
}

// name is the name a fake address was given to.
func (m *fakeMap) name(a netip.Addr) (string, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, ok := m.byAddr[a.Unmap()]
	return n, ok
}
