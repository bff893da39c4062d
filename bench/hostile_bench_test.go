package bench

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

// BenchmarkHostileOutputs runs each hostile analysis of the end-to-end
// suite (testutil.HostileScripts) under the default profile, with
// --collect, and reports what it cost the trusted side: the supervisor's
// post-run work (the report's outputs, teardown, cleanup and report
// phases), the whole run as the caller saw it, and the supervisor's peak
// resident size (VmHWM, sampled every 5 ms: it only grows, so the last
// sample before the exit is the peak to within the last 5 ms). The
// analyses themselves take seconds (10,000 nested directories about ten):
// run it with -benchtime 1x (make bench-hostile).
func BenchmarkHostileOutputs(b *testing.B) {
	names := make([]string, 0, len(testutil.HostileScripts))
	for n := range testutil.HostileScripts {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			d := newDirs(b)
			var post, wall, hwm float64
			for range b.N {
				p, w, m := hostileRun(b, d, name)
				post, wall, hwm = post+p, wall+w, max(hwm, m)
			}
			b.ReportMetric(post/float64(b.N), "post-run-ms")
			b.ReportMetric(wall/float64(b.N), "wall-ms")
			b.ReportMetric(hwm, "supervisor-VmHWM-kB")
		})
	}
}

func hostileRun(b *testing.B, d dirs, name string) (postMs, wallMs, hwmKB float64) {
	b.Helper()
	id := newID("hostile")
	out := filepath.Join(d.Reports, id+"-out")
	defer os.RemoveAll(out)
	extra := []string{"--collect", out}
	if name == "links" {
		extra = append(extra, "--disk", "64M")
	}
	j := newJailCmd(d, id, extra, "python3", "-c", testutil.HostileScripts[name])
	t0 := time.Now()
	if err := j.Cmd.Start(); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- j.Cmd.Wait() }()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for waiting := true; waiting; {
		select {
		case <-done:
			waiting = false
		case <-tick.C:
			if kb := vmHWM(j.Cmd.Process.Pid); kb > hwmKB {
				hwmKB = kb
			}
		}
	}
	wallMs = float64(time.Since(t0).Microseconds()) / 1000
	raw, err := os.ReadFile(j.report)
	if err != nil {
		b.Fatalf("%s: no report: %v\n%s", name, err, j.stderr.String())
	}
	os.Remove(j.report)
	var r struct {
		Status string `json:"status"`
		Phases []struct {
			Name  string `json:"name"`
			Where string `json:"where"`
			Us    int64  `json:"us"`
		} `json:"phases"`
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		b.Fatalf("%s: report: %v", name, err)
	}
	for _, p := range r.Phases {
		if p.Where == "supervisor" && (p.Name == "outputs" || p.Name == "teardown" || p.Name == "cleanup" || p.Name == "report") {
			postMs += float64(p.Us) / 1000
		}
	}
	b.Logf("%s: status %s", name, r.Status)
	return postMs, wallMs, hwmKB
}

// vmHWM is a process's peak resident size in kB (0 once it is gone).
func vmHWM(pid int) float64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return n
		}
	}
	return 0
}
