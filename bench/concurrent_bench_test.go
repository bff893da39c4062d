package bench

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/scidex/scidex-jail/internal/testutil"
)

func BenchmarkConcurrent50(b *testing.B)  { benchConcurrent(b, 50) }
func BenchmarkConcurrent200(b *testing.B) { benchConcurrent(b, 200) }

// benchConcurrent starts n jails of `sleep 0.5` at once, then n nsprotos
// (when $SCIDEX_NSPROTO names it) and n bwrap sandboxes of the same, in
// reversed order every other op (A B, B A, ...: neither always runs on a
// warmer machine), and checks that every jail succeeded and left nothing
// behind. The jail against nsproto is a pair like BenchmarkPairs': the
// median of the per-op ratios of the batches' wall times is printed with
// the others.
func benchConcurrent(b *testing.B, n int) {
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		b.Fatal(errNoBwrap)
	}
	// nsproto's side is a pair for the table, never a reason to fail:
	// what stopped it becomes its row.
	done, protoErr := concurrentNsproto(b, n)
	if done {
		return
	}
	d := newDirs(b)
	var jail, proto, peer batchStats
	var ratios []float64
	sides := []func() error{
		func() error { return jail.run(func() (batch, error) { return jailBatch(d, n) }) },
		func() error {
			if protoErr == nil {
				protoErr = proto.run(func() (batch, error) { return peerBatch(n, "nsproto", nsprotoSleep) })
			}
			return nil
		},
		func() error {
			return peer.run(func() (batch, error) { return peerBatch(n, "bwrap", bwrapSleep(bwrap)) })
		},
	}
	for i := range b.N {
		order := slices.Clone(sides)
		if i%2 == 1 {
			slices.Reverse(order)
		}
		for _, run := range order {
			if err := run(); err != nil {
				b.Fatal(err)
			}
		}
		if protoErr == nil {
			ratios = append(ratios, ms(jail.walls[i])/ms(proto.walls[i]))
		}
	}
	jail.report(b, "jail")
	peer.report(b, "bwrap")
	reportMetric(b, jail.meanWall()/peer.meanWall(), "wall-x-bwrap")
	if protoErr == nil {
		proto.report(b, "nsproto")
		reportMetric(b, median(ratios), "wall-x-nsproto")
	}
	pairLines[concurrentRow(n)] = concurrentLine(n, jail, proto, ratios, b.N, protoErr)
}

// sleepMarker is a `sleep` argument of about 0.5 s that is unique to one
// batch, so the host's process table can be searched for leftovers: GNU
// sleep reads fractional seconds.
func sleepMarker() string {
	return fmt.Sprintf("0.50000%09d", time.Now().UnixNano()%1e9)
}

// batch is the outcome of n runs started at once.
type batch struct {
	Wall      time.Duration
	Latencies []time.Duration
}

// launch runs start(0..n-1) at the same moment (as far as fork allows: Go
// serialises forks), each followed by the wait it returns, and times each
// run and the whole. The first failure is returned after all have ended.
func launch(n int, start func(i int) (wait func() error, err error)) (batch, error) {
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		first error
		bt    = batch{Latencies: make([]time.Duration, n)}
		gate  = make(chan struct{})
	)
	fail := func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if first == nil {
			first = err
		}
	}
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			t := time.Now()
			wait, err := start(i)
			if err == nil {
				err = wait()
			}
			bt.Latencies[i] = time.Since(t)
			if err != nil {
				fail(err)
			}
		}()
	}
	t := time.Now()
	close(gate)
	wg.Wait()
	bt.Wall = time.Since(t)
	return bt, first
}

func jailBatch(d dirs, n int) (batch, error) {
	marker := sleepMarker()
	return jailsAtOnce(d, n, marker, "/usr/bin/sleep", marker)
}

// jailsAtOnce runs n jails of command at once and fails on a leak: a run
// directory, a leaf of ours, and with marker, a process that carries it.
func jailsAtOnce(d dirs, n int, marker string, command ...string) (batch, error) {
	before, err := snapshot(d.TmpRoot)
	if err != nil {
		return batch{}, err
	}
	bt, err := launch(n, func(i int) (func() error, error) {
		j := newJailCmd(d, newID(batchIDPrefix()), nil, command...)
		if err := j.Cmd.Start(); err != nil {
			return nil, fmt.Errorf("start jail %s: %w", j.ID, err)
		}
		return func() error {
			_, err := j.Finish(j.Cmd.Wait(), "")
			return err
		}, nil
	})
	if err != nil {
		return bt, fmt.Errorf("%d jails at once: %w", n, err)
	}
	// Every supervisor has been waited for, and a supervisor returns only
	// after its init, whose exit (PID 1 of its namespace) the kernel
	// completes only once every process of the namespace is gone: nothing
	// may carry the marker any more.
	after, err := snapshot(d.TmpRoot)
	if err != nil {
		return bt, err
	}
	left := leaks(ownLeaves(before), ownLeaves(after))
	if marker != "" {
		if pids := testutil.ProcessesWith(marker); len(pids) > 0 {
			left = append(left, fmt.Sprintf("processes still running with marker %s: pids %v", marker, pids))
		}
	}
	if len(left) > 0 {
		return bt, fmt.Errorf("%d jails at once leaked:\n%s", n, joinLines(left))
	}
	return bt, nil
}

// batchIDPrefix starts the IDs of this process's concurrent runs. Other
// benchmarks and tests on the machine make and remove scidex-* leaves in
// the same cgroups meanwhile; only leaves named after our own IDs
// (scidex-<ID>-<hex>) can be our leaks.
func batchIDPrefix() string { return fmt.Sprintf("c%d", os.Getpid()) }

// ownLeaves is s with only the cgroup leaves of this process's runs.
func ownLeaves(s hostState) hostState {
	own := "scidex-" + batchIDPrefix() + "-"
	s.Cgroups = slices.DeleteFunc(slices.Clone(s.Cgroups), func(c string) bool {
		return !strings.HasPrefix(filepath.Base(c), own)
	})
	return s
}

// peerBatch starts n of mk's sandboxes of `sleep 0.5` at once and checks
// that each succeeded and none is left running.
func peerBatch(n int, who string, mk func(marker string) *exec.Cmd) (batch, error) {
	marker := sleepMarker()
	bt, err := launch(n, func(i int) (func() error, error) {
		c := mk(marker)
		var stderr bytes.Buffer
		c.Stderr = &stderr
		if err := c.Start(); err != nil {
			return nil, fmt.Errorf("start %s: %w", who, err)
		}
		return func() error {
			if err := c.Wait(); err != nil {
				return fmt.Errorf("%s sleep: %w: %s", who, err, stderr.String())
			}
			return nil
		}, nil
	})
	if err != nil {
		return bt, fmt.Errorf("%d %ss at once: %w", n, who, err)
	}
	if pids := testutil.ProcessesWith(marker); len(pids) > 0 {
		return bt, fmt.Errorf("%d %ss at once: processes still running with marker %s: pids %v", n, who, marker, pids)
	}
	return bt, nil
}

func bwrapSleep(bwrap string) func(marker string) *exec.Cmd {
	return func(marker string) *exec.Cmd { return exec.Command(bwrap, bwrapArgs("/usr/bin/sleep", marker)...) }
}

// batchStats pools the batches of all ops.
type batchStats struct {
	walls     []time.Duration
	latencies []time.Duration
}

func (s *batchStats) add(b batch) {
	s.walls = append(s.walls, b.Wall)
	s.latencies = append(s.latencies, b.Latencies...)
}

// run runs one batch and adds it.
func (s *batchStats) run(batchFn func() (batch, error)) error {
	bt, err := batchFn()
	if err != nil {
		return err
	}
	s.add(bt)
	return nil
}

func (s *batchStats) meanWall() float64 {
	var sum time.Duration
	for _, w := range s.walls {
		sum += w
	}
	return ms(sum) / float64(len(s.walls))
}

func (s *batchStats) report(b *testing.B, who string) {
	reportMetric(b, s.meanWall(), who+"-wall-ms/op")
	reportMetric(b, ms(percentile(s.latencies, 50)), who+"-p50-ms")
	reportMetric(b, ms(percentile(s.latencies, 95)), who+"-p95-ms")
}

// percentile is the nearest-rank percentile p (0 < p <= 100) of ds; 0 for
// none.
func percentile(ds []time.Duration, p int) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := (p*len(s) + 99) / 100 // ceil(p/100 * n)
	if rank < 1 {
		rank = 1
	}
	return s[rank-1]
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func joinLines(ss []string) string {
	out := ""
	for _, s := range ss {
		out += "  " + s + "\n"
	}
	return out
}
