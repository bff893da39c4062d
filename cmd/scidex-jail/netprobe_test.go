package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// netDeadline bounds every run of the network tests from outside: a client
// that hangs instead of failing fails the test with that said, instead of
// hanging the test binary. It is no timed assertion: every probe inside has
// its own 5 s connect timeout and normally ends in milliseconds.
const netDeadline = 90 * time.Second

// netRunBounded is runJail with netDeadline: past it the jail gets SIGTERM
// (it then ends the whole run) and the test fails.
func netRunBounded(t *testing.T, o runOpts, args ...string) result {
	t.Helper()
	cmd, rep, out, errb := jailCmd(t, o, args...)
	if err := cmd.Start(); err != nil {
		t.Fatalf("start scidex-jail: %v", err)
	}
	timer := time.AfterFunc(netDeadline, func() { cmd.Process.Signal(syscall.SIGTERM) })
	err := cmd.Wait()
	hung := !timer.Stop()
	r := finishJail(t, cmd, err, rep, out, errb)
	if hung {
		t.Fatalf("scidex-jail %q still ran after %s: something inside hung instead of failing; %v", args, netDeadline, r)
	}
	return r
}

// netProbePy is a Python harness run by /usr/bin/python3 inside (and, for
// comparison, outside) the jail. argv[1] is a JSON list of [name,
// expression]; each expression runs in a forked child, so that a call
// which succeeds (a new user namespace, PTRACE_TRACEME) cannot change what
// the next one sees. It prints one JSON line [name, value] per case: 0 for
// success, the errno of a failed call or OSError, -1 for an OSError without
// errno (a timeout), -2 for a wrong answer, a string for any other
// exception.
const netProbePy = `
import ctypes, json, os, socket, sys, threading
libc = ctypes.CDLL(None, use_errno=True)

def call(f, *a):
    ctypes.set_errno(0)
    r = f(*[ctypes.c_long(x) if isinstance(x, int) else x for x in a])
    return ctypes.get_errno() if r == -1 else 0

def sys_(nr, *a):
    return call(libc.syscall, nr, *a)

def sock(*a):
    socket.socket(*a).close()
    return 0

def tcp(port, greeting=b""):
    with socket.create_connection(("127.0.0.1", port), timeout=5) as c:
        if greeting and c.recv(len(greeting)) != greeting:
            return -2
    return 0

def unix(path):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as c:
        c.settimeout(5)
        c.connect(path)
    return 0

def bind_tcp():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
    return 0

def resolve(name):
    try:
        socket.getaddrinfo(name, 443, type=socket.SOCK_STREAM)
        return 0
    except socket.gaierror as e:
        return "gaierror %d: %s" % (e.errno, e.strerror)

def loop():
    # A notebook kernel and its client: both ends inside one run.
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    def serve():
        c, _ = srv.accept()
        c.sendall(b"kernel-ready\n")
        c.close()
    threading.Thread(target=serve, daemon=True).start()
    with socket.create_connection(("127.0.0.1", srv.getsockname()[1]), timeout=5) as c:
        return 0 if c.recv(64) == b"kernel-ready\n" else -2

def pair():
    a, b = socket.socketpair()
    a.sendall(b"x")
    ok = b.recv(1) == b"x"
    a.close(); b.close()
    return 0 if ok else -2

def pool():
    import multiprocessing
    with multiprocessing.Pool(2) as p:
        return 0 if p.map(abs, [-1, -2, -3]) == [1, 2, 3] else -2

def run(expr):
    try:
        return eval(expr)
    except OSError as e:
        return e.errno if e.errno is not None else -1
    except Exception as e:
        return "%s: %s" % (type(e).__name__, e)

for name, expr in json.loads(sys.argv[1]):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        os.write(w, json.dumps(run(expr)).encode())
        os._exit(0)
    os.close(w)
    out = b""
    while True:
        b = os.read(r, 4096)
        if not b:
            break
        out += b
    os.close(r)
    _, st = os.waitpid(pid, 0)
    print(json.dumps([name, json.loads(out) if out else "child died, wait status %d" % st]), flush=True)
`

// netProbe is one case of netProbePy: want is the errno expected (0: success).
type netProbe struct {
	name string
	expr string
	want int
}

// netProbeArgv is the command that runs cases with the system's Python.
func netProbeArgv(t *testing.T, cases []netProbe) []string {
	t.Helper()
	list := make([][2]string, len(cases))
	for i, c := range cases {
		list[i] = [2]string{c.name, c.expr}
	}
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	return []string{"/usr/bin/python3", "-I", "-c", netProbePy, string(b)}
}

// netProbeResults parses netProbePy's output: each case's value as JSON text,
// e.g. "0", "13" or "\"NameError: ...\"".
func netProbeResults(t *testing.T, stdout string) map[string]string {
	t.Helper()
	got := map[string]string{}
	for _, line := range strings.Split(stdout, "\n") {
		var kv [2]json.RawMessage
		if !strings.HasPrefix(line, "[") || json.Unmarshal([]byte(line), &kv) != nil {
			continue
		}
		var name string
		if err := json.Unmarshal(kv[0], &name); err != nil {
			t.Fatalf("probe output %q: %v", line, err)
		}
		got[name] = string(kv[1])
	}
	return got
}

// netCheckProbes compares every case's result with its wanted errno.
func netCheckProbes(t *testing.T, where string, cases []netProbe, got map[string]string, r result) {
	t.Helper()
	for _, c := range cases {
		v, ok := got[c.name]
		if !ok {
			t.Errorf("%s: %s (%s) printed nothing; %v", where, c.name, c.expr, r)
			continue
		}
		if v != strconv.Itoa(c.want) {
			t.Errorf("%s: %s = %s, want %s", where, c.expr, netDescribe(v), netDescribe(strconv.Itoa(c.want)))
		}
	}
}

// netDescribe turns a probe value into words: "13 (permission denied)".
func netDescribe(v string) string {
	n, err := strconv.Atoi(v)
	switch {
	case err != nil:
		return v
	case n == 0:
		return "0 (success)"
	case n == -1:
		return "-1 (timed out)"
	case n == -2:
		return "-2 (wrong answer)"
	}
	return fmt.Sprintf("%d (%v)", n, syscall.Errno(n))
}

// netProbeOutside runs cases with the same Python on the host, as root: the
// control that shows what the jail changes.
func netProbeOutside(t *testing.T, cases []netProbe) map[string]string {
	t.Helper()
	argv := netProbeArgv(t, cases)
	ctx, cancel := context.WithTimeout(context.Background(), netDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("outside the jail: python probes: %v\n%s", err, out)
	}
	return netProbeResults(t, string(out))
}
