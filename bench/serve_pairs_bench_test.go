package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// BenchmarkServeStartup: the startup targets of the resident mode, as
// interleaved pairs from one Python process: Server.run against
// subprocess.run of bwrap, for /usr/bin/true (target 0.5) and python3 -c
// pass (0.8), each side on a calm machine (the pool refilled, the server
// idle); then `scidex-jail run --server SOCK` against bwrap (1.0), when
// the binary has that flag. It prints the median of each phase of the
// served runs' reports.
func BenchmarkServeStartup(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Fatal(errNoBwrap)
	}
	n := serveCount("SCIDEX_SERVE_PAIRS", 100)
	for _, w := range []struct {
		name    string
		target  float64
		command []string
	}{
		{"serve-vs-bwrap-true", serveTrueTarget, []string{"/usr/bin/true"}},
		{"serve-vs-bwrap-python", servePythonTarget, []string{"/usr/bin/python3", "-c", "pass"}},
	} {
		b.Run(strings.TrimPrefix(w.name, "serve-vs-bwrap-"), func(b *testing.B) {
			once(b, func(report func(float64, string)) {
				servePairs(b, report, w.name, w.target, w.command, n)
			})
		})
	}
	b.Run("client-true", func(b *testing.B) {
		once(b, func(report func(float64, string)) { clientPairs(b, report, n) })
	})
}

func servePairs(b *testing.B, rep func(float64, string), name string, target float64, command []string, n int) {
	dv := startDriver(b, serveConfig{Mode: "pairs", Command: command, N: n})
	m, err := dv.finish()
	if err != nil {
		b.Fatal(err)
	}
	if len(m.Served) != len(m.Peer) || len(m.Served) != n {
		b.Fatalf("%s: %d served and %d bwrap runs, want %d of each", name, len(m.Served), len(m.Peer), n)
	}
	var as, bs []time.Duration
	var ratios []float64
	var ph phaseSums
	slots := 0
	for i, s := range m.Served {
		as, bs = append(as, secs(s.Wall)), append(bs, secs(m.Peer[i]))
		ratios = append(ratios, s.Wall/m.Peer[i])
		if s.Start == "slot" {
			slots++
		}
		r := &report{}
		for _, p := range s.Phases {
			r.Phases = append(r.Phases, struct {
				Name   string `json:"name"`
				Where  string `json:"where"`
				Micros int64  `json:"us"`
			}{p.Name, p.Where, p.Micros})
		}
		ph.add(r, time.Time{}, secs(s.Wall))
	}
	rep(medianMs(as), "a-ms")
	rep(ms(percentile(as, 99)), "a-p99-ms")
	rep(medianMs(bs), "b-ms")
	rep(ms(percentile(bs, 99)), "b-p99-ms")
	rep(median(ratios), "a/b")
	ph.report(b)
	perRun := func(sec float64) float64 { return sec / float64(n) * 1e3 }
	rep(perRun(m.CPUPath), "a-path-cpu-ms/run")
	rep(perRun(m.CPUAfter), "a-after-cpu-ms/run")
	serveLines[name] = pairRow(name, as, bs, ratios, target) +
		fmt.Sprintf("\nbench:   %-24s A: Server.run, %d of %d from a slot (--slots 2); B: subprocess.run(bwrap ...); each run after the server idled", "", slots, n) +
		fmt.Sprintf("\nbench:   %-24s A's CPU per run (the server, its inits, the analysis): %.2f ms until the reply, %.2f ms after it until the server idled (its cleanup, the slot made in its place)", "",
			perRun(m.CPUPath), perRun(m.CPUAfter))
}

// pairRow is a startup row: each side's median and p99, the median of the
// per-pair ratios, the target beside.
func pairRow(name string, as, bs []time.Duration, ratios []float64, target float64) string {
	mr := median(ratios)
	return fmt.Sprintf("%-24s wall A %7.2f ms (p99 %7.2f)  B %7.2f ms (p99 %7.2f)  A/B %5.2f  %s  (medians of %d interleaved pairs)",
		name, medianMs(as), ms(percentile(as, 99)), medianMs(bs), ms(percentile(bs, 99)), mr, verdict(mr, target), len(ratios))
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// runHasServer says whether `run` takes --server in this build.
func runHasServer() bool {
	out, _ := exec.Command(jailBin, "run", "--help").CombinedOutput()
	return strings.Contains(string(out), "--server")
}

// clientPairs times `scidex-jail run --server SOCK -- /usr/bin/true`
// (a client process, the server listening on a socket with 2 slots)
// against bwrap, n interleaved pairs from Go.
func clientPairs(b *testing.B, report func(float64, string), n int) {
	const name = "client-vs-bwrap-true"
	if !runHasServer() {
		serveLines[name] = fmt.Sprintf("%-24s not measured: run has no --server in this build", name)
		return
	}
	d := newDirs(b)
	before, err := snapshot(d.TmpRoot)
	if err != nil {
		b.Fatal(err)
	}
	sock := filepath.Join(d.Reports, "serve.sock")
	var serr bytes.Buffer
	srv := exec.Command(jailBin, "serve", "--socket", sock, "--slots", "2")
	srv.Stdout, srv.Stderr = &serr, &serr
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		srv.Process.Signal(os.Interrupt)
		return srv.Wait()
	}
	defer stop()
	if err := awaitSocket(sock); err != nil {
		b.Fatalf("%v\n%s", err, serr.String())
	}
	var leaves []string
	slots := 0
	client := func(dirs) *exec.Cmd {
		id := newID(batchIDPrefix())
		return exec.Command(jailBin, "run", "--server", sock, "--id", id, "--tmp-root", d.TmpRoot,
			"--report", filepath.Join(d.Reports, id+".json"), "--", "/usr/bin/true")
	}
	noteLeaf := func(c *exec.Cmd) {
		path := reportArg(c.Args)
		bs, err := os.ReadFile(path)
		os.Remove(path)
		if err != nil {
			return
		}
		var r struct {
			Start  string `json:"start"`
			Cgroup struct {
				Paths []string `json:"paths"`
			} `json:"cgroup"`
		}
		if json.Unmarshal(bs, &r) == nil {
			if r.Start == "slot" {
				slots++
			}
			for _, p := range r.Cgroup.Paths {
				leaves = append(leaves, filepath.Base(p))
			}
		}
	}
	for _, mk := range []func(dirs) *exec.Cmd{client, func(dirs) *exec.Cmd { return bwrapCmd("/usr/bin/true") }} {
		c := mk(d)
		if out, err := c.CombinedOutput(); err != nil {
			b.Fatalf("%s: %v\n%s", strings.Join(c.Args, " "), err, out)
		}
		noteLeaf(c)
	}
	var as, bs []time.Duration
	var ratios []float64
	slots = 0
	for i := range n {
		// As for Server.run: each side after the server idled with its
		// slots ready.
		ca, cb := client(d), bwrapCmd("/usr/bin/true")
		run := func(c *exec.Cmd) (float64, error) {
			if err := awaitIdle(srv.Process.Pid, 2); err != nil {
				return 0, err
			}
			t0 := time.Now()
			out, err := c.CombinedOutput()
			if err != nil {
				return 0, fmt.Errorf("%s: %w\n%s", strings.Join(c.Args, " "), err, out)
			}
			return time.Since(t0).Seconds(), nil
		}
		first, second := ca, cb
		if i%2 == 1 {
			first, second = cb, ca
		}
		t1, err := run(first)
		if err != nil {
			b.Fatal(err)
		}
		t2, err := run(second)
		if err != nil {
			b.Fatal(err)
		}
		ta, tb := t1, t2
		if i%2 == 1 {
			ta, tb = t2, t1
		}
		noteLeaf(ca)
		as, bs, ratios = append(as, secs(ta)), append(bs, secs(tb)), append(ratios, ta/tb)
	}
	if err := stop(); err != nil {
		b.Fatalf("scidex-jail serve --socket: %v\n%s", err, serr.String())
	}
	after, err := snapshot(d.TmpRoot)
	if err != nil {
		b.Fatal(err)
	}
	if left := serveLeaks(before, after, leaves); len(left) > 0 {
		b.Fatalf("%s leaked:\n%s", name, joinLines(left))
	}
	report(medianMs(as), "a-ms")
	report(ms(percentile(as, 99)), "a-p99-ms")
	report(medianMs(bs), "b-ms")
	report(ms(percentile(bs, 99)), "b-p99-ms")
	report(median(ratios), "a/b")
	serveLines[name] = pairRow(name, as, bs, ratios, clientTrueTarget) +
		fmt.Sprintf("\nbench:   %-24s A: scidex-jail run --server SOCK (serve --socket SOCK --slots 2), %d of %d from a slot; B: bwrap ...; each run after the server idled", "", slots, n)
}

// awaitIdle waits until the server pid has at least slots inits as
// children and used no CPU tick in 30 ms, as serve_pairs.py's wait_ready.
// The deadline only guards against a hung server.
func awaitIdle(pid, slots int) error {
	deadline := time.Now().Add(60 * time.Second)
	for time.Now().Before(deadline) {
		if len(initsOf(pid)) < slots {
			time.Sleep(5 * time.Millisecond)
			continue
		}
		t0, err := cpuTicks(pid)
		if err != nil {
			return err
		}
		time.Sleep(30 * time.Millisecond)
		if t1, err := cpuTicks(pid); err == nil && t1 == t0 && len(initsOf(pid)) >= slots {
			return nil
		}
	}
	return fmt.Errorf("the server (pid %d) has %d of its %d slots after 60 s", pid, len(initsOf(pid)), slots)
}

// initsOf are pid's children that are the jail's init.
func initsOf(pid int) []int {
	var out []int
	for _, c := range children(pid) {
		if exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", c)); err == nil && strings.HasPrefix(filepath.Base(exe), "scidex-jail-init") {
			out = append(out, c)
		}
	}
	return out
}

// cpuTicks is pid's user + system time in clock ticks.
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, s)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %w", pid, err)
	}
	return u + st, nil
}

// awaitSocket waits until a server answers on sock. The deadline only
// guards against a server that never listens.
func awaitSocket(sock string) error {
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.Dial("unix", sock); err == nil {
			c.Close()
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("scidex-jail serve --socket %s: nobody listens after 30s", sock)
}
