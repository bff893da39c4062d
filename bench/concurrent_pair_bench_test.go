package bench

import (
	"errors"
	"fmt"
	"os/exec"
	"time"
)

// The concurrency pair (issue 25: 200 concurrent `sleep 0.5`, the jail's
// batch wall time at most 1.2x nsproto's) is timed by benchConcurrent and
// printed with the startup pairs.

// concurrentTarget is issue 25's bound on the 200-run batch's A/B.
const concurrentTarget = 1.2

// concurrentRow names the pair's row for n runs at once.
func concurrentRow(n int) string { return fmt.Sprintf("jail-vs-nsproto-conc%d", n) }

// nsprotoConcurrentCg is nsproto's -cg in the concurrency pair, and why.
// Its v1 leaves (-cg v1) sit at the roots of the memory, cpu and pids
// hierarchies, which a benchmark may use only when its own cgroups are
// those roots (nsprotoV1Outside): elsewhere, as on these development
// machines, nsproto runs with -cg none, everything else on, and so does no
// cgroup work at all while the jail makes, limits and removes a leaf per
// run: the ratio then overstates the jail's cost by that work. -cg v2 is no
// better on a hybrid host: its leaf goes at the root of the cgroup2 mount at
// /sys/fs/cgroup/unified whatever this process' cgroup there, and that
// hierarchy has no memory, cpu or pids controller to limit with.
func nsprotoConcurrentCg() (cg, why string) {
	if why := nsprotoV1Outside(); why != "" {
		return "none", why
	}
	return nsprotoCgroup(), ""
}

// nsprotoSleep is nsproto with everything on but, where nsprotoV1Outside
// says so, the cgroup, running `sleep marker`.
func nsprotoSleep(marker string) *exec.Cmd {
	cg, _ := nsprotoConcurrentCg()
	return exec.Command(pairsNsproto(), "-ns", "-net", "-mnt", "-landlock", "-seccomp", "-cg", cg, "-pid1", "--",
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
	cg, why := nsprotoConcurrentCg()
	l := fmt.Sprintf("%-24s wall A %7.0f ms  B %7.0f ms  A/B %5.2f  %s  (%d at once, medians of %d interleaved batches)",
		name, medianMs(jail.walls), medianMs(proto.walls), mr, verdict(mr, target), n, ops)
	l += fmt.Sprintf("\nbench:   %-24s B: nsproto -ns -net -mnt -landlock -seccomp -cg %s -pid1", "", cg)
	if why != "" {
		l += fmt.Sprintf(" (no cgroup: %s)", why)
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
