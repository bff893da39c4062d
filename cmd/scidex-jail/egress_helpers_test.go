package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/report"
)

// egressProbePy runs named probes of the egress mode from inside a run
// and prints one JSON line [name, result] each: "ok <what it read>", or
// the error's type and text (the words a client shows its user).
const egressProbePy = `
import json, os, socket, ssl, subprocess, sys, urllib.request

CA = os.environ["LAB_CA"]

def tls():
    return ssl.create_default_context(cafile=CA)

def proxied(url):
    # urllib takes HTTPS_PROXY from the environment.
    with urllib.request.urlopen(url, context=tls(), timeout=20) as r:
        return "ok " + r.read(64).decode()

def direct(url):
    # No proxy: the name is looked up (the stub), and the connection to
    # its fake address is captured.
    op = urllib.request.build_opener(urllib.request.ProxyHandler({}), urllib.request.HTTPSHandler(context=tls()))
    with op.open(url, timeout=20) as r:
        return "ok " + r.read(64).decode()

def curl(*args):
    p = subprocess.run(["curl", "-sS", "--max-time", "20", "--cacert", CA, *args], capture_output=True, text=True)
    return ("ok " + p.stdout[:64]) if p.returncode == 0 else "curl %d: %s" % (p.returncode, p.stderr.strip())

def req(url, proxy=True):
    import requests
    s = requests.Session()
    s.trust_env = proxy  # HTTPS_PROXY from the environment, or none
    return "ok " + s.get(url, verify=CA, timeout=20).text[:64]

def udp(addr):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.sendto(b"exfiltrate", addr)
    return "ok sent"

def tcp(host, port):
    with socket.create_connection((host, port), timeout=10) as c:
        c.sendall(b"\x00\x00\x00\x08\x04\xd2\x16\x2f")
        return "ok " + repr(c.recv(64))

def get(host, port, n):
    # The lab's bytes port: "get N" is answered with N bytes.
    got = 0
    try:
        with socket.create_connection((host, port), timeout=20) as c:
            c.sendall(b"get %d\n" % n)
            while True:
                b = c.recv(1 << 16)
                if not b:
                    break
                got += len(b)
    except OSError as e:
        return "%s after %d" % (type(e).__name__, got)
    return "ok %d" % got

def put(host, port, n):
    # The lab's bytes port: "put" reads to the end and answers the count.
    sent = 0
    try:
        with socket.create_connection((host, port), timeout=20) as c:
            c.sendall(b"put\n")
            while sent < n:
                sent += c.send(b"\0" * min(1 << 16, n - sent))
            c.shutdown(socket.SHUT_WR)
            return "ok sent %d, answer %r" % (sent, c.recv(64))
    except OSError as e:
        return "%s after %d" % (type(e).__name__, sent)

def idle(host, port):
    # Connects, sends nothing, waits for the other end to close.
    with socket.create_connection((host, port), timeout=60) as c:
        try:
            return "closed %r" % c.recv(64)
        except OSError as e:
            return "closed %s" % type(e).__name__

def gets(host, port, k):
    # k connections one after the other; what became of each.
    return " ".join(get(host, port, 1).split(" ")[0] for _ in range(k))

def dns_raw(packet):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.settimeout(2)  # a query the stub cannot answer gets no answer
        s.sendto(packet, ("127.0.0.1", 53))
        reply = s.recv(512)
        return "ok rcode %d" % (reply[3] & 15) if len(reply) >= 4 else "short reply"

def long_name():
    # 4 labels of 63: a name over 253 bytes, asked as a well-formed query.
    name = b"".join(bytes([63]) + b"a" * 63 for _ in range(4)) + b"\x03lab\x04test\x00"
    return dns_raw(b"\x12\x34\x01\x00\x00\x01\x00\x00\x00\x00\x00\x00" + name + b"\x00\x01\x00\x01")

def run(expr):
    try:
        return eval(expr)
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)

for name, expr in json.loads(sys.argv[1]):
    print(json.dumps([name, run(expr)]), flush=True)
`

// egressProbe is one probe: want is a part of its result.
type egressProbe struct {
	name, expr, want string
}

// egressArgv is the command that runs probes with the system's Python.
func egressArgv(t *testing.T, probes []egressProbe) []string {
	t.Helper()
	list := make([][2]string, len(probes))
	for i, p := range probes {
		list[i] = [2]string{p.name, p.expr}
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"/usr/bin/python3", "-I", "-c", egressProbePy, string(b)}
}

// labCA writes the test internet's CA where a run can read it, and
// returns its path.
func labCA(t *testing.T, lab *testutil.Lab) string {
	t.Helper()
	dir := tmpRoot(t) // a directory every uid can reach, as /tmp
	p := filepath.Join(dir, "ca.pem")
	if err := os.WriteFile(p, lab.CAPEM, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// runInLab runs the binary in the test internet's network namespace (its
// supervisor's "host") to completion.
func runInLab(t *testing.T, lab *testutil.Lab, args ...string) result {
	t.Helper()
	cmd, rep, out, errb := jailCmd(t, runOpts{}, args...)
	if err := lab.Net.Start(cmd); err != nil {
		t.Fatalf("start scidex-jail in the test internet: %v", err)
	}
	return finishJail(t, cmd, cmd.Wait(), rep, out, errb)
}

// probeResults reads the probes' lines of r's stdout.
func probeResults(t *testing.T, r result) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(r.stdout), "\n") {
		var kv [2]string
		if json.Unmarshal([]byte(line), &kv) == nil {
			got[kv[0]] = kv[1]
		}
	}
	return got
}

// conns are the report's egress connections to name:port.
func conns(e *report.Egress, name string, port int) []report.EgressConn {
	var out []report.EgressConn
	for _, c := range e.Connections {
		if c.Name == name && c.Port == port {
			out = append(out, c)
		}
	}
	return out
}

func limitsEgressDownload() *limits.Limit { return limits.EgressDownload }
