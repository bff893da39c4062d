package supervise

import (
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/relay"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
)

// runFacts is everything a run's report is made of, gathered as values by
// its steps: assembleReport builds the report from it alone.
type runFacts struct {
	spec     *jail.Resolved
	t0       time.Time // Run's start: the report's started_at
	plan     *jail.Plan
	fail     *setupFailure // the supervisor's setup step that failed (the init's is in end)
	end      ending        // what the event loop saw
	sigs     signalFacts
	out      outputsRead
	cgroup   *report.CgroupReport // the leaf, with its usage; nil: none was made
	usage    *cgroupfs.Usage
	init     initconn.End
	wall     float64 // the target's wall time, in seconds
	warnings []string
	// stdioLost: what of the analysis' relayed stdout or stderr did not
	// reach the caller (jail/relay), a delivery failure each.
	stdioLost []string
	stdio     relay.Facts // what became of the streams (jail/relay)
	// stdioDecided: the relay step ran (the streams were decided); a
	// report of a run that failed before has no streams.
	stdioDecided bool
	phases       []report.Phase
	hook         netmode.Stopped // the network mode's hook's notes and log (hook.go)
	start        string          // serve's runs: "slot" or "cold"
	cleanup      string          // report.CleanupAfterReply: the cleanup follows the report (RunServed)
	served       *report.Served  // serve's runs: the admission figures
}

// failure is the run's setup failure, in the supervisor or the init: only
// one of them can fail, since the init's setup runs once the supervisor's
// is done.
func (f *runFacts) failure() *setupFailure {
	if f.fail != nil {
		return f.fail
	}
	return f.end.failure
}

// finish ends a run that has a report: it reads the outputs if the
// post-run work did not get to them (salvage), removes the cgroup leaf and
// the run directory, and gathers the run's facts. It runs on every path
// out of Run that has a report (the run directory may not exist: a cancel
// before it was made).
func (sv *supervisor) finish(c carried) runFacts {
	out := sv.salvage(c)
	usage, warnings := sv.cleanup(c.init, c.dir, true)
	return sv.facts(c, out, usage, warnings)
}

// facts gathers the run's facts from what it made and saw, the outputs
// as read (out), the leaf's usage and the cleanup's warnings, once the
// run's processes are gone.
func (sv *supervisor) facts(c carried, out outputsRead, usage *cgroupfs.Usage, warnings []string) runFacts {
	f := runFacts{spec: sv.spec, t0: sv.clock.t0, plan: sv.plan, fail: c.fail, end: c.end, out: out, usage: usage}
	// The run is over: its network mode's side stops here, before the
	// report, whenever the cleanup runs (after the reply, for a served
	// run: finishFirst); a process of the run still alive (killed by the
	// cleanup) only finds its sockets closed.
	f.hook = sv.stopHook()
	// The run's processes are gone: the relay has had the analysis' last
	// byte, or has it in its pipe. The report (and the summary line after
	// it) come after it reached the caller.
	f.stdioLost = c.relay.Drain()
	f.stdio, f.stdioDecided = c.relay.Facts(), c.relayDecided
	if f.usage != nil && c.init.base != nil {
		// A slot's leaf held its init before the run: the run's own
		// counters start where the slot's ended.
		u := f.usage.Since(*c.init.base)
		f.usage = &u
	}
	f.warnings = append(append(sv.warnings, f.out.warnings...), warnings...)
	if c.init.cgroup != nil {
		cg := *c.init.cgroup
		cg.Usage = reportUsage(f.usage)
		f.cgroup = &cg
	}
	f.init = c.init.conn.End()
	if m := c.end.exited; m != nil {
		// From the init's own clock: just before the exec to the
		// reaping. The supervisor learns of both ends late, by
		// different amounts under load.
		f.wall = float64(m.WallUsec) / 1e6
	} else if c.end.started != nil {
		// The init died before it could report: the supervisor's clock
		// is all there is.
		f.wall = time.Since(c.end.tStart).Seconds()
	}
	f.sigs = sv.sig.signalFacts
	f.served = sv.opts.Served
	if sv.opts.Slots != nil {
		f.start = "cold"
		if c.init.slot != nil {
			f.start = "slot"
		}
	}
	return f
}

// salvage is what was read of the outputs, read now if the post-run work
// did not get to them: a host run directory is read from the host; a
// tmpfs one is lost with the init that held it.
func (sv *supervisor) salvage(c carried) outputsRead {
	var out outputsRead
	if c.out != nil {
		out = *c.out
	}
	if out.done || c.dir == nil {
		return out
	}
	started := c.end.started != nil
	if sv.plan.Run.DiskBytes > 0 {
		if started {
			out.warnings = append(out.warnings, "the init was killed before the run directory could be read: its outputs (a tmpfs) are lost")
			out.deliveryErrs = append(out.deliveryErrs, outputsLost(&sv.plan.Run, "the init was killed before the run directory (a tmpfs) could be read")...)
		}
		return out
	}
	again := sv.postRun(c.dir.Path(), started)
	again.warnings = append(out.warnings, again.warnings...)
	again.deliveryErrs = append(out.deliveryErrs, again.deliveryErrs...)
	if again.collectedTo == "" {
		again.collectedTo = out.collectedTo
	}
	return again
}

// cleanup removes in's leaf (usage first, then whatever is left is
// killed), then the run directory dir (or keeps it). It returns the
// leaf's usage and the warnings, the run directory's keep first.
//
// Without readUsage the leaf's counters are not read (they were, for a
// report already sent: later.go).
func (sv *supervisor) cleanup(in spawned, dir *runfiles.Dir, readUsage bool) (*cgroupfs.Usage, []string) {
	usage, leafWarnings := closeLeaf(in.leaf, in.spawner, in.conn, readUsage)
	in.anchor.Discard() // a slot's run directory made ahead and never claimed (a failure: the next sweep's)
	var warnings []string
	var dirErr error
	switch {
	case dir == nil:
	case sv.plan.Run.Keep:
		if err := dir.Keep(); err != nil {
			warnings = append(warnings, err.Error())
		}
	default:
		dirErr = dir.Remove()
	}
	warnings = append(warnings, leafWarnings...)
	if dirErr != nil {
		warnings = append(warnings, dirErr.Error())
	}
	return usage, warnings
}
