package egress

import (
	"errors"
	"net"
	"strconv"
	"strings"

	"golang.org/x/net/dns/dnsmessage"
)

// fakeTTL is how long a client may cache a fake answer. Any value is
// safe, since a name keeps its address for the whole run; a minute keeps
// a cache from outliving a run that is somehow reused.
const fakeTTL = 60

// maxDatagram is the largest query the stub reads; a real one is far
// smaller (a name is at most 255 bytes, and EDNS options are few).
const maxDatagram = 4096

// answerQuery is the stub's whole decision on one datagram: the reply to
// send (nil when none can be sent: a datagram shorter than a header, or
// a response, which the stub never answers, so that two stubs cannot
// ping-pong) and the lookup to record. It never forwards a query: names
// the policy allows get a fake address, everything else is refused.
func answerQuery(p *Policy, fakes *fakeMap, pkt []byte) ([]byte, Lookup) {
	var parser dnsmessage.Parser
	h, err := parser.Start(pkt)
	if err != nil {
		return nil, malformed("a datagram too short for a DNS header")
	}
	if h.Response {
		return nil, malformed("a DNS response sent as a query")
	}
	if h.OpCode != 0 {
		return reply(h, nil, dnsmessage.RCodeRefused, nil), malformed("opcode " + strconv.Itoa(int(h.OpCode)) + ", not a standard query")
	}
	q, err := parser.Question()
	if err != nil {
		return reply(h, nil, dnsmessage.RCodeRefused, nil), malformed("a question that cannot be read (" + err.Error() + ")")
	}
	if _, err := parser.Question(); !errors.Is(err, dnsmessage.ErrSectionDone) {
		return reply(h, nil, dnsmessage.RCodeRefused, nil), malformed("more than one question")
	}
	typ := strings.TrimPrefix(q.Type.String(), "Type")
	name, why := normalizeName(q.Name.String())
	if why != "" {
		l := malformed("the name " + quoteName(q.Name.String()) + " is " + why)
		l.Type = typ
		return reply(h, &q, dnsmessage.RCodeRefused, nil), l
	}
	refuse := func(r Reason, detail string) ([]byte, Lookup) {
		return reply(h, &q, dnsmessage.RCodeRefused, nil), Lookup{Name: name, Type: typ, Decision: Refused, Reason: r, Detail: detail}
	}
	switch {
	case q.Class != dnsmessage.ClassINET:
		return refuse(ReasonQueryType, "class "+strings.TrimPrefix(q.Class.String(), "Class")+", not Internet")
	case !p.AllowsName(name):
		return refuse(ReasonNotInProfile, name+" is not in the profile")
	}
	switch q.Type {
	case dnsmessage.TypeA:
		a, ok := fakes.addr(name)
		if !ok {
			return refuse(ReasonTooManyNames, "the run asked for more names than the stub gives ("+strconv.Itoa(fakes.max)+")")
		}
		rr := &dnsmessage.AResource{A: a.As4()}
		return reply(h, &q, dnsmessage.RCodeSuccess, rr), Lookup{Name: name, Type: typ, Decision: Answered, Answer: a.String()}
	case dnsmessage.TypeAAAA, dnsmessage.TypeHTTPS:
		// "The name exists, with no such record": what a client asks
		// beside A in the normal course gets the answer that sends it on
		// to A at once, where a refusal could make it try again or give
		// up on the name.
		return reply(h, &q, dnsmessage.RCodeSuccess, nil), Lookup{Name: name, Type: typ, Decision: Answered}
	}
	return refuse(ReasonQueryType, typ+" questions are not answered (only A, AAAA and HTTPS)")
}

func malformed(detail string) Lookup {
	return Lookup{Decision: Refused, Reason: ReasonMalformed, Detail: detail}
}

// quoteName quotes what a query named, cut to 64 bytes, in ASCII: the
// analysis chose those bytes, and they go into a report.
func quoteName(s string) string {
	if len(s) > 64 {
		return strconv.QuoteToASCII(s[:64]) + "..."
	}
	return strconv.QuoteToASCII(s)
}

// reply builds the answer to h's query: its question echoed if there is
// one, and one A record if a is set.
func reply(h dnsmessage.Header, q *dnsmessage.Question, rcode dnsmessage.RCode, a *dnsmessage.AResource) []byte {
	b := dnsmessage.NewBuilder(make([]byte, 0, 512), dnsmessage.Header{
		ID:                 h.ID,
		Response:           true,
		RecursionDesired:   h.RecursionDesired,
		RecursionAvailable: true,
		RCode:              rcode,
	})
	b.EnableCompression()
	if q != nil {
		if err := b.StartQuestions(); err != nil {
			return nil
		}
		if err := b.Question(*q); err != nil {
			// A question that parsed but will not pack (dnsmessage checks
			// less when reading): answer without it.
			return reply(h, nil, dnsmessage.RCodeRefused, nil)
		}
	}
	if a != nil {
		if err := b.StartAnswers(); err != nil {
			return nil
		}
		rh := dnsmessage.ResourceHeader{Name: q.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET, TTL: fakeTTL}
		if err := b.AResource(rh, *a); err != nil {
			return nil
		}
	}
	msg, err := b.Finish()
	if err != nil {
		return nil
	}
	return msg
}

// serveDNS answers the stub's datagrams until its socket is closed. Any
// other read error ends it too: the stub fails closed, and the run's
// lookups time out.
//
// Past the run's budget of lookups it answers one last REFUSED and closes
// its socket.
func (e *Engine) serveDNS(pc net.PacketConn) {
	buf := make([]byte, maxDatagram)
	for answered := 0; ; answered++ {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return
		}
		resp, l := answerQuery(&e.cfg.Policy, e.fakes, buf[:n])
		last := answered >= e.cfg.Budgets.Lookups
		if last {
			resp, l = refuseAll(buf[:n], e.cfg.Budgets.Lookups)
		}
		e.rec.lookup(l)
		if resp != nil {
			_, _ = pc.WriteTo(resp, from) // a client that went away is not the stub's fault
		}
		if last {
			_ = pc.Close()
			return
		}
	}
}

// refuseAll is the REFUSED answer to any query, past the lookups budget.
func refuseAll(pkt []byte, budget int) ([]byte, Lookup) {
	l := Lookup{Decision: Refused, Reason: ReasonLookups, Detail: "the run's budget of " + strconv.Itoa(budget) + " lookups is spent: the stub stopped"}
	var parser dnsmessage.Parser
	h, err := parser.Start(pkt)
	if err != nil || h.Response {
		return nil, l
	}
	return reply(h, nil, dnsmessage.RCodeRefused, nil), l
}
