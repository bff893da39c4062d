package testutil

import (
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// labDNS is the test internet's DNS server: UDP on LabDNSAddr, and on
// every IPv4 address the host's /etc/resolv.conf names (so that a
// process started in the lab, which reads the host's files, resolves
// through it), answering its table of names, NXDOMAIN for the rest,
// counting every question.
type labDNS struct {
	pcs     []net.PacketConn
	wg      sync.WaitGroup
	mu      sync.Mutex
	asked   map[string]int
	rebinds int // A questions about LabRebind so far
}

func startLabDNS(ns *Netns) (*labDNS, error) {
	d := &labDNS{asked: map[string]int{}}
	for _, a := range append([]netip.Addr{LabDNSAddr.Addr()}, hostNameservers()...) {
		if a != LabDNSAddr.Addr() && !a.IsLoopback() {
			if err := ns.AddAddr(a); err != nil {
				d.close()
				return nil, err
			}
		}
		pc, err := ns.ListenPacket("udp", netip.AddrPortFrom(a, 53).String())
		if err != nil {
			d.close()
			return nil, err
		}
		d.pcs = append(d.pcs, pc)
		d.wg.Add(1)
		go d.serve(pc)
	}
	return d, nil
}

func (d *labDNS) serve(pc net.PacketConn) {
	defer d.wg.Done()
	buf := make([]byte, 1500)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp := d.answer(buf[:n]); resp != nil {
			_, _ = pc.WriteTo(resp, from)
		}
	}
}

// hostNameservers are the IPv4 name servers of the host's
// /etc/resolv.conf, but for the lab's own addresses.
func hostNameservers() []netip.Addr {
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		return nil
	}
	var out []netip.Addr
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "nameserver" {
			continue
		}
		a, err := netip.ParseAddr(f[1])
		if err != nil || !a.Is4() || a == LabWebAddr || a == LabEvilAddr || a == LabDNSAddr.Addr() || a == LabPrivateAddr || a == LabMetadataAddr {
			continue
		}
		out = append(out, a)
	}
	return out
}

func (d *labDNS) close() {
	for _, pc := range d.pcs {
		_ = pc.Close()
	}
	d.wg.Wait()
}

func (d *labDNS) count(name string) int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.asked[strings.TrimSuffix(strings.ToLower(name), ".")]
}

// addrs is the table: what each name resolves to, by question type.
func (d *labDNS) addrs(name string, t dnsmessage.Type) []netip.Addr {
	public := []netip.Addr{LabWebAddr}
	v4 := map[string][]netip.Addr{
		LabWeb:      public,
		LabEvil:     {LabEvilAddr},
		LabLoopback: {netip.MustParseAddr("127.0.0.1")},
		LabPrivate:  {LabPrivateAddr},
		LabMetadata: {LabMetadataAddr},
		LabMixed:    {LabWebAddr, LabPrivateAddr},
	}
	switch {
	case t == dnsmessage.TypeAAAA && name == LabLoop6:
		return []netip.Addr{netip.IPv6Loopback()}
	case t == dnsmessage.TypeAAAA && name == LabWeb6:
		return []netip.Addr{LabWeb6Addr}
	case t == dnsmessage.TypeAAAA && name == LabULA:
		return []netip.Addr{LabULAAddr}
	case t != dnsmessage.TypeA:
		return nil
	case name == LabRebind:
		d.rebinds++
		if d.rebinds == 1 {
			return public
		}
		return []netip.Addr{LabPrivateAddr}
	case strings.HasSuffix(name, "."+LabWildcard):
		return public
	}
	return v4[name]
}

// known says whether name is in the table (NOERROR, maybe with no
// answer of the type asked) or not (NXDOMAIN).
func known(name string) bool {
	switch name {
	case LabWeb, LabEvil, LabLoopback, LabPrivate, LabMetadata, LabRebind, LabMixed, LabLoop6, LabWeb6, LabULA:
		return true
	}
	return strings.HasSuffix(name, "."+LabWildcard)
}

func (d *labDNS) answer(pkt []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(pkt)
	if err != nil || h.Response {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.TrimSuffix(strings.ToLower(q.Name.String()), ".")
	d.mu.Lock()
	d.asked[name]++
	addrs := d.addrs(name, q.Type)
	d.mu.Unlock()
	rcode := dnsmessage.RCodeSuccess
	if !known(name) {
		rcode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired, RCode: rcode})
	_ = b.StartQuestions()
	_ = b.Question(q)
	_ = b.StartAnswers()
	for _, a := range addrs {
		rh := dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 0}
		if a.Is4() {
			_ = b.AResource(rh, dnsmessage.AResource{A: a.As4()})
		} else {
			_ = b.AAAAResource(rh, dnsmessage.AAAAResource{AAAA: a.As16()})
		}
	}
	msg, err := b.Finish()
	if err != nil {
		return nil
	}
	return msg
}
