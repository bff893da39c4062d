package jail

import (
	"os"
	"slices"
	"time"

	"github.com/scidex/scidex-jail/internal/taskstats"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/report"
)

// ProcessStart is when the calling process started, as the kernel accounts
// for its main thread (protocol.ProcessStart): call it first thing in main
// and pass it to Run as Spec.Started, so that the report's startup phase
// covers the process's start, its runtime and the parsing of its flags.
func ProcessStart() time.Time { return protocol.ProcessStart() }

// processCreated is when the kernel created this process (its parent's
// fork), to the microsecond, from taskstats; the zero Time when the kernel
// does not say (the query is CAP_NET_ADMIN's only). Spec.Started
// (ProcessStart) is read first thing in main from the main thread's CPU
// time and run-queue delay, which leave out the time the process was
// blocked before main (0.3-0.7 ms of a run here: os/signal's start is a
// round trip to a thread per signal); this is the whole of it.
func processCreated() time.Time {
	t, err := taskstats.Created(os.Getpid())
	if err != nil {
		return time.Time{}
	}
	return t
}

// askCreated asks for the kernel's start of this process on another CPU,
// when the caller gave a start (Spec.Started): the report's startup phase
// then runs from it (settleStartup).
func askCreated(started time.Time) <-chan time.Time {
	created := make(chan time.Time, 1)
	if !started.IsZero() {
		go func() { created <- processCreated() }()
	} else {
		created <- time.Time{}
	}
	return created
}

// phaseTimer times the run's phases: the supervisor's follow each other
// without a gap, from the process's start to the report, so that together
// they are its whole wall time; the init's are added as it reports them.
type phaseTimer struct {
	t0     time.Time // Run's start
	last   time.Time // the end of the last phase: the next one starts there
	phases []report.Phase
}

// newPhaseTimer starts at t0, with the startup phase before it when the
// caller gave the process's start.
func newPhaseTimer(t0, started time.Time) *phaseTimer {
	pt := &phaseTimer{t0: t0, last: t0, phases: []report.Phase{}}
	if !started.IsZero() && started.Before(t0) {
		// The process's start, its runtime's and the flags: before Run.
		pt.phases = append(pt.phases, report.Phase{Name: "startup", Where: "supervisor", Micros: t0.Sub(started).Microseconds()})
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

// settleStartup lets the startup phase run from the kernel's start of the
// process when it is known (created not zero), instead of Spec.Started's
// estimate.
func (pt *phaseTimer) settleStartup(created time.Time) {
	if created.IsZero() || !created.Before(pt.t0) {
		return
	}
	p := report.Phase{Name: "startup", Where: "supervisor", Micros: pt.t0.Sub(created).Microseconds()}
	if len(pt.phases) > 0 && pt.phases[0].Name == p.Name {
		pt.phases[0] = p
		return
	}
	pt.phases = slices.Insert(pt.phases, 0, p)
}
