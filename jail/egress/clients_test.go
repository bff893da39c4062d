package egress

import (
	"bytes"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// TestRealClients: curl, Python's urllib and requests, run in the jail's
// namespace with the host's files, reach an allowed name with TLS
// verified against the test internet's CA, both through the proxy
// (HTTPS_PROXY) and with no proxy (the C library's lookup through the
// stub, a captured connection); a refused name fails each of them, the
// proxy's refusal in the words the client prints. The stub answers at
// the address the host's resolv.conf names, as #35's run will make its
// view's resolv.conf name the stub.
func TestRealClients(t *testing.T) {
	ns := firstNameserver(t)
	h := newHarnessDNS(t, []string{testutil.LabWeb}, Budgets{}, netip.AddrPortFrom(ns, 53))
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, h.lab.CAPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	url := "https://" + testutil.LabWeb + "/"
	evil := "https://" + testutil.LabEvil + "/"
	py := "/usr/bin/python3" // Debian's, with requests; never a pyenv shim
	urllib := "import ssl, sys, urllib.request as u; print(u.urlopen(sys.argv[1], context=ssl.create_default_context(cafile=sys.argv[2]), timeout=20).read().decode())"
	requests := "import sys, requests; print(requests.get(sys.argv[1], verify=sys.argv[2], timeout=20).text)"
	clients := []struct {
		name string
		argv func(url string) []string
	}{
		{"curl", func(url string) []string { return []string{"curl", "-sS", "--max-time", "20", "--cacert", ca, url} }},
		{"urllib", func(url string) []string { return []string{py, "-c", urllib, url, ca} }},
		{"requests", func(url string) []string { return []string{py, "-c", requests, url, ca} }},
	}
	for _, c := range clients {
		for _, viaProxy := range []bool{false, true} {
			name := c.name + map[bool]string{false: "/captured", true: "/proxy"}[viaProxy]
			t.Run(name, func(t *testing.T) {
				out, err := h.run(viaProxy, c.argv(url)...)
				if err != nil || !strings.Contains(out, "hello from "+testutil.LabWeb) {
					t.Errorf("%s %s = %q, %v, want a greeting", name, url, out, err)
				}
				out, err = h.run(viaProxy, c.argv(evil)...)
				if err == nil {
					t.Errorf("%s %s succeeded: %q, want it refused", name, evil, out)
				}
				t.Logf("%s %s: %s", name, evil, lastLine(out))
				// curl prints the status code; Python prints the proxy's
				// whole status line.
				if viaProxy && c.name != "curl" && !strings.Contains(out, "scidex-jail egress: evil.lab.test is not in the profile") {
					t.Errorf("%s %s printed %q, want the refusal's words", name, evil, out)
				}
				if viaProxy && c.name == "curl" && !strings.Contains(out, "403") {
					t.Errorf("%s %s printed %q, want the 403", name, evil, out)
				}
			})
		}
	}
	log := h.eng.Stop()
	if n := h.lab.Queries(testutil.LabEvil); n != 0 {
		t.Errorf("the supervisor's resolver was asked about %s %d times, want never", testutil.LabEvil, n)
	}
	if n := h.lab.Accepted(netip.AddrPortFrom(testutil.LabEvilAddr, 443)); n != 0 {
		t.Errorf("%s accepted %d connections, want 0", testutil.LabEvil, n)
	}
	if got := log.Totals.ConnsAllowed; got != 6 {
		t.Errorf("allowed connections = %d, want 6 (three clients, two ways)", got)
	}
	if want := "refused 3 connections to 1 name not in the profile: evil.lab.test:443"; log.Summary() != want {
		t.Errorf("Summary() = %q, want %q", log.Summary(), want)
	}
	if log.Totals.LookupsBy[ReasonNotInProfile] == 0 {
		t.Errorf("refused lookups = %v, want those of the three clients without a proxy", log.Totals.LookupsBy)
	}
}

// run runs argv in the jail's namespace, with HTTPS_PROXY set to the
// engine's proxy or with no proxy at all; its output, stdout and stderr.
func (h *harness) run(viaProxy bool, argv ...string) (string, error) {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + h.t.TempDir(), "LC_ALL=C.UTF-8"}
	if viaProxy {
		p := "http://" + proxyAddr.String()
		cmd.Env = append(cmd.Env, "HTTPS_PROXY="+p, "https_proxy="+p)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := h.jail.Start(cmd); err != nil {
		return "", err
	}
	err := cmd.Wait()
	return out.String(), err
}

// firstNameserver is the first IPv4 name server of the host's
// resolv.conf: where a client in the jail's namespace, reading the
// host's files, sends its lookups.
func firstNameserver(t *testing.T) netip.Addr {
	t.Helper()
	b, err := os.ReadFile("/etc/resolv.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "nameserver" {
			if a, err := netip.ParseAddr(f[1]); err == nil && a.Is4() {
				return a
			}
		}
	}
	t.Fatalf("/etc/resolv.conf names no IPv4 name server: %q", b)
	return netip.Addr{}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
