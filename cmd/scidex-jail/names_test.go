package main

import (
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/report"
)

// TestNoNetworkNamesRecorded: with no network (the default profile, and
// the loopback mode), the
// analysis' name lookups are answered, refused, and recorded, so that the
// notes say what it tried to reach and that the profile allows none,
// where the analysis only sees "Name or service not known"; /etc/hosts'
// names still resolve and users are still found (the name service hangs
// up on what it does not answer, and the C library reads its files), and
// an inet socket is still refused by seccomp with its documented errno.
func TestNoNetworkNamesRecorded(t *testing.T) {
	requireRoot(t)
	script := `
import json, pwd, socket, subprocess, urllib.request
out = {}
try:
    urllib.request.urlopen("https://eutils.ncbi.nlm.nih.gov/entrez/eutils/esearch.fcgi", timeout=10)
except Exception as e:
    out["urllib"] = str(e)
p = subprocess.run(["curl", "-sS", "https://rest.uniprot.org/"], capture_output=True, text=True)
out["curl"] = p.stderr.strip()
out["localhost"] = socket.getaddrinfo("localhost", 80, type=socket.SOCK_STREAM)[0][4][0]
out["user"] = pwd.getpwuid(1000).pw_name
try:
    socket.socket(socket.AF_INET, socket.SOCK_STREAM)
except OSError as e:
    out["inet"] = e.errno
print(json.dumps(out))
`
	r := runJail(t, runOpts{}, "run", "--id", "names", "--tmp-root", tmpRoot(t), "--", "/usr/bin/python3", "-c", script)
	wantStatus(t, r, report.StatusOK, 0)
	for _, w := range []string{
		`"urllib": "<urlopen error [Errno -2] Name or service not known>"`, `"curl": "curl: (6) Could not resolve host: rest.uniprot.org"`,
		`"localhost": "127.0.0.1"`, `"user": "analysis"`, `"inet": 97`,
	} {
		if !strings.Contains(r.stdout, w) {
			t.Errorf("inside: %s; want it to hold %s", r.stdout, w)
		}
	}
	e := r.report.Egress
	if e == nil {
		t.Fatalf("report has no egress section; want the refused lookups; %v", r)
	}
	got := map[string]bool{}
	for _, l := range e.Lookups {
		if l.Decision == "refused" && l.Reason == "no_network" {
			got[l.Name] = true
		}
	}
	if !got["eutils.ncbi.nlm.nih.gov"] || !got["rest.uniprot.org"] || got["localhost"] || len(e.Connections) != 0 {
		t.Errorf("egress lookups = %+v, want eutils.ncbi.nlm.nih.gov and rest.uniprot.org refused as no_network, localhost not", e.Lookups)
	}
	if want := "The analysis tried to reach eutils.ncbi.nlm.nih.gov, rest.uniprot.org; this profile allows no network."; !strings.Contains(r.report.CompletionNotes, want) {
		t.Errorf("completion notes = %q, want them to hold %q", r.report.CompletionNotes, want)
	}
	// The loopback mode (a notebook's) too, in its own words; its own
	// listeners still reached by localhost.
	lo := `
import socket, threading
s = socket.socket(); s.bind(("localhost", 0)); s.listen()
threading.Thread(target=lambda: s.accept()[0].sendall(b"kernel"), daemon=True).start()
print(socket.create_connection(("localhost", s.getsockname()[1])).recv(16).decode())
try:
    socket.getaddrinfo("pypi.org", 443)
except socket.gaierror as e:
    print(e)
`
	r = runJail(t, runOpts{}, "run", "--id", "names-lo", "--tmp-root", tmpRoot(t), "--net", "loopback", "--", "/usr/bin/python3", "-c", lo)
	wantStatus(t, r, report.StatusOK, 0)
	if r.stdout != "kernel\n[Errno -2] Name or service not known\n" {
		t.Errorf("inside --net loopback: %q, want its own listener reached and pypi.org not found", r.stdout)
	}
	if want := "The analysis tried to reach pypi.org; this profile allows no network but the run's own loopback."; !strings.Contains(r.report.CompletionNotes, want) {
		t.Errorf("completion notes = %q, want them to hold %q", r.report.CompletionNotes, want)
	}
	// A run that looks nothing up has no egress section.
	r = runJail(t, runOpts{}, "run", "--id", "names-quiet", "--tmp-root", tmpRoot(t), "--", "/bin/true")
	wantStatus(t, r, report.StatusOK, 0)
	if r.report.Egress != nil {
		t.Errorf("egress of a run that looked nothing up = %+v, want none", r.report.Egress)
	}
}
