package supervise

import (
	"time"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/report"
)

// ProcessStart is when the calling process started, as the kernel accounts
// for its main thread (protocol.ProcessStart): call it first thing in main
// and pass it to Run as Spec.Started, so that the report's startup phase
// covers the process's start, its runtime and the parsing of its flags.
func ProcessStart() time.Time { return protocol.ProcessStart() }

// phaseTimer times the run's phases: the supervisor's follow each other
// without a gap, from the process's start to the report, so that together
// they are its whole wall time; the init's are added as it reports them.
type phaseTimer struct {
	t0     time.Time // Run's start
	last   time.Time // the end of the last phase: the next one starts there
	phases []report.Phase
}

// newPhaseTimer starts at t0, with the startup phase before it when the
// caller gave the process's start, and the queued phase between them when
// the caller (a server) gave when the request was accepted: the wait for
// a place is never counted as startup.
func newPhaseTimer(t0, started, accepted time.Time) *phaseTimer {
	pt := &phaseTimer{t0: t0, last: t0, phases: []report.Phase{}}
	if started.IsZero() || !started.Before(t0) {
		return pt
	}
	queued := !accepted.IsZero() && !accepted.Before(started) && !accepted.After(t0) // else none given (or a bug's)
	if !queued {
		accepted = t0
	}
	// The process's start, its runtime's and the flags (a request's
	// parsing and admission for a server): before Run.
	pt.phases = append(pt.phases, report.Phase{Name: "startup", Where: "supervisor", Micros: accepted.Sub(started).Microseconds()})
	if queued {
		// Every served run has it, tens of microseconds (its goroutine's
		// start) when a place was free.
		pt.phases = append(pt.phases, report.Phase{Name: "queued", Where: "supervisor", Micros: t0.Sub(accepted).Microseconds()})
	}
	return pt
}

// lap ends the supervisor's current phase, named name.
func (pt *phaseTimer) lap(name string) {
	now := time.Now()
	pt.phases = append(pt.phases, report.Phase{Name: name, Where: "supervisor", Micros: now.Sub(pt.last).Microseconds()})
	pt.last = now
}

// add records phases of the init, which ran beside the supervisor's.
func (pt *phaseTimer) add(where string, ps ...protocol.Phase) {
	for _, p := range ps {
		pt.phases = append(pt.phases, report.Phase{Name: p.Name, Where: where, Micros: p.Micros})
	}
}
