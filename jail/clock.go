package jail

import (
	"os"
	"slices"
	"time"

	"github.com/scidex/scidex-jail/internal/taskstats"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
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

// settleStartup lets the startup phase run from the kernel's start of the
// process when it is known (created not zero), instead of Spec.Started's
// estimate.
func (sv *supervisor) settleStartup(created time.Time) {
	if created.IsZero() || !created.Before(sv.t0) {
		return
	}
	p := Phase{Name: "startup", Where: "supervisor", Micros: sv.t0.Sub(created).Microseconds()}
	if len(sv.rep.Phases) > 0 && sv.rep.Phases[0].Name == p.Name {
		sv.rep.Phases[0] = p
		return
	}
	sv.rep.Phases = slices.Insert(sv.rep.Phases, 0, p)
}
