package egress

import (
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
	"golang.org/x/net/dns/dnsmessage"
)

// TestAllowed: a name the profile allows is fetched over TLS, verified
// against the test internet's CA, by a stock client both ways: looking
// the name up through the stub and connecting to its fake address, and
// through the proxy; the log has the lookup and both connections, to the
// address the supervisor checked.
func TestAllowed(t *testing.T) {
	h := newHarness(t, []string{testutil.LabWeb}, Budgets{})
	for _, viaProxy := range []bool{false, true} {
		resp, err := h.client(viaProxy).Get("https://" + testutil.LabWeb + "/")
		if err != nil {
			t.Fatalf("GET https://%s/ (proxy %v): %v", testutil.LabWeb, viaProxy, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "hello from " + testutil.LabWeb; !strings.Contains(string(body), want) {
			t.Errorf("GET https://%s/ (proxy %v) = %q, want %q", testutil.LabWeb, viaProxy, body, want)
		}
	}
	h.client(false).Transport.(interface{ CloseIdleConnections() }).CloseIdleConnections()
	log := h.eng.Stop()
	var fake string
	for _, l := range log.Lookups {
		if l.Name == testutil.LabWeb && l.Type == "A" && l.Decision == Answered {
			fake = l.Answer
		}
	}
	if a, err := netip.ParseAddr(fake); err != nil || !FakeRange.Contains(a) {
		t.Errorf("lookups = %+v, want an A answer for %s in %v", log.Lookups, testutil.LabWeb, FakeRange)
	}
	want := netip.AddrPortFrom(testutil.LabWebAddr, 443).String()
	for _, via := range []Via{ViaCaptured, ViaProxy} {
		c, ok := findConn(log, testutil.LabWeb, 443, via)
		if !ok || c.Decision != Allowed || c.Dialled != want || c.Up == 0 || c.Down == 0 {
			t.Errorf("%s connection = %+v (found %v), want allowed, dialled %s, bytes both ways", via, c, ok, want)
		}
	}
	if s := log.Summary(); s != "" {
		t.Errorf("Summary() = %q, want empty", s)
	}
}

// TestRefused: every refusal the engine decides, each recorded with its
// reason, none reaching the listener it aimed at, and no name outside
// the profile reaching the supervisor's resolver.
func TestRefused(t *testing.T) {
	allowed := []string{testutil.LabWeb, testutil.LabLoopback, testutil.LabPrivate, testutil.LabMetadata,
		testutil.LabMixed, testutil.LabLoop6, "other." + testutil.LabWildcard + ":8443", testutil.LabMetadata + ":80"}
	h := newHarness(t, allowed, Budgets{})
	web := testutil.LabWeb
	proxy := []struct {
		name   string
		target string
		status string // in the proxy's status line
		conn   Conn   // the log's entry: name, port, decision, reason
	}{
		{"name not allowed", testutil.LabEvil + ":443", "403 scidex-jail egress: evil.lab.test is not in the profile",
			Conn{Name: testutil.LabEvil, Port: 443, Decision: Refused, Reason: ReasonNotInProfile}},
		{"IPv4 literal", "198.18.0.10:443", "403 scidex-jail egress: 198.18.0.10 is an address",
			Conn{Name: "198.18.0.10", Port: 443, Decision: Refused, Reason: ReasonIPLiteral}},
		{"IPv6 literal", "[::1]:443", "is an address", Conn{Name: "::1", Port: 443, Decision: Refused, Reason: ReasonIPLiteral}},
		{"PostgreSQL by address", "10.0.0.5:5432", "is an address", Conn{Name: "10.0.0.5", Port: 5432, Decision: Refused, Reason: ReasonIPLiteral}},
		{"resolves to loopback", testutil.LabLoopback + ":443", "resolves to 127.0.0.1 is loopback",
			Conn{Name: testutil.LabLoopback, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to private", testutil.LabPrivate + ":443", "resolves to 10.0.0.5 is private",
			Conn{Name: testutil.LabPrivate, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to metadata", testutil.LabMetadata + ":443", "169.254.169.254 is link-local: a cloud instance's metadata endpoint",
			Conn{Name: testutil.LabMetadata, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to metadata, on port 80", testutil.LabMetadata + ":80", "169.254.169.254 is link-local: a cloud instance's metadata endpoint",
			Conn{Name: testutil.LabMetadata, Port: 80, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to public and private", testutil.LabMixed + ":443", "10.0.0.5 is private",
			Conn{Name: testutil.LabMixed, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to IPv6 loopback", testutil.LabLoop6 + ":443", "::1 is loopback",
			Conn{Name: testutil.LabLoop6, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"port not allowed", web + ":8443", "port 8443 is not allowed for api.lab.test (allowed: 443)",
			Conn{Name: web, Port: 8443, Decision: Refused, Reason: ReasonPort}},
		{"PostgreSQL's port on an allowed name", testutil.LabPrivate + ":5432", "port 5432 is not allowed for db.lab.test",
			Conn{Name: testutil.LabPrivate, Port: 5432, Decision: Refused, Reason: ReasonPort}},
		{"not a name", "a_b/c:443", "400", Conn{Decision: Refused, Reason: ReasonMalformed}},
	}
	for _, tt := range proxy {
		c, err := h.connect(tt.target)
		if err == nil {
			c.Close()
			t.Errorf("%s: CONNECT %s opened a tunnel, want %q", tt.name, tt.target, tt.status)
		} else if !strings.Contains(err.Error(), tt.status) {
			t.Errorf("%s: CONNECT %s = %q, want %q", tt.name, tt.target, err, tt.status)
		}
	}

	captured := []struct {
		name string
		dial func() (net.Conn, error)
		conn Conn
	}{
		{"port not allowed", func() (net.Conn, error) { return h.dialCaptured(web, 8443) },
			Conn{Name: web, Port: 8443, Decision: Refused, Reason: ReasonPort}},
		{"resolves to private", func() (net.Conn, error) { return h.dialCaptured(testutil.LabPrivate, 443) },
			Conn{Name: testutil.LabPrivate, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"resolves to loopback", func() (net.Conn, error) { return h.dialCaptured(testutil.LabLoopback, 443) },
			Conn{Name: testutil.LabLoopback, Port: 443, Decision: Refused, Reason: ReasonNotPublic}},
		{"the jail's loopback", func() (net.Conn, error) {
			return h.jail.DialContext(h.ctx(), "tcp", "127.0.0.1:443")
		}, Conn{Name: "127.0.0.1", Port: 443, Decision: Refused, Reason: ReasonUnknownAddress}},
		{"a fake address never given", func() (net.Conn, error) {
			return h.jail.DialContext(h.ctx(), "tcp", "127.64.0.1:443")
		}, Conn{Name: "127.64.0.1", Port: 443, Decision: Refused, Reason: ReasonUnknownAddress}},
	}
	for _, tt := range captured {
		if c, err := tt.dial(); !refusedDial(c, err) {
			t.Errorf("%s: dial = %v, want a connection the engine resets", tt.name, err)
		}
	}

	if _, err := h.resolver.LookupNetIP(h.ctx(), "ip", testutil.LabEvil); err == nil {
		t.Errorf("LookupNetIP(%s) through the stub succeeded, want refused", testutil.LabEvil)
	}
	dns := []struct {
		name string
		pkt  []byte
	}{
		{"label of 64", rawQuery(strings.Repeat("a", 64), "lab", "test")},
		{"name of 300", rawQuery(strings.Split(strings.Repeat(strings.Repeat("a", 59)+".", 5)+"lab.test", ".")...)},
		{"TXT of an allowed name", query(t, web+".", dnsmessage.TypeTXT)},
	}
	for _, tt := range dns {
		if rcode, err := h.ask(tt.pkt); err != nil || rcode != dnsmessage.RCodeRefused {
			t.Errorf("%s: the stub answered %v, %v, want REFUSED", tt.name, rcode, err)
		}
	}

	log := h.eng.Stop()
	for _, tt := range proxy {
		checkConn(t, log, ViaProxy, tt.conn)
	}
	for _, tt := range captured {
		checkConn(t, log, ViaCaptured, tt.conn)
	}
	for _, ap := range []netip.AddrPort{
		netip.AddrPortFrom(testutil.LabEvilAddr, 443),
		netip.AddrPortFrom(testutil.LabPrivateAddr, 443),
		netip.AddrPortFrom(testutil.LabPrivateAddr, testutil.LabPostgres),
		netip.AddrPortFrom(testutil.LabMetadataAddr, 443),
		netip.AddrPortFrom(testutil.LabMetadataAddr, 80),
		netip.MustParseAddrPort("127.0.0.1:443"),
		netip.AddrPortFrom(testutil.LabWebAddr, 8443),
	} {
		if n := h.lab.Accepted(ap); n != 0 {
			t.Errorf("the test internet's %s accepted %d connections, want 0", ap, n)
		}
	}
	if n := h.lab.Queries(testutil.LabEvil); n != 0 {
		t.Errorf("the supervisor's resolver was asked about %s %d times, want never", testutil.LabEvil, n)
	}
	if got := log.Totals.LookupsBy[ReasonMalformed]; got != 2 {
		t.Errorf("malformed lookups = %d, want 2 (label of 64, name of 300)", got)
	}
	for _, want := range []string{
		"refused 1 connection to 1 name not in the profile: evil.lab.test:443",
		"refused 3 connections to 2 names on ports the profile does not allow: api.lab.test:8443, db.lab.test:5432",
		"refused 8 connections to 6 names resolving to addresses that are not public: db.lab.test:443, loopback.lab.test:443, loopback6.lab.test:443 and 3 more",
		"refused 3 connections to 3 addresses given by number, not by name: 10.0.0.5:5432, 198.18.0.10:443, [::1]:443",
		"refused 1 malformed proxy request",
		"refused 2 connections to 2 addresses the DNS stub never gave: 127.0.0.1:443, 127.64.0.1:443",
		"refused 2 malformed DNS queries",
	} {
		if s := log.Summary(); !strings.Contains(s, want) {
			t.Errorf("Summary() = %q, want it to say %q", s, want)
		}
	}
}

// checkConn fails unless the log has an entry like want, by via.
func checkConn(t *testing.T, log Log, via Via, want Conn) {
	t.Helper()
	for _, c := range log.Conns {
		if c.Via == via && c.Name == want.Name && c.Port == want.Port && c.Decision == want.Decision && c.Reason == want.Reason {
			if c.Dialled != "" {
				t.Errorf("%s connection %+v dialled %s, want no dial", via, c, c.Dialled)
			}
			return
		}
	}
	t.Errorf("no %s connection %s:%d %s/%s in the log: %+v", via, want.Name, want.Port, want.Decision, want.Reason, log.Conns)
}

// TestProxyPipelined: a client that sends its first bytes with its
// CONNECT, without waiting for the 200 (as some TLS clients send their
// hello), has them relayed first.
func TestProxyPipelined(t *testing.T) {
	h := newHarness(t, []string{bytesTarget}, Budgets{})
	c, err := h.jail.DialContext(h.ctx(), "tcp", proxyAddr.String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second)) // a hang guard
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\n\r\nget 5\n", bytesTarget)
	got, err := io.ReadAll(c)
	if want := "HTTP/1.1 200 Connection established\r\n\r\n\x00\x00\x00\x00\x00"; err != nil || string(got) != want {
		t.Errorf("CONNECT with a request behind it = %q, %v, want %q", got, err, want)
	}
}

// TestIPv6: an allowed name with only an IPv6 address is reached from
// the jail's IPv4-only namespace, captured (its fake address is IPv4)
// and proxied, the supervisor dialling the IPv6 address; a name that
// resolves to a unique-local address is refused.
func TestIPv6(t *testing.T) {
	h := newHarness(t, []string{testutil.LabWeb6, testutil.LabULA}, Budgets{})
	for _, viaProxy := range []bool{false, true} {
		resp, err := h.client(viaProxy).Get("https://" + testutil.LabWeb6 + "/")
		if err != nil {
			t.Fatalf("GET https://%s/ (proxy %v): %v", testutil.LabWeb6, viaProxy, err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := "hello from " + testutil.LabWeb6; !strings.Contains(string(body), want) {
			t.Errorf("GET https://%s/ (proxy %v) = %q, want %q", testutil.LabWeb6, viaProxy, body, want)
		}
	}
	if _, err := h.connect(testutil.LabULA + ":443"); err == nil || !strings.Contains(err.Error(), "fd00:1ab::5 is unique local (private)") {
		t.Errorf("CONNECT %s:443 = %v, want refused as unique local", testutil.LabULA, err)
	}
	log := h.eng.Stop()
	want := netip.AddrPortFrom(testutil.LabWeb6Addr, 443).String()
	for _, via := range []Via{ViaCaptured, ViaProxy} {
		if c, ok := findConn(log, testutil.LabWeb6, 443, via); !ok || c.Decision != Allowed || c.Dialled != want {
			t.Errorf("%s connection = %+v (found %v), want allowed, dialled %s", via, c, ok, want)
		}
	}
	if n := h.lab.Accepted(netip.AddrPortFrom(testutil.LabULAAddr, 443)); n != 0 {
		t.Errorf("the unique-local address accepted %d connections, want 0", n)
	}
}
