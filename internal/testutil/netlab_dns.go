package testutil

import (
	"net"
	"net/netip"
	"strings"
	"sync"

	"golang.org/x/net/dns/dnsmessage"
)

// labDNS is the test internet's DNS server: UDP on LabDNSAddr, answering
// its table of names, NXDOMAIN for the rest, counting every question.
type labDNS struct {
	pc      net.PacketConn
	wg      sync.WaitGroup
	mu      sync.Mutex
	asked   map[string]int
	rebinds int // A questions about LabRebind so far
}

func startLabDNS(ns *Netns, lab *Lab) (*labDNS, error) {
	pc, err := ns.ListenPacket("udp", LabDNSAddr.String())
	if err != nil {
		return nil, err
	}
	d := &labDNS{pc: pc, asked: map[string]int{}}
	d.wg.Add(1)
	go func() {
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
	}()
	return d, nil
}

func (d *labDNS) close() {
	_ = d.pc.Close()
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
	case LabWeb, LabEvil, LabLoopback, LabPrivate, LabMetadata, LabRebind, LabMixed, LabLoop6:
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
