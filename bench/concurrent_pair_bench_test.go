package bench

import (
	"errors"
	"fmt"
	"os/exec"
	"testing"
	"time"
)

// The concurrency pair (issue 25: 200 concurrent `sleep 0.5`, the jail's
// batch wall time at most 1.2x nsproto's, both with their cgroup leaves) is
// timed by benchConcurrent and printed with the startup pairs.

// concurrentTarget is issue 25's bound on the 200-run batch's A/B.
const concurrentTarget = 1.2

// concurrentRow names the pair's row for n runs at once.
func concurrentRow(n int) string { return fmt.Sprintf("jail-vs-nsproto-conc%d", n) }

// concurrentNsproto readies nsproto's side of the concurrency pair:
// nil when it runs here; or why it cannot (its row says so, the jail and
// bwrap still run); or done: the whole benchmark ran in a cgroup view,
// both sides alike, and b has its results. On a hybrid host whose cgroups
// are not the roots nsproto -cg v1 needs the view (nsprotoNeedsView); -cg
// v2 is no way out there: its leaf goes at the root of the cgroup2 mount at
// /sys/fs/cgroup/unified whatever this process' cgroup there, and that
// hierarchy has no memory, cpu or pids controller to limit with.
func concurrentNsproto(b *testing.B, n int) (done bool, why error) {
	switch {
	case pairsNsproto() == "":
		return false, errNoNsproto
	case !nsprotoNeedsView():
		return false, nil
	}
	if err := runInView(b, fmt.Sprintf("^BenchmarkConcurrent%d$", n)); err != nil {
		return false, err
	}
	return true, nil
}

// nsprotoSleep is nsproto with everything on, its cgroup too, running
// `sleep marker`.
func nsprotoSleep(marker string) *exec.Cmd {
	return exec.Command(pairsNsproto(), "-ns", "-net", "-mnt", "-landlock", "-seccomp", "-cg", nsprotoCgroup(), "-pid1", "--",
		"/usr/bin/sleep", marker)
}

// errNoNsproto is why the pair is not measured without nsproto.
var errNoNsproto = errors.New("SCIDEX_NSPROTO is not set (make bench-compare builds ../shared/perf/nsproto when it is there)")

// concurrentLine is the pair's row: the medians of the jail's and
// nsproto's batch wall times over ops batches each, and of the per-op
// ratios; or why it was not measured (protoErr).
func concurrentLine(n int, jail, proto batchStats, ratios []float64, ops int, protoErr error) string {
	name := concurrentRow(n)
	if protoErr != nil {
		return fmt.Sprintf("%-24s not measured: %s", name, oneLine(protoErr))
	}
	target := 0.0
	if n == 200 {
		target = concurrentTarget
	}
	mr := median(ratios)
	l := fmt.Sprintf("%-24s wall A %7.0f ms  B %7.0f ms  A/B %5.2f  %s  (%d at once, medians of %d interleaved batches)",
		name, medianMs(jail.walls), medianMs(proto.walls), mr, verdict(mr, target), n, ops)
	l += fmt.Sprintf("\nbench:   %-24s B: nsproto -ns -net -mnt -landlock -seccomp -cg %s -pid1", "", nsprotoCgroup())
	if inView() {
		l += fmt.Sprintf("\nbench:   %-24s %s", "", viewNote())
	}
	return l
}

// medianMs is the median of ds in milliseconds.
func medianMs(ds []time.Duration) float64 {
	xs := make([]float64, len(ds))
	for i, d := range ds {
		xs[i] = ms(d)
	}
	return median(xs)
}

// concurrentRows are the rows printPairs adds after the startup pairs',
// each when measured; the target's row also when not, saying where it is.
func concurrentRows() []string {
	rows := []string{concurrentRow(50), concurrentRow(200)}
	if _, ok := pairLines[concurrentRow(200)]; !ok && !inVM() {
		pairLines[concurrentRow(200)] = fmt.Sprintf("%-24s not measured in this run: BenchmarkConcurrent200 times it (make bench-compare: -bench Concurrent200 -benchtime 5x)", concurrentRow(200))
	}
	return rows
}
