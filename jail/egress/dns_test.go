package egress

import (
	"encoding/binary"
	"net/netip"
	"strings"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

func query(t testing.TB, name string, typ dnsmessage.Type) []byte {
	t.Helper()
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: 0x1234, RecursionDesired: true})
	if err := b.StartQuestions(); err != nil {
		t.Fatal(err)
	}
	if err := b.Question(dnsmessage.Question{Name: dnsmessage.MustNewName(name), Type: typ, Class: dnsmessage.ClassINET}); err != nil {
		t.Fatal(err)
	}
	msg, err := b.Finish()
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// rawQuery is a query whose question name is given as wire labels, so
// that a test can send what dnsmessage will not build.
func rawQuery(labels ...string) []byte {
	msg := []byte{0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0}
	for _, l := range labels {
		msg = append(msg, byte(len(l)))
		msg = append(msg, l...)
	}
	msg = append(msg, 0)
	return binary.BigEndian.AppendUint16(binary.BigEndian.AppendUint16(msg, uint16(dnsmessage.TypeA)), uint16(dnsmessage.ClassINET))
}

type parsedReply struct {
	id      uint16
	rcode   dnsmessage.RCode
	answers []netip.Addr
}

func parseReply(t testing.TB, msg []byte) parsedReply {
	t.Helper()
	var m dnsmessage.Message
	if err := m.Unpack(msg); err != nil {
		t.Fatalf("the stub's reply does not parse: %v", err)
	}
	if !m.Header.Response {
		t.Fatalf("the stub's reply is not marked a response")
	}
	r := parsedReply{id: m.Header.ID, rcode: m.Header.RCode}
	for _, a := range m.Answers {
		if ar, ok := a.Body.(*dnsmessage.AResource); ok {
			r.answers = append(r.answers, netip.AddrFrom4(ar.A))
		}
	}
	return r
}

func TestAnswerQuery(t *testing.T) {
	p, err := Parse([]string{"eutils.ncbi.nlm.nih.gov", "*.uniprot.org", "bücher.example"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		pkt      []byte
		rcode    dnsmessage.RCode
		answered bool // an A answer in FakeRange
		decision Decision
		reason   Reason
		detail   string
	}{
		{"allowed A", query(t, "eutils.ncbi.nlm.nih.gov.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, true, Answered, ReasonNone, ""},
		{"allowed A in upper case", query(t, "EUTILS.ncbi.nlm.nih.gov.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, true, Answered, ReasonNone, ""},
		{"wildcard A", query(t, "rest.uniprot.org.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, true, Answered, ReasonNone, ""},
		{"a Unicode entry's ASCII form", query(t, "xn--bcher-kva.example.", dnsmessage.TypeA), dnsmessage.RCodeSuccess, true, Answered, ReasonNone, ""},
		{"a Unicode name asked raw", rawQuery("bücher", "example"), dnsmessage.RCodeRefused, false, Refused, ReasonMalformed, "a character other than"},
		{"allowed AAAA: empty", query(t, "eutils.ncbi.nlm.nih.gov.", dnsmessage.TypeAAAA), dnsmessage.RCodeSuccess, false, Answered, ReasonNone, ""},
		{"allowed HTTPS: empty", query(t, "rest.uniprot.org.", dnsmessage.TypeHTTPS), dnsmessage.RCodeSuccess, false, Answered, ReasonNone, ""},
		{"allowed TXT", query(t, "eutils.ncbi.nlm.nih.gov.", dnsmessage.TypeTXT), dnsmessage.RCodeRefused, false, Refused, ReasonQueryType, "TXT"},
		{"allowed MX", query(t, "eutils.ncbi.nlm.nih.gov.", dnsmessage.TypeMX), dnsmessage.RCodeRefused, false, Refused, ReasonQueryType, "MX"},
		{"not allowed", query(t, "evil.example.", dnsmessage.TypeA), dnsmessage.RCodeRefused, false, Refused, ReasonNotInProfile, "evil.example is not in the profile"},
		{"wildcard apex", query(t, "uniprot.org.", dnsmessage.TypeA), dnsmessage.RCodeRefused, false, Refused, ReasonNotInProfile, ""},
		{"not allowed AAAA", query(t, "evil.example.", dnsmessage.TypeAAAA), dnsmessage.RCodeRefused, false, Refused, ReasonNotInProfile, ""},
		{"reverse lookup", query(t, "1.0.64.127.in-addr.arpa.", dnsmessage.TypePTR), dnsmessage.RCodeRefused, false, Refused, ReasonNotInProfile, ""},
		{"label of 64", rawQuery(strings.Repeat("a", 64), "uniprot", "org"), dnsmessage.RCodeRefused, false, Refused, ReasonMalformed, "cannot be read"},
		{"name of 300", rawQuery(strings.Split(strings.Repeat(strings.Repeat("a", 59)+".", 5)+"uniprot.org", ".")...), dnsmessage.RCodeRefused, false, Refused, ReasonMalformed, "cannot be read"},
		{"bytes in a label", rawQuery("a\r\nb", "uniprot", "org"), dnsmessage.RCodeRefused, false, Refused, ReasonMalformed, `"a\r\nb.uniprot.org."`},
		{"numeric last label", rawQuery("127", "1"), dnsmessage.RCodeRefused, false, Refused, ReasonMalformed, "IP address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fakes := newFakeMap(16)
			resp, l := answerQuery(&p, fakes, tt.pkt)
			if resp == nil {
				t.Fatalf("answerQuery(%s) sent no reply", tt.name)
			}
			r := parseReply(t, resp)
			if r.id != 0x1234 || r.rcode != tt.rcode {
				t.Errorf("answerQuery(%s) = id %#x %v, want id 0x1234 %v", tt.name, r.id, r.rcode, tt.rcode)
			}
			if got := len(r.answers) == 1 && FakeRange.Contains(r.answers[0]); got != tt.answered {
				t.Errorf("answerQuery(%s) answers = %v, want a fake address: %v", tt.name, r.answers, tt.answered)
			}
			if tt.answered && l.Answer != r.answers[0].String() {
				t.Errorf("answerQuery(%s) recorded answer %q, want %q", tt.name, l.Answer, r.answers[0])
			}
			if l.Decision != tt.decision || l.Reason != tt.reason || !strings.Contains(l.Detail, tt.detail) {
				t.Errorf("answerQuery(%s) recorded %s/%s %q, want %s/%s %q", tt.name, l.Decision, l.Reason, l.Detail, tt.decision, tt.reason, tt.detail)
			}
		})
	}
}

// TestAnswerQueryUnanswerable: what cannot be replied to is recorded and
// not answered.
func TestAnswerQueryUnanswerable(t *testing.T) {
	p, _ := Parse([]string{"a.example"}, nil)
	resp := query(t, "a.example.", dnsmessage.TypeA)
	resp[2] |= 0x80 // QR: a response
	two := query(t, "a.example.", dnsmessage.TypeA)
	two[5] = 2 // QDCOUNT 2, one question present
	tests := []struct {
		name  string
		pkt   []byte
		reply bool
		want  string
	}{
		{"empty", nil, false, "too short"},
		{"short", []byte{1, 2, 3}, false, "too short"},
		{"a response", resp, false, "response"},
		{"two questions", two, true, "question"},
		{"status opcode", append([]byte{0x12, 0x34, 0x10, 0}, make([]byte, 8)...), true, "opcode 2"},
	}
	for _, tt := range tests {
		got, l := answerQuery(&p, newFakeMap(4), tt.pkt)
		if (got != nil) != tt.reply {
			t.Errorf("answerQuery(%s) replied %v, want %v", tt.name, got != nil, tt.reply)
		}
		if got != nil && parseReply(t, got).rcode != dnsmessage.RCodeRefused {
			t.Errorf("answerQuery(%s) = %v, want REFUSED", tt.name, parseReply(t, got).rcode)
		}
		if l.Decision != Refused || l.Reason != ReasonMalformed || !strings.Contains(l.Detail, tt.want) {
			t.Errorf("answerQuery(%s) recorded %s/%s %q, want refused/malformed %q", tt.name, l.Decision, l.Reason, l.Detail, tt.want)
		}
	}
}

// TestFakeMap: a name's address is in FakeRange, the same on every ask
// and in every run, never another name's; the map refuses past its size.
func TestFakeMap(t *testing.T) {
	m, again := newFakeMap(3), newFakeMap(3)
	a1, _ := m.addr("a.example")
	b1, _ := m.addr("b.example")
	a2, _ := m.addr("a.example")
	if a1 != a2 || a1 == b1 || !FakeRange.Contains(a1) || !FakeRange.Contains(b1) {
		t.Errorf("addr(a), addr(b), addr(a) = %v, %v, %v, want a stable address per name in %v", a1, b1, a2, FakeRange)
	}
	if got, _ := again.addr("a.example"); got != a1 {
		t.Errorf("addr(a) in another run = %v, want %v", got, a1)
	}
	if n, ok := m.name(a1); !ok || n != "a.example" {
		t.Errorf("name(%v) = %q, %v, want a.example", a1, n, ok)
	}
	mapped := netip.AddrFrom16(a1.As16())
	if n, ok := m.name(mapped); !ok || n != "a.example" {
		t.Errorf("name(%v) = %q, %v, want a.example (IPv4-mapped, as a dual-stack listener reports)", mapped, n, ok)
	}
	if _, ok := m.name(netip.MustParseAddr("127.0.0.1")); ok {
		t.Errorf("name(127.0.0.1) found a name, want none")
	}
	m.addr("c.example")
	if a, ok := m.addr("d.example"); ok {
		t.Errorf("addr(d) past the map's size = %v, want refused", a)
	}
	if got, ok := m.addr("a.example"); !ok || got != a1 {
		t.Errorf("addr(a) with the map full = %v, %v, want its address still", got, ok)
	}
}

// TestFakeMapCollision: names hashing to the same address get different
// ones.
func TestFakeMapCollision(t *testing.T) {
	m := newFakeMap(1 << 20)
	seen := map[netip.Addr]string{}
	for i := range 20000 {
		name := "n" + itoa(int64(i)) + ".example"
		a, ok := m.addr(name)
		if !ok || !FakeRange.Contains(a) || a == FakeRange.Addr() {
			t.Fatalf("addr(%s) = %v, %v, want an address inside %v", name, a, ok, FakeRange)
		}
		if other, dup := seen[a]; dup {
			t.Fatalf("addr(%s) = %v, already %s's", name, a, other)
		}
		seen[a] = name
	}
}

// FuzzAnswerQuery: whatever bytes arrive, the stub replies (if at all)
// with a response carrying the query's id, REFUSED or NOERROR, never an
// address outside FakeRange, and an address only for an allowed name; it
// records a lookup whose name, if any, is a normalised allowed name or
// an answered one.
func FuzzAnswerQuery(f *testing.F) {
	f.Add(query(f, "a.example.", dnsmessage.TypeA))
	f.Add(query(f, "x.wild.example.", dnsmessage.TypeAAAA))
	f.Add(query(f, "evil.example.", dnsmessage.TypeTXT))
	f.Add(rawQuery(strings.Repeat("a", 64), "example"))
	f.Add([]byte{0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1}) // a compression loop
	p, err := Parse([]string{"a.example", "*.wild.example"}, nil)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, pkt []byte) {
		fakes := newFakeMap(8)
		resp, l := answerQuery(&p, fakes, pkt)
		if l.Name != "" {
			if n, why := normalizeName(l.Name); why != "" || n != l.Name {
				t.Fatalf("recorded name %q is not normal (%s)", l.Name, why)
			}
		}
		if l.Decision == Answered && !p.AllowsName(l.Name) {
			t.Fatalf("answered %q, which the policy does not allow", l.Name)
		}
		if resp == nil {
			return
		}
		var m dnsmessage.Message
		if err := m.Unpack(resp); err != nil {
			t.Fatalf("reply does not parse: %v", err)
		}
		if len(pkt) < 2 || m.Header.ID != uint16(pkt[0])<<8|uint16(pkt[1]) || !m.Header.Response {
			t.Fatalf("reply header %+v does not answer the query", m.Header)
		}
		switch m.Header.RCode {
		case dnsmessage.RCodeRefused:
			if len(m.Answers) != 0 {
				t.Fatalf("a refusal with answers: %v", m.Answers)
			}
		case dnsmessage.RCodeSuccess:
			if l.Decision != Answered {
				t.Fatalf("NOERROR recorded as %s", l.Decision)
			}
			for _, a := range m.Answers {
				ar, ok := a.Body.(*dnsmessage.AResource)
				if !ok || !FakeRange.Contains(netip.AddrFrom4(ar.A)) {
					t.Fatalf("answer %v is not a fake address", a.Body)
				}
			}
		default:
			t.Fatalf("rcode %v, want REFUSED or NOERROR", m.Header.RCode)
		}
	})
}
