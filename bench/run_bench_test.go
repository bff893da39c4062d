package bench

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

func BenchmarkRunTrue(b *testing.B) {
	benchRuns(b, "/usr/bin/true")
}

func BenchmarkRunPythonPass(b *testing.B) {
	benchRuns(b, "/usr/bin/python3", "-c", "pass")
}

// benchRuns times whole runs of command, one sub-benchmark per variant.
func benchRuns(b *testing.B, command ...string) {
	for _, v := range variants() {
		b.Run(v.Name, func(b *testing.B) {
			d := newDirs(b)
			// One run before the clock starts: the first exec of the
			// binary and of the target pays for the page cache.
			j := newJailCmd(d, newID("warm"), v.Args, command...)
			if _, err := j.Finish(j.Cmd.Run(), v.Layer); err != nil {
				b.Fatal(err)
			}
			var ph phaseSums
			b.ResetTimer()
			for range b.N {
				j := newJailCmd(d, "bench", v.Args, command...)
				t := time.Now()
				err := j.Cmd.Run()
				wall := time.Since(t)
				b.StopTimer()
				r, err := j.Finish(err, v.Layer)
				if err != nil {
					b.Fatal(err)
				}
				ph.add(r, t, wall)
				b.StartTimer()
			}
			ph.report(b)
		})
	}
}

// phaseSums collects the report's phase timings over the runs and prints
// their medians. The supervisor's phases follow each other without a gap
// from its process's start to its report file's rename, so their sum is
// its wall time but for the process's exit; "coverage" is that sum over the
// wall time we measured around the whole command (fork to reaped), in
// percent: the report accounts for the run when it is close to 100. The
// init's phases break down the supervisor's "init" span (they overlap
// "spawn", "config" and "go") and are not summed again.
type phaseSums struct {
	names []string             // in the order of the first report
	us    map[string][]float64 // "where/name" -> µs, one per run
}

func (p *phaseSums) add(r *report, _ time.Time, wall time.Duration) {
	if p.us == nil {
		p.us = map[string][]float64{}
	}
	var sum int64
	for _, ph := range r.Phases {
		k := ph.Where + "/" + ph.Name
		if _, ok := p.us[k]; !ok {
			p.names = append(p.names, k)
		}
		p.us[k] = append(p.us[k], float64(ph.Micros))
		if ph.Where == "supervisor" {
			sum += ph.Micros
		}
	}
	for k, v := range map[string]float64{"wall": float64(wall.Microseconds()), "supervisor-sum": float64(sum),
		"coverage": 100 * float64(sum) / float64(wall.Microseconds())} {
		p.us[k] = append(p.us[k], v)
	}
}

func (p *phaseSums) report(b *testing.B) {
	for _, k := range append(p.names, "supervisor-sum", "wall") {
		reportMetric(b, median(p.us[k]), metricUnit(k, "us"))
	}
	reportMetric(b, median(p.us["coverage"]), "coverage-%")
	if len(p.us["wall"]) > 1 {
		// Printed, not only reported: benchmark metrics come out on one
		// long line.
		var lines []string
		for _, k := range p.names {
			lines = append(lines, fmt.Sprintf("  %-24s %7.0f us", k, median(p.us[k])))
		}
		fmt.Fprintf(os.Stderr, "bench: %s, median per phase of %d runs:\n%s\n  %-24s %7.0f us\n  %-24s %7.0f us (coverage %.1f%%)\n",
			b.Name(), len(p.us["wall"]), strings.Join(lines, "\n"), "supervisor phases, sum", median(p.us["supervisor-sum"]),
			"wall, fork to reaped", median(p.us["wall"]), median(p.us["coverage"]))
	}
}

// metricUnit makes a phase name a benchmark unit: units may not hold
// spaces or slashes, and benchstat reads "-us/op" suffixes.
func metricUnit(name, unit string) string {
	out := []rune{}
	for _, r := range name {
		if r == ' ' || r == '\t' || r == '/' {
			r = '_'
		}
		out = append(out, r)
	}
	return string(out) + "-" + unit + "/op"
}
