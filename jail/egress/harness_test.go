package egress

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"golang.org/x/net/dns/dnsmessage"
)

// harness is an engine serving a jail's namespace as #35's run will: a
// namespace of its own (lo up, no way out) holding the DNS stub on
// 127.0.0.1:53, a listener on 0.0.0.0:<port> for each allowed port and
// the proxy on 127.0.0.1:3128; the supervisor's side dials the test
// internet, whose addresses the policy counts as public.
type harness struct {
	t        testing.TB
	lab      *testutil.Lab
	jail     *testutil.Netns
	eng      *Engine
	resolver *net.Resolver // the jail's libc: asks the stub
}

var (
	stubAddr  = netip.MustParseAddrPort("127.0.0.1:53")
	proxyAddr = netip.MustParseAddrPort("127.0.0.1:3128")
)

func requireRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		// make unit (-short, as nobody) runs the tests that need no
		// root; make test runs these, as root, where a skip is a failure.
		t.Skip("needs root to make network namespaces: run without -short, as root")
	}
	if os.Geteuid() != 0 {
		t.Fatalf("these tests make network namespaces and need root (euid %d): run them as root", os.Geteuid())
	}
}

func newHarness(t testing.TB, hosts []string, b Budgets) *harness {
	t.Helper()
	return newHarnessDNS(t, hosts, b, stubAddr)
}

// newHarnessDNS is newHarness with the stub at dns, an address it puts
// on the jail's lo.
func newHarnessDNS(t testing.TB, hosts []string, b Budgets, dns netip.AddrPort) *harness {
	t.Helper()
	requireRoot(t)
	h := &harness{t: t, lab: testutil.NewLab(t)}
	jail, err := testutil.NewNetns()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { jail.Close() })
	h.jail = jail
	h.resolver = jail.Resolver(dns)
	if !dns.Addr().IsLoopback() {
		if err := jail.AddAddr(dns.Addr()); err != nil {
			t.Fatal(err)
		}
	}
	p, err := Parse(hosts, nil)
	if err != nil {
		t.Fatal(err)
	}
	p = p.withLabPublic(testutil.LabPublic, testutil.LabPublic6)
	s, err := jailSocketsDNS(jail, p, dns)
	if err != nil {
		t.Fatal(err)
	}
	h.eng, err = New(Config{Policy: p, Budgets: b, Resolver: h.lab.Resolver, Dial: h.lab.Dial})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Serve(context.Background(), s); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.eng.Stop() })
	return h
}

// jailSockets makes the sockets #35's init will make in the run's
// namespace.
func jailSockets(jail *testutil.Netns, p Policy) (Sockets, error) {
	return jailSocketsDNS(jail, p, stubAddr)
}

func jailSocketsDNS(jail *testutil.Netns, p Policy, dns netip.AddrPort) (Sockets, error) {
	var s Sockets
	var err error
	if s.DNS, err = jail.ListenPacket("udp", dns.String()); err != nil {
		return s, err
	}
	for _, port := range p.Ports() {
		l, err := jail.Listen("tcp", fmt.Sprintf("0.0.0.0:%d", port))
		if err != nil {
			return s, err
		}
		s.Ports = append(s.Ports, l)
	}
	s.Proxy, err = jail.Listen("tcp", proxyAddr.String())
	return s, err
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// dialCaptured does what a client in the jail does for name:port without
// a proxy: looks the name up (through the stub) and connects to the
// address it got.
func (h *harness) dialCaptured(name string, port uint16) (net.Conn, error) {
	addrs, err := h.resolver.LookupNetIP(h.ctx(), "ip", name)
	if err != nil {
		return nil, err
	}
	return h.jail.DialContext(h.ctx(), "tcp", netip.AddrPortFrom(addrs[0], port).String())
}

// connect asks the proxy for a tunnel to target: the tunnel, or the
// proxy's refusal as an error holding its status line.
func (h *harness) connect(target string) (net.Conn, error) {
	c, err := h.jail.DialContext(h.ctx(), "tcp", proxyAddr.String())
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	resp, err := http.ReadResponse(bufio.NewReader(c), &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		c.Close()
		return nil, fmt.Errorf("%s", resp.Status)
	}
	return c, nil
}

// get fetches https://name/path over c, the CA of the test internet the
// only one trusted: the TLS session is the client's with the lab's
// server, end to end.
func (h *harness) get(c net.Conn, name, path string) (string, error) {
	tc := tls.Client(c, h.lab.TLSConfig(name))
	defer tc.Close()
	fmt.Fprintf(tc, "GET %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", path, name)
	resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// client is a stock HTTP client in the jail: through the proxy (as with
// HTTPS_PROXY) or with lookups through the stub (as with none).
func (h *harness) client(viaProxy bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: h.lab.CA}}
	if viaProxy {
		tr.Proxy = http.ProxyURL(&url.URL{Scheme: "http", Host: proxyAddr.String()})
		tr.DialContext = h.jail.DialContext
	} else {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, _ := net.SplitHostPort(addr)
			addrs, err := h.resolver.LookupNetIP(ctx, "ip", host)
			if err != nil {
				return nil, err
			}
			return h.jail.DialContext(ctx, network, net.JoinHostPort(addrs[0].String(), port))
		}
	}
	h.t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// ask sends one raw DNS query to the stub and returns the reply's rcode.
func (h *harness) ask(pkt []byte) (dnsmessage.RCode, error) {
	return h.askWithin(pkt, 10*time.Second)
}

// askWithin is ask with a deadline of its own.
func (h *harness) askWithin(pkt []byte, d time.Duration) (dnsmessage.RCode, error) {
	c, err := h.jail.DialContext(h.ctx(), "udp", stubAddr.String())
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(d))
	if _, err := c.Write(pkt); err != nil {
		return 0, err
	}
	buf := make([]byte, 1500)
	n, err := c.Read(buf)
	if err != nil {
		return 0, err
	}
	var p dnsmessage.Parser
	hd, err := p.Start(buf[:n])
	return hd.RCode, err
}

// refusedDial says whether a dial's connection was reset by the engine
// without a byte, as a captured connection is refused: on loopback the
// reset may come before the dial has returned.
func refusedDial(c net.Conn, err error) bool {
	if err != nil {
		return errors.Is(err, syscall.ECONNRESET)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	n, err := c.Read(make([]byte, 1))
	return n == 0 && errors.Is(err, syscall.ECONNRESET)
}

// findConn is the log's connection entry for name:port by via, or false.
func findConn(l Log, name string, port uint16, via Via) (Conn, bool) {
	for _, c := range l.Conns {
		if c.Name == name && c.Port == port && c.Via == via {
			return c, true
		}
	}
	return Conn{}, false
}
