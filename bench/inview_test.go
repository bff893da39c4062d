package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// On a hybrid host whose memory cgroup is not the hierarchy's root (these
// development machines: /process_api/<id>), nsproto -cg v1 would make its
// leaves outside this process' cgroups (nsprotoV1Outside). Its pairs then
// run in a cgroup view, nsprotoView, both sides alike: the benchmark
// re-executes this test binary once in a new view, with -test.bench naming
// that benchmark alone, the same b.N, and $SCIDEX_BENCH_VIEW set. Inside,
// the benchmark runs as it would on a host whose cgroups are the roots
// (the jail's leaves and nsproto's alike land below our cgroups) and
// writes its rows and metrics to the file $SCIDEX_BENCH_VIEW names, which
// the benchmark outside then reports as its own. Neither side pays for the
// view: it is entered once, before either side's first run, and every run
// of both sides is a child of the same process in it.
//
//	outside: BenchmarkPairs/jail-vs-nsproto-true
//	           unshare -m -C --propagation private sh -c '<mounts>; exec "$@"' \
//	             bench.test -test.bench '^BenchmarkPairs$/^jail-vs-nsproto-true$' ...
//	inside:    the pair, then the file: {"lines": ..., "metrics": ...}

// viewEnv marks the test binary inside a view and names the file it hands
// its results back in.
const viewEnv = "SCIDEX_BENCH_VIEW"

// inView reports whether this is the test binary inside a view.
func inView() bool { return os.Getenv(viewEnv) != "" }

// nsprotoView is the view of nsproto's pairs: the jail needs cgroup2 at
// /sys/fs/cgroup/unified, where the host has it (its /proc/self/cgroup
// still lists 0::/).
var nsprotoView = cgroupView{V1: viewControllers, Unified: true}

// nsprotoNeedsView reports whether nsproto's pairs run in nsprotoView here:
// on a hybrid host where its v1 leaves would sit outside our cgroups. On a
// cgroup v2 host (the VM) nsproto runs -cg v2 as it is.
func nsprotoNeedsView() bool { return !inView() && nsprotoV1Outside() != "" }

// viewNote is printed under the rows measured in the view.
func viewNote() string {
	return fmt.Sprintf("A and B in one cgroup view (unshare -m -C; %s, cgroup2: roots at our cgroups)", strings.Join(nsprotoView.V1, ", "))
}

// viewResult is what the binary inside a view hands back.
type viewResult struct {
	Lines   map[string]string             `json:"lines"`   // its rows of pairLines
	Metrics map[string]map[string]float64 `json:"metrics"` // benchmark name -> unit -> value
}

// viewMetrics are the metrics reported inside a view, by benchmark name.
var viewMetrics = map[string]map[string]float64{}

// reportMetric is b.ReportMetric, also kept for the benchmark outside when
// this is the binary inside a view.
func reportMetric(b *testing.B, v float64, unit string) {
	b.ReportMetric(v, unit)
	if !inView() {
		return
	}
	if viewMetrics[b.Name()] == nil {
		viewMetrics[b.Name()] = map[string]float64{}
	}
	viewMetrics[b.Name()][unit] = v
}

// runInView runs the benchmark bench (a -test.bench pattern that names b
// alone) b.N times in a new nsprotoView and reports what it measured as
// b's: its metrics, and its rows in pairLines. The error is why the view
// could not be made; a failure inside fails b.
func runInView(b *testing.B, bench string) error {
	if err := viewUnavailable(); err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this test binary to run it in a cgroup view: %w", err)
	}
	res := filepath.Join(b.TempDir(), "view.json")
	c := nsprotoView.cmd(self, "-test.run", "^$", "-test.bench", bench,
		"-test.benchtime", fmt.Sprintf("%dx", b.N), "-test.count", "1", "-test.timeout", "0")
	c.Env = append(os.Environ(), viewEnv+"="+res, "SCIDEX_JAIL_BIN="+jailBin)
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	runErr := c.Run()
	if _, err := os.Stat(res); err != nil {
		// The binary inside makes the file first: it never started.
		return fmt.Errorf("the cgroup view (unshare -m -C --propagation private, then tmpfs and cgroup mounts over /sys/fs/cgroup) could not be made (it needs root and cgroup namespaces): %v: %s",
			runErr, strings.TrimSpace(stderr.String()))
	}
	if runErr != nil {
		b.Fatalf("%s in a cgroup view: %v\n%s%s", bench, runErr, stdout.String(), stderr.String())
	}
	os.Stderr.Write(stderr.Bytes())
	raw, err := os.ReadFile(res)
	if err != nil {
		b.Fatalf("read the results of %s from its cgroup view: %v", bench, err)
	}
	var r viewResult
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatalf("decode the results of %s from its cgroup view: %v\n%s", bench, err, raw)
	}
	for unit, v := range r.Metrics[b.Name()] {
		b.ReportMetric(v, unit)
	}
	maps.Copy(pairLines, r.Lines)
	return nil
}

// enterView is the start of the binary inside a view: it makes the result
// file (the sign, outside, that the view was made) and checks that the
// view does place nsproto's leaves below our cgroups.
func enterView() error {
	if err := os.WriteFile(os.Getenv(viewEnv), []byte("{}"), 0o600); err != nil {
		return fmt.Errorf("%s: %w", viewEnv, err)
	}
	if why := nsprotoV1Outside(); why != "" {
		return fmt.Errorf("in the cgroup view, still: %s", why)
	}
	return nil
}

// leaveView writes the results of the binary inside a view.
func leaveView() error {
	b, err := json.Marshal(viewResult{Lines: pairLines, Metrics: viewMetrics})
	if err != nil {
		return fmt.Errorf("encode the results in the cgroup view: %w", err)
	}
	return os.WriteFile(os.Getenv(viewEnv), b, 0o600)
}
