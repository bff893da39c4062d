package bench

import (
	"sort"
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
	vs, _ := variants(features)
	for _, v := range vs {
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

// phaseSums adds up the report's phase timings over the runs. A phase that
// shows up more than once in a run (none does today) counts with its sum.
// Three more figures place the phases in the caller's wall time:
// "startup" is from our fork of the supervisor to its first clock reading
// (exec, Go runtime, flag parsing); "unphased" is the wall time neither in
// startup nor in a phase (the target itself, the init's exit and the
// namespaces' teardown, the supervisor's exit).
type phaseSums struct {
	runs  int
	total map[string]int64 // phase name -> µs over all runs
}

func (p *phaseSums) add(r *report, forked time.Time, wall time.Duration) {
	if p.total == nil {
		p.total = map[string]int64{}
	}
	p.runs++
	var phases int64
	for _, ph := range r.Phases {
		p.total[ph.Name] += ph.Micros
		phases += ph.Micros
	}
	startup := r.Started.Sub(forked).Microseconds()
	p.total["wall"] += wall.Microseconds()
	p.total["startup"] += startup
	p.total["phases-total"] += phases
	p.total["unphased"] += wall.Microseconds() - startup - phases
}

// means is each figure's mean in µs.
func (p *phaseSums) means() map[string]float64 {
	m := map[string]float64{}
	if p.runs == 0 {
		return m
	}
	for name, t := range p.total {
		m[name] = float64(t) / float64(p.runs)
	}
	return m
}

func (p *phaseSums) report(b *testing.B) {
	m := p.means()
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		b.ReportMetric(m[n], metricUnit(n, "us"))
	}
}

// metricUnit makes a phase name a benchmark unit: units may not hold
// spaces, and benchstat reads "-us/op" suffixes.
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
