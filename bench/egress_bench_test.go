package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// egressPy times, from where it runs, the three ways to the test
// internet's bytes port: direct (a name looked up and dialled: a process
// in the lab itself, no jail), captured (the same from inside a run of the
// egress mode: the stub's fake address, the supervisor's relay) and proxy
// (a CONNECT to the run's HTTPS proxy). For each it prints the median
// setup time over 20 connections, from nothing to the first byte of an
// answer (lookup included), and the throughput of one 100 MB download.
const egressPy = `
import json, os, socket, statistics, sys, time
host, port, modes = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
SIZE = 100 << 20

def connect(mode):
    if mode == "proxy":
        c = socket.create_connection(("127.0.0.1", int(os.environ["HTTPS_PROXY"].rsplit(":", 1)[1])))
        c.sendall(b"CONNECT %s:%d HTTP/1.1\r\nHost: %s:%d\r\n\r\n" % (host.encode(), port, host.encode(), port))
        head = b""
        while b"\r\n\r\n" not in head:
            head += c.recv(1)
        assert head.startswith(b"HTTP/1.1 200"), head
        return c
    return socket.create_connection((host, port))

def get(c, n):
    c.sendall(b"get %d\n" % n)
    got = 0
    while got < n:
        b = c.recv(1 << 20)
        if not b:
            break
        got += len(b)
    return got

out = {}
for mode in modes:
    setups = []
    for _ in range(20):
        t0 = time.perf_counter()
        c = connect(mode)
        get(c, 1)
        setups.append(time.perf_counter() - t0)
        c.close()
    c = connect(mode)
    t0 = time.perf_counter()
    n = get(c, SIZE)
    dt = time.perf_counter() - t0
    c.close()
    assert n == SIZE, n
    out[mode] = {"setup_us": statistics.median(setups) * 1e6, "mb_per_s": SIZE / dt / 1e6}
print(json.dumps(out))
`

// BenchmarkEgress: the egress mode's proxy and captured connections
// against a direct connection, in the test internet (make
// bench-compare): each iteration is one run of the jail timing both from
// inside, and one process in the lab timing the direct way. Metrics:
// MB/s of a 100 MB download and µs from nothing to the first byte, per
// way (medians of 20 setups, mean over iterations).
func BenchmarkEgress(b *testing.B) {
	if os.Geteuid() != 0 {
		b.Fatalf("the test internet needs root (euid %d)", os.Geteuid())
	}
	lab := testutil.NewLab(b)
	tmp, err := os.MkdirTemp("", "sj-bench-egress-")
	if err != nil {
		b.Fatal(err)
	}
	os.Chmod(tmp, 0o755)
	b.Cleanup(func() { os.RemoveAll(tmp) })
	port := strconv.Itoa(testutil.LabBytes)
	sums := map[string]map[string]float64{}
	add := func(out []byte) {
		var got map[string]map[string]float64
		if err := json.Unmarshal(bytes.TrimSpace(out), &got); err != nil {
			b.Fatalf("the timing script printed %q: %v", out, err)
		}
		for mode, m := range got {
			if sums[mode] == nil {
				sums[mode] = map[string]float64{}
			}
			for k, v := range m {
				sums[mode][k] += v
			}
		}
	}
	run := func(cmd *exec.Cmd) []byte {
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := lab.Net.Start(cmd); err != nil {
			b.Fatal(err)
		}
		if err := cmd.Wait(); err != nil {
			b.Fatalf("%s: %v\n%s%s", cmd.Args[0], err, out.String(), errb.String())
		}
		return out.Bytes()
	}
	for i := 0; b.Loop(); i++ {
		add(run(exec.Command("/usr/bin/python3", "-I", "-c", egressPy, testutil.LabWeb, port, "direct")))
		add(run(exec.Command(jailBin, "run", "--id", "bench-egress-"+strconv.Itoa(i), "--tmp-root", tmp, "--net", "egress",
			"--allow-host", testutil.LabWeb+":"+port, "--allow-range", testutil.LabPublic.String(), "--egress-download", "none",
			"--report", filepath.Join(tmp, "report.json"), "--",
			"/usr/bin/python3", "-I", "-c", egressPy, testutil.LabWeb, port, "captured", "proxy")))
	}
	for _, mode := range []string{"direct", "captured", "proxy"} {
		for k, v := range sums[mode] {
			unit := map[string]string{"setup_us": "us-setup", "mb_per_s": "MB/s"}[k]
			b.ReportMetric(v/float64(b.N), fmt.Sprintf("%s-%s", unit, mode))
		}
	}
	b.ReportMetric(0, "ns/op")
}
