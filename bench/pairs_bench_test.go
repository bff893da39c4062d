package bench

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// A pair is two whole commands timed in turn, A B B A A B ..., so that a
// machine whose speed drifts slows both alike; the figure to quote is the
// median of the per-pair ratios A/B, beside each side's median.
type pair struct {
	name   string
	target float64 // the bound on A/B (printed, never enforced)
	a, b   func(d dirs) *exec.Cmd
}

// pairsNsproto is the design's yardstick (../shared/perf/nsproto), built by
// `make bench-compare` and named by $SCIDEX_NSPROTO; its pair is left out,
// with a note, when it is not there.
func pairsNsproto() string { return os.Getenv("SCIDEX_NSPROTO") }

// fullJail is the run the startup targets are about: the default profile
// with explicit limits and a report, as a platform calls it.
func fullJail(d dirs, command ...string) *exec.Cmd {
	id := newID("pair")
	args := []string{"run", "--id", id, "--tmp-root", d.TmpRoot, "--memory", "256M", "--cpus", "1", "--pids", "64",
		"--report", filepath.Join(d.Reports, id+".json"), "--"}
	return exec.Command(jailBin, append(args, command...)...)
}

func bwrapCmd(command ...string) *exec.Cmd {
	return exec.Command("bwrap", bwrapArgs(command...)...)
}

// nsprotoCmd is nsproto with everything on: user + five namespaces and the
// network one, a read-only root with pivot_root, Landlock, seccomp, a cgroup
// leaf with limits (v2 where the host has it, else v1) and PID 1.
func nsprotoCmd(command ...string) *exec.Cmd {
	cg := "v1"
	if _, err := os.Stat("/sys/fs/cgroup/cgroup.subtree_control"); err == nil {
		cg = "v2"
	}
	args := []string{"-ns", "-net", "-mnt", "-landlock", "-seccomp", "-cg", cg, "-pid1", "--"}
	return exec.Command(pairsNsproto(), append(args, command...)...)
}

var pairs = []pair{
	{"jail-vs-bwrap-true", 1.5,
		func(d dirs) *exec.Cmd { return fullJail(d, "/usr/bin/true") },
		func(dirs) *exec.Cmd { return bwrapCmd("/usr/bin/true") }},
	{"jail-vs-nsproto-true", 1.2,
		func(d dirs) *exec.Cmd { return fullJail(d, "/usr/bin/true") },
		func(dirs) *exec.Cmd { return nsprotoCmd("/usr/bin/true") }},
	{"jail-vs-bwrap-python", 1.15,
		func(d dirs) *exec.Cmd { return fullJail(d, "/usr/bin/python3", "-c", "pass") },
		func(dirs) *exec.Cmd { return bwrapCmd("/usr/bin/python3", "-c", "pass") }},
}

// pairLines holds each pair's summary, printed after all benchmarks.
var pairLines = map[string]string{}

// printPairs writes the startup targets table, in pairs' order.
func printPairs() {
	if len(pairLines) == 0 {
		return
	}
	fmt.Fprintln(os.Stderr, "bench: startup against the peers (A/B: median of the per-pair ratios):")
	for _, p := range pairs {
		if l, ok := pairLines[p.name]; ok {
			fmt.Fprintln(os.Stderr, "bench:   "+l)
		}
	}
}

// BenchmarkPairs times each pair b.N times, interleaved, and reports the
// median of each side (a-ms, b-ms) and of the per-pair ratio (a/b), then
// prints one line per pair with the target beside it.
func BenchmarkPairs(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Fatal(errNoBwrap)
	}
	for _, p := range pairs {
		b.Run(p.name, func(b *testing.B) {
			if strings.Contains(p.name, "nsproto") && pairsNsproto() == "" {
				fmt.Fprintf(os.Stderr, "bench: %s left out: SCIDEX_NSPROTO is not set (make bench-compare builds ../shared/perf/nsproto when it is there)\n", p.name)
				return
			}
			d := newDirs(b)
			// One of each first, unmeasured: caches, and a message if a
			// side cannot run at all.
			for _, mk := range []func(dirs) *exec.Cmd{p.a, p.b} {
				if out, err := mk(d).CombinedOutput(); err != nil {
					b.Fatalf("%s: %v\n%s", p.name, err, out)
				}
			}
			var as, bs, ratios []float64
			for i := 0; i < b.N; i++ {
				ta, tb, err := timePair(d, p, i%2 == 1)
				if err != nil {
					b.Fatal(err)
				}
				as, bs, ratios = append(as, ta), append(bs, tb), append(ratios, ta/tb)
			}
			ma, mb, mr := median(as), median(bs), median(ratios)
			b.ReportMetric(ma*1e3, "a-ms")
			b.ReportMetric(mb*1e3, "b-ms")
			b.ReportMetric(mr, "a/b")
			verdict := "met"
			if mr > p.target {
				verdict = "NOT met"
			}
			// Kept, not printed: the benchmark runs again with a larger
			// b.N, and TestMain prints the last of each at the end.
			pairLines[p.name] = fmt.Sprintf("%-22s A %7.2f ms  B %7.2f ms  A/B %5.2f  (median of %d interleaved pairs)  target <= %.2f: %s",
				p.name, ma*1e3, mb*1e3, mr, b.N, p.target, verdict)
		})
	}
}

// timePair runs both sides of p once, B first when swap, and returns the
// wall time of each as its caller sees it (start to reaped).
func timePair(d dirs, p pair, swap bool) (ta, tb float64, err error) {
	run := func(mk func(dirs) *exec.Cmd) (float64, error) {
		c := mk(d)
		t0 := time.Now()
		out, err := c.CombinedOutput()
		el := time.Since(t0).Seconds()
		if err != nil {
			return 0, fmt.Errorf("%s: %s: %w\n%s", p.name, strings.Join(c.Args, " "), err, out)
		}
		return el, nil
	}
	if swap {
		if tb, err = run(p.b); err == nil {
			ta, err = run(p.a)
		}
		return ta, tb, err
	}
	if ta, err = run(p.a); err == nil {
		tb, err = run(p.b)
	}
	return ta, tb, err
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
