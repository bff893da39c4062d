package main

import (
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/report"
)

// egressArgs are the flags of a run in the egress mode in the test
// internet: its public range named by CIDR, as a profile names an
// institute's own, the lab's CA readable and named in LAB_CA.
func egressArgs(t *testing.T, lab *testutil.Lab, id string, hosts ...string) []string {
	t.Helper()
	ca := labCA(t, lab)
	args := []string{"run", "--id", id, "--tmp-root", tmpRoot(t), "--net", "egress", "--allow-range", testutil.LabPublic.String(),
		"--ro", ca, "--env", "LAB_CA=" + ca}
	for _, h := range hosts {
		args = append(args, "--allow-host", h)
	}
	return args
}

// TestEgress: in the egress mode an allowed name is fetched with TLS
// verified by urllib, requests and curl, through the proxy and captured, and every
// refused case of issue 35 is refused, recorded in the report's egress
// section and named in the completion notes; nothing reached the lab's
// listeners a jail must never reach, and no name outside the profile was
// asked of the lab's DNS server.
func TestEgress(t *testing.T) {
	requireRoot(t)
	if _, err := exec.LookPath("curl"); err != nil {
		t.Fatalf("curl is needed (the issue's clients are urllib, requests and curl): %v", err)
	}

	lab := testutil.NewLab(t)
	web, evil := testutil.LabWeb, testutil.LabEvil
	probes := []egressProbe{
		{"proxy variable", "os.environ['HTTPS_PROXY'] + ' ' + os.environ['https_proxy']", "http://127.0.0.1:3128 http://127.0.0.1:3128"},
		{"urllib proxied", fmt.Sprintf("proxied('https://%s/')", web), "ok hello from " + web},
		{"urllib captured", fmt.Sprintf("direct('https://%s/')", web), "ok hello from " + web},
		{"curl proxied", fmt.Sprintf("curl('https://%s/')", web), "ok hello from " + web},
		{"curl captured", fmt.Sprintf("curl('--noproxy', '*', 'https://%s/')", web), "ok hello from " + web},
		{"wildcard", fmt.Sprintf("direct('https://a.%s/')", testutil.LabWildcard), "ok hello from a." + testutil.LabWildcard},
		// A name with only an IPv6 address, from the run's IPv4 stub and
		// proxy: the supervisor dials the address it resolved.
		{"IPv6 only", fmt.Sprintf("proxied('https://%s/')", testutil.LabWeb6), "ok hello from " + testutil.LabWeb6},
		// A name not allowed: refused at the lookup, and at the proxy.
		{"not allowed captured", fmt.Sprintf("direct('https://%s/')", evil), "URLError: <urlopen error [Errno -3] Temporary failure in name resolution>"},
		{"not allowed proxied", fmt.Sprintf("proxied('https://%s/')", evil), "URLError: <urlopen error Tunnel connection failed: 403 scidex-jail egress: " + evil + " is not in the profile"},
		// An IP literal: no route for the captured way, a 403 by the proxy.
		{"IP literal captured", fmt.Sprintf("direct('https://%s/')", testutil.LabWebAddr), "URLError: <urlopen error [Errno 101] Network is unreachable>"},
		{"IP literal proxied", fmt.Sprintf("proxied('https://%s/')", testutil.LabWebAddr), "URLError: <urlopen error Tunnel connection failed: 403"},
		// Allowed names whose addresses are not public.
		{"to loopback", fmt.Sprintf("direct('https://%s/')", testutil.LabLoopback), "URLError"},
		{"to private", fmt.Sprintf("proxied('https://%s/')", testutil.LabPrivate), "URLError: <urlopen error Tunnel connection failed: 403"},
		// A refused captured connection is reset (as the request is sent
		// or its answer read: either way the reset is what it sees).
		{"to link-local", fmt.Sprintf("direct('http://%s/')", testutil.LabMetadata), "[Errno 104] Connection reset by peer"},
		{"mixed answer", fmt.Sprintf("direct('https://%s/')", testutil.LabMixed), "URLError"},
		// The first lookup of the rebinding name is public, the next one
		// private: the supervisor's own lookup decides each connection.
		{"rebind first", fmt.Sprintf("direct('https://%s/')", testutil.LabRebind), "ok hello from " + testutil.LabRebind},
		{"rebind second", fmt.Sprintf("direct('https://%s/')", testutil.LabRebind), "URLError"},
		// UDP anywhere but the stub has no route.
		{"UDP out", fmt.Sprintf("udp(('%s', 53))", testutil.LabDNSAddr.Addr()), "OSError: [Errno 101] Network is unreachable"},
		{"UDP to a fake address", "udp(('127.64.0.1', 53))", "ok sent"}, // lo takes it, nobody listens
		// PostgreSQL's port on an allowed name: nothing listens for it.
		{"5432 on an allowed name", fmt.Sprintf("tcp('%s', 5432)", web), "ConnectionRefusedError"},
		// A CONNECT to an allowed name on a port it is not allowed on.
		{"CONNECT other port", fmt.Sprintf("proxied('https://%s:%d/')", web, testutil.LabHTTPSAlt), "URLError: <urlopen error Tunnel connection failed: 403"},
		{"DNS long name", "long_name()", "ok rcode 5"},
		// A query too short to answer gets no answer; it is recorded.
		{"DNS malformed", `dns_raw(b"\x12\x34garbage")`, "TimeoutError"},
	}
	// The view's resolv.conf names the stub where the host's is a file the
	// view can lay its own over; a link's target is out of the view, and
	// resolvers fall back to 127.0.0.1 (the lookups above work either way).
	if fi, err := os.Lstat("/etc/resolv.conf"); err == nil && fi.Mode().IsRegular() {
		probes = append(probes, egressProbe{"resolv.conf", "open('/etc/resolv.conf').read()", "nameserver 127.0.0.1\n"})
	}
	wantAllowed := 4
	// requests "if installed", as the issue says: Debian's python3-requests.
	if err := exec.Command("/usr/bin/python3", "-c", "import requests").Run(); err == nil {
		probes = append(probes, egressProbe{"requests proxied", fmt.Sprintf("req('https://%s/')", web), "ok hello from " + web},
			egressProbe{"requests captured", fmt.Sprintf("req('https://%s/', proxy=False)", web), "ok hello from " + web})
		wantAllowed += 2
	} else {
		t.Logf("no requests for /usr/bin/python3 (%v): urllib and curl only", err)
	}
	args := egressArgs(t, lab, "egress-e2e", web, "*."+testutil.LabWildcard, testutil.LabLoopback, testutil.LabPrivate,
		testutil.LabMetadata+":80", testutil.LabMixed, testutil.LabRebind, testutil.LabWeb6)
	args = append(args, "--allow-range", testutil.LabPublic6.String()) // the IPv6 server's
	r := runInLab(t, lab, append(append(args, "--"), egressArgv(t, probes)...)...)
	wantStatus(t, r, report.StatusOK, 0)
	got := probeResults(t, r)
	for _, p := range probes {
		if !strings.Contains(got[p.name], p.want) {
			t.Errorf("probe %s = %q, want it to hold %q", p.name, got[p.name], p.want)
		}
	}
	e := r.report.Egress
	if e == nil {
		t.Fatalf("report has no egress section; %v", r)
	}
	if len(e.Hosts) != 8 || len(e.Ranges) != 2 {
		t.Errorf("egress hosts, ranges = %q, %q; want the 8 allowed and the lab's two ranges", e.Hosts, e.Ranges)
	}
	if g := r.report.Enforced.Mounts.Generated; !slices.Contains(g, "/etc/resolv.conf") && len(got["resolv.conf"]) > 0 {
		t.Errorf("enforced.mounts.generated = %q, want the view's own /etc/resolv.conf (the stub)", g)
	}
	if c := conns(e, testutil.LabWeb6, 443); len(c) != 1 || c[0].Dialled != netip.AddrPortFrom(testutil.LabWeb6Addr, 443).String() {
		t.Errorf("egress connections to %s = %+v, want one dialled to %s", testutil.LabWeb6, c, testutil.LabWeb6Addr)
	}
	// Each refused connection, in the report with its reason.
	for _, c := range []struct {
		name   string
		port   int
		reason string
	}{
		{evil, 443, "not_in_profile"},
		{testutil.LabWebAddr.String(), 443, "ip_literal"},
		{testutil.LabLoopback, 443, "not_public"},
		{testutil.LabPrivate, 443, "not_public"},
		{testutil.LabMetadata, 80, "not_public"},
		{testutil.LabMixed, 443, "not_public"},
		{testutil.LabRebind, 443, "not_public"},
		{web, testutil.LabHTTPSAlt, "port_not_allowed"},
	} {
		found := false
		for _, x := range conns(e, c.name, c.port) {
			found = found || (x.Decision == "refused" && x.Reason == c.reason && x.BytesUp == 0 && x.Dialled == "")
		}
		if !found {
			t.Errorf("egress connections to %s:%d = %+v, want one refused as %s, nothing dialled or relayed", c.name, c.port, conns(e, c.name, c.port), c.reason)
		}
	}
	allowed := 0
	for _, x := range conns(e, web, 443) {
		if x.Decision == "allowed" && x.Dialled == netip.AddrPortFrom(testutil.LabWebAddr, 443).String() && x.BytesUp > 0 && x.BytesDown > 0 {
			allowed++
		}
	}
	if allowed != wantAllowed {
		t.Errorf("egress connections to %s:443 = %+v, want %d allowed, dialled to %s, bytes each way", web, conns(e, web, 443), wantAllowed, testutil.LabWebAddr)
	}
	var evilLookup, malformed bool
	for _, l := range e.Lookups {
		evilLookup = evilLookup || (l.Name == evil && l.Decision == "refused" && l.Reason == "not_in_profile")
		malformed = malformed || (l.Decision == "refused" && l.Reason == "malformed")
	}
	if !evilLookup || !malformed {
		t.Errorf("egress lookups = %+v, want %s refused as not_in_profile and malformed queries refused", e.Lookups, evil)
	}
	if tt := e.Totals; tt.Refused < 8 || tt.Allowed < 6 || tt.LookupsRefused < 3 {
		t.Errorf("egress totals = %+v, want at least 8 refused, 6 allowed, 3 lookups refused", tt)
	}
	for _, w := range []string{
		"egress: refused", evil + ":443", "not in the profile", "on ports the profile does not allow", "resolving to addresses that are not public",
		"given by number, not by name", "malformed DNS quer",
	} {
		if !strings.Contains(r.report.CompletionNotes, w) {
			t.Errorf("completion notes = %q, want them to hold %q", r.report.CompletionNotes, w)
		}
	}
	// Nothing a jail must never reach was reached, and no name outside
	// the profile left the run.
	for _, ap := range []netip.AddrPort{
		netip.AddrPortFrom(testutil.LabPrivateAddr, testutil.LabPostgres), netip.AddrPortFrom(testutil.LabPrivateAddr, 443),
		netip.AddrPortFrom(testutil.LabMetadataAddr, testutil.LabHTTP), netip.AddrPortFrom(testutil.LabMetadataAddr, 443),
		netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), 443), netip.AddrPortFrom(testutil.LabEvilAddr, 443),
	} {
		if n := lab.Accepted(ap); n != 0 {
			t.Errorf("the lab's %s accepted %d connections, want 0", ap, n)
		}
	}
	t.Logf("completion notes: %s", r.report.CompletionNotes)
	if n := lab.Queries(evil); n != 0 {
		t.Errorf("the lab's DNS server was asked about %s %d times, want 0 (the stub never forwards)", evil, n)
	}
}
