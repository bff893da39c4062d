package testutil

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

func requireRoot(t testing.TB) {
	t.Helper()
	if testing.Short() {
		// make unit (-short, as nobody) runs the tests that need no
		// root; make test runs these, as root, where a skip is a failure.
		t.Skip("needs root to make network namespaces: run without -short, as root")
	}
	if os.Geteuid() != 0 {
		t.Fatalf("the test internet needs root to make network namespaces (euid %d): run as root", os.Geteuid())
	}
}

// TestLabDirect: from inside the lab, its names resolve as documented
// and its HTTPS server answers with a certificate its CA verifies.
func TestLabDirect(t *testing.T) {
	requireRoot(t)
	lab := NewLab(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	tests := []struct {
		name string
		want []netip.Addr
	}{
		{LabWeb, []netip.Addr{LabWebAddr}},
		{"deep.x." + LabWildcard, []netip.Addr{LabWebAddr}},
		{LabPrivate, []netip.Addr{LabPrivateAddr}},
		{LabMetadata, []netip.Addr{LabMetadataAddr}},
		{LabLoop6, []netip.Addr{netip.IPv6Loopback()}},
		{LabWeb6, []netip.Addr{LabWeb6Addr}},
		{LabULA, []netip.Addr{LabULAAddr}},
		{LabMixed, []netip.Addr{LabWebAddr, LabPrivateAddr}},
		{LabRebind, []netip.Addr{LabWebAddr}},
		{LabRebind, []netip.Addr{LabPrivateAddr}},
	}
	for _, tt := range tests {
		got, err := lab.Resolver.LookupNetIP(ctx, "ip", tt.name)
		if err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("LookupNetIP(%s) = %v, %v, want %v", tt.name, got, err, tt.want)
		}
	}
	if _, err := lab.Resolver.LookupNetIP(ctx, "ip", LabNoAnswer); err == nil {
		t.Errorf("LookupNetIP(%s) succeeded, want NXDOMAIN", LabNoAnswer)
	}
	if got := lab.Queries(LabWeb); got == 0 {
		t.Errorf("Queries(%s) = 0 after a lookup, want > 0", LabWeb)
	}

	client := &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			return lab.Dial(ctx, network, netip.AddrPortFrom(LabWebAddr, LabHTTPS).String())
		},
		TLSClientConfig: &tls.Config{RootCAs: lab.CA},
	}}
	defer client.CloseIdleConnections()
	resp, err := client.Get("https://" + LabWeb + "/")
	if err != nil {
		t.Fatalf("GET https://%s/ from the lab: %v", LabWeb, err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := "hello from " + LabWeb; !strings.Contains(string(body), want) {
		t.Errorf("GET https://%s/ = %q, want %q", LabWeb, body, want)
	}

	web6 := netip.AddrPortFrom(LabWeb6Addr, LabHTTPS)
	if c, err := lab.Dial(ctx, "tcp", web6.String()); err != nil {
		t.Errorf("dial the public server's IPv6 address %s from the lab: %v", web6, err)
	} else {
		c.Close()
	}

	pg := netip.AddrPortFrom(LabPrivateAddr, LabPostgres)
	c, err := lab.Dial(ctx, "tcp", pg.String())
	if err != nil {
		t.Fatalf("dial the PostgreSQL-like listener %s from the lab: %v", pg, err)
	}
	// An SSLRequest, declined; a startup message, answered with an error.
	c.Write([]byte{0, 0, 0, 8, 4, 210, 22, 47})
	startup := []byte{0, 0, 0, 9, 0, 3, 0, 0, 0}
	c.Write(startup)
	got, _ := io.ReadAll(c)
	c.Close()
	if len(got) < 2 || got[0] != 'N' || got[1] != 'E' || !strings.Contains(string(got), "PostgreSQL-like") {
		t.Errorf("the PostgreSQL-like listener answered %q, want N, then an error naming itself", got)
	}
	meta := &http.Client{Transport: &http.Transport{DialContext: lab.Dial}}
	defer meta.CloseIdleConnections()
	mresp, err := meta.Get("http://169.254.169.254/latest/meta-data/")
	if err != nil {
		t.Fatalf("GET the metadata-like server from the lab: %v", err)
	}
	mbody, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	if !strings.Contains(string(mbody), "lab-instance-secret") {
		t.Errorf("the metadata-like server answered %q, want its secret", mbody)
	}
	deadline := time.Now().Add(5 * time.Second)
	for lab.Accepted(pg) != 1 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if got := lab.Accepted(pg); got != 1 {
		t.Errorf("Accepted(%s) = %d after one dial, want 1", pg, got)
	}
}

// TestLabIsolated: the lab's servers are reachable from its namespace
// only, and a second namespace is empty (lo up, nothing else).
func TestLabIsolated(t *testing.T) {
	requireRoot(t)
	lab := NewLab(t)
	webAP := netip.AddrPortFrom(LabWebAddr, LabHTTPS)
	web := webAP.String()
	// The host may route 198.18.0.10 somewhere (a sandbox's gateway
	// answers every address here): what must hold is that the lab's
	// server never sees it.
	if c, err := net.DialTimeout("tcp", web, time.Second); err == nil {
		c.Close()
	}
	if got := lab.Accepted(webAP); got != 0 {
		t.Errorf("lab's %s accepted %d connections dialled from the test process' own namespace, want 0", web, got)
	}
	jail, err := NewNetns()
	if err != nil {
		t.Fatal(err)
	}
	defer jail.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if c, err := jail.DialContext(ctx, "tcp", web); err == nil {
		c.Close()
		t.Errorf("dial %s from an empty namespace succeeded, want it unreachable", web)
	}
	l, err := jail.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen on lo in an empty namespace: %v", err)
	}
	defer l.Close()
	c, err := jail.DialContext(ctx, "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial lo in an empty namespace: %v", err)
	}
	c.Close()
	jail.Close()
	if err := jail.Do(func() error { return nil }); err == nil {
		t.Errorf("Do after Close = nil, want an error")
	}
}

// TestLabProcess: a process started in the lab resolves the lab's names
// with the host's own resolv.conf and C library, and is in the lab's
// namespace.
func TestLabProcess(t *testing.T) {
	requireRoot(t)
	lab := NewLab(t)
	var out strings.Builder
	cmd := exec.Command("getent", "ahostsv4", LabWeb)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := lab.Net.Start(cmd); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(out.String(), LabWebAddr.String()) {
		t.Errorf("getent ahostsv4 %s in the lab = %q, %v, want %s", LabWeb, out.String(), err, LabWebAddr)
	}
}
