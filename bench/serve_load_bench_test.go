package bench

import (
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// BenchmarkServeSequential: runs of /usr/bin/true back to back through one
// server, from a Python loop, against bwrap and the one-shot jail (`run`,
// no server) from the same loop, in chunks of 100 taking turns: runs per
// second of each, target served >= 1x bwrap's, and the CPU each side used
// per run (serve-cpu). Fails on a failed run or a leak.
func BenchmarkServeSequential(b *testing.B) {
	if _, err := exec.LookPath("bwrap"); err != nil {
		b.Fatal(errNoBwrap)
	}
	n := serveCount("SCIDEX_SERVE_SEQUENTIAL", 1000)
	once(b, func(report func(float64, string)) {
		dv := startDriver(b, serveConfig{Mode: "sequential", Command: []string{"/usr/bin/true"}, N: n, Chunk: 100})
		m, err := dv.finish()
		if err != nil {
			b.Fatal(err)
		}
		if m.ServedN != n || m.PeerN != n || m.OneshotN != n {
			b.Fatalf("%d served, %d bwrap and %d one-shot runs, want %d of each", m.ServedN, m.PeerN, m.OneshotN, n)
		}
		ra, rb := float64(n)/m.ServedSeconds, float64(n)/m.PeerSeconds
		report(ra, "a-runs/s")
		report(rb, "b-runs/s")
		report(ra/rb, "a/b")
		x := ra / rb
		v := fmt.Sprintf("target >= %.2f: %s", serveRateTarget, metOrNot(x >= serveRateTarget))
		rc := float64(n) / m.OneshotSeconds
		report(rc, "c-runs/s")
		serveLines["serve-vs-bwrap-seq"] = fmt.Sprintf("%-24s rate A %7.1f runs/s  B %7.1f runs/s  A/B %5.2f  %s  (%d runs of true each, back to back, chunks of 100 taking turns)",
			"serve-vs-bwrap-seq", ra, rb, x, v, n) +
			fmt.Sprintf("\nbench:   %-24s the one-shot jail (scidex-jail run, no server) in the same loop: %.1f runs/s", "", rc) +
			fmt.Sprintf("\nbench:   %-24s A: %s; nothing leaked", "", startsText(m.Starts, n)) +
			fmt.Sprintf("\nbench:   %-24s A's wall per run by its start: %s", "", startWallsText(m.StartWalls))
		c := m.CPU
		per := func(sec float64) float64 { return sec / float64(n) * 1e3 }
		perA, perB, perC := per(c.Server), per(c.Peer), per(c.Oneshot)
		report(perA, "a-cpu-ms/run")
		report(perB, "b-cpu-ms/run")
		report(perC, "c-cpu-ms/run")
		report(per(c.ServerOwn), "a-server-cpu-ms/run")
		report(per(c.ServerChildren), "a-children-cpu-ms/run")
		report(float64(m.Starts["cold"]), "a-cold-starts")
		serveLines["serve-cpu"] = fmt.Sprintf("%-24s CPU per run: served %6.2f ms (server, its slots' inits, the analysis)  B %6.2f ms (bwrap's tree)  A/B %5.2f  one-shot jail %6.2f ms (its tree)  (no target)",
			"serve-cpu", perA, perB, perA/perB, perC) +
			fmt.Sprintf("\nbench:   %-24s served, apart: the server's own %.2f ms (requests, the pool's refill, cleanups), its inits' and analyses' %.2f ms", "",
				per(c.ServerOwn), per(c.ServerChildren)) +
			fmt.Sprintf("\nbench:   %-24s the driver's own per run: %.2f ms through Server.run, %.2f ms per subprocess.run of bwrap; of the back-to-back runs above", "",
				per(c.ClientA), per(c.ClientB)) +
			fmt.Sprintf("\nbench:   %-24s the whole machine's per run (the kernel's workers too; a quiet machine's only): A %.2f ms  B %.2f ms", "",
				per(c.MachineA), per(c.MachineB))
	})
}

// startsText says how the served runs started: from a slot or cold.
func startsText(starts map[string]int, n int) string {
	return fmt.Sprintf("%d of %d from a slot, %d cold", starts["slot"], n, starts["cold"])
}

// startWallsText is the median wall of the runs of each start, slot
// first: a cold run builds at its request what a slot built ahead.
func startWallsText(walls map[string][]float64) string {
	var parts []string
	for _, k := range []string{"slot", "cold"} {
		if w := walls[k]; len(w) > 0 {
			parts = append(parts, fmt.Sprintf("%s %.2f ms (median of %d)", k, median(w)*1e3, len(w)))
		}
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}

// BenchmarkServeBurst: SCIDEX_SERVE_BURST requests of /usr/bin/true at once
// from as many Python threads through one server with --slots 8 ready
// (--max-runs and --queue the burst: the ones past the pool start cold),
// against as many `scidex-jail run` processes at once, in reversed order
// every other round (2 rounds). Every run must succeed and nothing may be
// left; the walls are printed, with no target.
func BenchmarkServeBurst(b *testing.B) {
	n := serveCount("SCIDEX_SERVE_BURST", 100)
	const rounds = 2
	once(b, func(report func(float64, string)) {
		dv := startDriver(b, serveConfig{Mode: "burst", Command: []string{"/usr/bin/true"}, N: n,
			Slots: serveSlots, MaxRuns: n, Queue: n, Rounds: rounds})
		var served, runs batchStats
		starts := map[string]int{}
		d := newDirs(b)
		jails := func() error {
			return runs.run(func() (batch, error) { return trueBatch(d, n) })
		}
		for i := range rounds {
			m, err := dv.next()
			if err != nil {
				b.Fatal(err)
			}
			if m.Event != "ready" {
				break // the driver failed: finish says why
			}
			if i%2 == 1 {
				if err := jails(); err != nil {
					b.Fatal(err)
				}
			}
			if err := dv.goAhead(); err != nil {
				b.Fatal(err)
			}
			if m, err = dv.next(); err != nil {
				b.Fatal(err)
			}
			if m.Event != "burst" {
				break
			}
			bt := batch{Wall: secs(m.Wall)}
			for _, l := range m.Latencies {
				bt.Latencies = append(bt.Latencies, secs(l))
			}
			served.add(bt)
			for k, v := range m.Starts {
				starts[k] += v
			}
			if m.Failed > 0 {
				break
			}
			if i%2 == 0 {
				if err := jails(); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := dv.finish(); err != nil {
			b.Fatal(err)
		}
		if len(served.walls) != rounds {
			b.Fatalf("%d bursts of %d, want %d", len(served.walls), n, rounds)
		}
		report(served.meanWall(), "a-wall-ms/op")
		report(ms(percentile(served.latencies, 50)), "a-p50-ms")
		report(ms(percentile(served.latencies, 99)), "a-p99-ms")
		report(runs.meanWall(), "b-wall-ms/op")
		report(ms(percentile(runs.latencies, 50)), "b-p50-ms")
		report(ms(percentile(runs.latencies, 99)), "b-p99-ms")
		serveLines["serve-burst"] = fmt.Sprintf("%-24s wall A %7.0f ms  B %7.0f ms  A/B %5.2f  no target (for reference)  (%d at once, medians of %d rounds)",
			fmt.Sprintf("serve-burst-%d", n), medianMs(served.walls), medianMs(runs.walls), medianMs(served.walls)/medianMs(runs.walls), n, rounds) +
			fmt.Sprintf("\nbench:   %-24s per run p50 A %.0f ms  B %.0f ms; p99 A %.0f ms  B %.0f ms", "",
				ms(percentile(served.latencies, 50)), ms(percentile(runs.latencies, 50)), ms(percentile(served.latencies, 99)), ms(percentile(runs.latencies, 99))) +
			fmt.Sprintf("\nbench:   %-24s A: Server(slots=8, max_runs=%d, queue=%d), %s; B: %d scidex-jail run; all ok, nothing leaked", "",
				n, n, startsText(starts, n*rounds), n)
	})
}

// trueBatch is n `scidex-jail run -- /usr/bin/true` at once, checked as
// jailBatch checks its own.
func trueBatch(d dirs, n int) (batch, error) { return jailsAtOnce(d, n, "", "/usr/bin/true") }

// BenchmarkServeIdle: the server idle with --slots 8 ready: the resident
// memory of the server and of each slot's init (VmRSS, RssAnon, Pss from
// /proc, as BenchmarkMemory reads them).
func BenchmarkServeIdle(b *testing.B) {
	once(b, func(report func(float64, string)) {
		dv := startDriver(b, serveConfig{Mode: "idle", Slots: serveSlots})
		m, err := dv.next()
		if err != nil {
			b.Fatal(err)
		}
		if m.Event != "ready" {
			_, err := dv.finish()
			b.Fatalf("the driver said %q before ready: %v", m.Event, err)
		}
		server, err := readStatus(m.Server)
		if err != nil {
			b.Fatal(err)
		}
		var inits []map[string]int64
		for _, pid := range m.Inits {
			s, err := readStatus(pid)
			if err != nil {
				b.Fatal(err)
			}
			inits = append(inits, s)
		}
		if err := dv.goAhead(); err != nil {
			b.Fatal(err)
		}
		if _, err := dv.finish(); err != nil {
			b.Fatal(err)
		}
		if len(inits) == 0 {
			b.Fatal(errors.New("no slot init to measure"))
		}
		mb := func(kb int64) float64 { return float64(kb) / 1024 }
		var per []string
		var sum float64
		for _, s := range inits {
			per = append(per, fmt.Sprintf("%.2f", mb(s["VmRSS"])))
			sum += mb(s["VmRSS"])
		}
		for _, f := range []string{"VmRSS", "RssAnon", "Pss"} {
			report(mb(server[f]), "server-"+f+"-MB")
			var tot int64
			for _, s := range inits {
				tot += s[f]
			}
			report(mb(tot)/float64(len(inits)), "slot-init-"+f+"-MB")
		}
		serveLines["serve-idle-memory"] = fmt.Sprintf("%-24s server VmRSS %.2f MB (RssAnon %.2f, Pss %.2f, %d threads); %d slot inits, VmRSS MB each: %s (mean %.2f; RssAnon %.2f, Pss %.2f)",
			"serve-idle-memory", mb(server["VmRSS"]), mb(server["RssAnon"]), mb(server["Pss"]), server["Threads"], len(inits), strings.Join(per, " "),
			sum/float64(len(inits)), meanKB(inits, "RssAnon")/1024, meanKB(inits, "Pss")/1024)
	})
}

func meanKB(ms []map[string]int64, f string) float64 {
	var t int64
	for _, m := range ms {
		t += m[f]
	}
	return float64(t) / float64(len(ms))
}

func TestServeLeaks(t *testing.T) {
	own := "scidex-" + batchIDPrefix() + "-1-ab12"
	before := hostState{Cgroups: []string{"/sys/fs/cgroup/cpu/scidex-slot-old"}}
	after := hostState{
		RunDirs: []string{"scidex-analysis-x"},
		Cgroups: []string{
			"/sys/fs/cgroup/cpu/scidex-slot-old",     // there before
			"/sys/fs/cgroup/cpu/scidex-slot-0123",    // named by the server: ours
			"/sys/fs/cgroup/cpu/scidex-slot-4567",    // another server's
			"/sys/fs/cgroup/pids/" + own,             // named after our runs
			"/sys/fs/cgroup/cpu/scidex-someone-else", // another process' run
		},
	}
	got := serveLeaks(before, after, []string{"scidex-slot-0123"})
	want := []string{
		"run directory left in the tmp-root: scidex-analysis-x",
		"cgroup left: /sys/fs/cgroup/cpu/scidex-slot-0123",
		"cgroup left: /sys/fs/cgroup/pids/" + own,
	}
	if !slices.Equal(got, want) {
		t.Errorf("serveLeaks = %q, want %q", got, want)
	}
}
