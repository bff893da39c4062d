package egress

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"time"
)

// outcome is a decision on a connection before anything is relayed.
type outcome struct {
	decision Decision
	reason   Reason
	detail   string
}

func refused(r Reason, detail string) outcome { return outcome{Refused, r, detail} }

// holdOpen holds a connection to the budget of connections open at once,
// from its accept on (in the accept loop, so in the order the kernel
// queued them), so that clients that never finish a request cannot pile
// up descriptors and goroutines in the supervisor; the caller releases it
// when true.
func (e *Engine) holdOpen() (outcome, bool) {
	b := e.cfg.Budgets
	if e.open.Add(1) > int64(b.Open) {
		e.open.Add(-1)
		return refused(ReasonOpen, count(b.Open, "connection is", "connections are")+" open already, the most at once"), false
	}
	return outcome{}, true
}

// countDecided holds a connection to the run's budget of connections,
// every one counted that asked for a destination, allowed or refused.
// The first over it closes the listeners: the kernel refuses the rest.
func (e *Engine) countDecided() (outcome, bool) {
	b := e.cfg.Budgets
	if n := e.decided.Add(1); n > int64(b.Connections) {
		if n == int64(b.Connections)+1 {
			for _, l := range e.listeners {
				_ = l.Close()
			}
		}
		return refused(ReasonConnections, "the run's budget of "+strconv.Itoa(b.Connections)+" connections is spent"), false
	}
	return outcome{}, true
}

// captured handles a connection accepted on a port listener: its local
// address is the fake address the client connected to, which names the
// destination.
func (e *Engine) captured(c net.Conn) {
	start := time.Now()
	rec := Conn{Via: ViaCaptured}
	ap := addrPort(c.LocalAddr())
	rec.Port = ap.Port()
	name, known := e.fakes.name(ap.Addr())
	rec.Name = name
	if !known {
		rec.Name = ap.Addr().Unmap().String()
	}
	if o, ok := e.countDecided(); !ok {
		e.refuse(c, &rec, start, o)
		return
	}
	if !known {
		e.refuse(c, &rec, start, refused(ReasonUnknownAddress, rec.Name+" is not an address the DNS stub gave to a name"))
		return
	}
	up, o := e.dial(name, rec.Port, &rec)
	if up == nil {
		e.refuse(c, &rec, start, o)
		return
	}
	e.relay(c, up, nil, &rec, start)
}

// overOpen refuses a connection accepted over the open budget, before
// anything is read from it: a captured one is named by its address, a
// proxied one by nothing (its request is not read).
func (e *Engine) overOpen(c net.Conn, via Via, o outcome) {
	start := time.Now()
	rec := Conn{Via: via}
	if via == ViaProxy {
		_, _ = c.Write(refusal(403, o.detail))
		e.record(&rec, start, o)
		return
	}
	ap := addrPort(c.LocalAddr())
	rec.Port = ap.Port()
	if name, ok := e.fakes.name(ap.Addr()); ok {
		rec.Name = name
	} else {
		rec.Name = ap.Addr().Unmap().String()
	}
	e.refuse(c, &rec, start, o)
}

// proxied handles a connection to the CONNECT proxy.
func (e *Engine) proxied(c net.Conn) {
	start := time.Now()
	rec := Conn{Via: ViaProxy}
	_ = c.SetReadDeadline(start.Add(e.headTimeout))
	br := bufio.NewReaderSize(c, connectBufSize)
	req, err := readConnect(br)
	var re *requestError
	switch {
	case errors.Is(err, io.EOF):
		return // connected and closed without a word: nothing was asked
	case err != nil && !errors.As(err, &re) && e.ctx.Err() != nil:
		return // the run ended while its client was still asking
	case errors.Is(err, os.ErrDeadlineExceeded):
		err = errors.New("its head did not end within " + e.headTimeout.String())
	}
	if o, ok := e.countDecided(); !ok {
		rec.Name, rec.Port = req.Name, req.Port
		_, _ = c.Write(refusal(403, o.detail))
		e.record(&rec, start, o)
		return
	}
	if err != nil {
		if re != nil {
			_, _ = c.Write(refusal(re.status, re.msg))
		}
		e.record(&rec, start, refused(ReasonMalformed, "a CONNECT request that could not be read: "+err.Error()))
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	rec.Name, rec.Port = req.Name, req.Port
	if req.IP {
		o := refused(ReasonIPLiteral, req.Name+" is an address: the proxy connects to names the profile allows, never to addresses")
		_, _ = c.Write(refusal(403, o.detail))
		e.record(&rec, start, o)
		return
	}
	up, o := e.dial(req.Name, req.Port, &rec)
	if up == nil {
		status := 403
		if o.decision == Failed {
			status = 502
		}
		_, _ = c.Write(refusal(status, o.detail))
		e.record(&rec, start, o)
		return
	}
	if _, err := c.Write(established); err != nil {
		e.untrack(up)
		e.record(&rec, start, outcome{Allowed, ReasonNone, "the client went away before the tunnel opened"})
		return
	}
	// What the client sent after its head (a TLS hello that did not wait
	// for the 200) goes first.
	pre, _ := br.Peek(br.Buffered())
	e.relay(c, up, pre, &rec, start)
}

// dial decides on a connection to name:port and, if it is allowed,
// connects to the address it checked: the policy's name and port rules,
// then the supervisor's own lookup, every address of which must be public
// or in a range the profile names (a name that mixes a public address
// with a private one is refused whole: that is what a rebinding attack
// answers), then a dial to one of those very addresses, by address. No
// second lookup happens between the check and the dial: a name whose
// answers change (DNS rebinding) can change the next connection's
// decision, never this one's destination.
func (e *Engine) dial(name string, port uint16, rec *Conn) (net.Conn, outcome) {
	p := &e.cfg.Policy
	if !p.AllowsName(name) {
		return nil, refused(ReasonNotInProfile, name+" is not in the profile")
	}
	if !p.Allows(name, port) {
		return nil, refused(ReasonPort, "port "+strconv.Itoa(int(port))+" is not allowed for "+name+" (allowed: "+portsFor(p, name)+")")
	}
	ctx, cancel := context.WithTimeout(e.ctx, resolveTimeout)
	addrs, err := e.cfg.Resolver.LookupNetIP(ctx, "ip", name)
	cancel()
	if err != nil || len(addrs) == 0 {
		why := "no addresses"
		if err != nil {
			why = err.Error()
		}
		return nil, outcome{Failed, ReasonResolve, name + " did not resolve: " + why}
	}
	var ok []netip.Addr
	for _, a := range addrs {
		// As the resolver gave it: an IPv4-mapped address in an AAAA
		// answer is refused, not read as the IPv4 address inside.
		allowed, why := p.checkAddr(a)
		if !allowed {
			return nil, refused(ReasonNotPublic, name+" resolves to "+why)
		}
		if len(ok) < maxDialAddrs {
			ok = append(ok, a)
		}
	}
	var last error
	for _, a := range ok {
		target := netip.AddrPortFrom(a, port)
		ctx, cancel := context.WithTimeout(e.ctx, dialTimeout)
		c, err := e.cfg.Dial(ctx, "tcp", target.String())
		cancel()
		if err != nil {
			last = err
			continue
		}
		if !e.track(c) {
			return nil, outcome{Allowed, ReasonRunEnded, "the run ended"}
		}
		// The dialler was given an address; hold it to having connected
		// there, so that a dialler that resolves or redirects cannot
		// carry a connection past the check.
		if got := addrPort(c.RemoteAddr()); got.Addr().Unmap() != a || got.Port() != port {
			e.untrack(c)
			return nil, outcome{Failed, ReasonDial, "the dialler connected to " + got.String() + ", not the checked " + target.String()}
		}
		rec.Dialled = target.String()
		return c, outcome{}
	}
	return nil, outcome{Failed, ReasonDial, name + ":" + strconv.Itoa(int(port)) + " did not answer: " + last.Error()}
}

func portsFor(p *Policy, name string) string {
	var s []string
	for _, h := range p.Hosts {
		if h.matches(name) {
			s = append(s, strconv.Itoa(int(h.Port)))
		}
	}
	return strings.Join(s, ", ")
}

// refuse records a captured connection's refusal and resets it: the
// client sees "connection reset", not the clean end of a stream that a
// TLS client would read as a server's doing. (A captured connection
// carries the client's own protocol, in which there is no place for the
// reason; the report has it.)
func (e *Engine) refuse(c net.Conn, rec *Conn, start time.Time, o outcome) {
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	e.record(rec, start, o)
}

func (e *Engine) record(rec *Conn, start time.Time, o outcome) {
	rec.Decision, rec.Reason, rec.Detail = o.decision, o.reason, o.detail
	rec.Duration = time.Since(start)
	e.rec.conn(*rec)
}

// addrPort is a TCP socket address as a netip.AddrPort; the zero value
// for anything else.
func addrPort(a net.Addr) netip.AddrPort {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.AddrPort()
	}
	return netip.AddrPort{}
}
