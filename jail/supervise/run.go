package supervise

import (
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail"
	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/runfiles"
	"github.com/scidex/scidex-jail/jail/uidlease"
)

// Run runs the spec to completion and returns its report, which it also
// writes to s.Report when set. The error is non-nil only when the run could
// not begin at all (bad input, the ID in use): then nothing was created and
// there is no report.
//
// sigs carries the signals the jail receives: the caller registers it with
// signal.Notify for SIGTERM, SIGINT, SIGHUP (which cancel the run) and
// SIGQUIT, SIGUSR1, SIGUSR2 (passed to the analysis), as early as it can,
// so that a cancel that arrives while it is still parsing flags is kept
// and ends the run here. With nil, Run registers its own.
//
// The analysis inherits the caller's fds 0, 1 and 2, which must be open (the
// command line reopens closed ones on /dev/null before anything else, so no
// file of the jail's can take their numbers); a stdout or stderr that is a
// file reaches it as a pipe the jail copies into it, drained before Run
// returns (relay.go).
func Run(given *jail.Spec, sigs <-chan os.Signal) (*report.Report, error) {
	return RunWith(given, Options{Signals: sigs})
}

// Options are what a run takes besides its spec, for a caller that is not
// the command line's one run per process (scidex-jail serve).
type Options struct {
	// Signals: as Run's sigs; nil: Run registers its own.
	Signals <-chan os.Signal
	// Stdio is the analysis' stdin, stdout and stderr; nil: the
	// process's own 0, 1 and 2. A stdout or stderr that is a file is
	// relayed, as Run's own are.
	Stdio []*os.File
	// Slots may hand the run a slot prepared ahead; nil: a cold start.
	Slots Slots
	// Running, if set, is called with true when the target has started
	// and with false when it has ended (the supervisor's work after it
	// follows): a server keeps its own work off a run's start and end.
	Running func(bool)
	// Accepted, for a server, is when the run's request was accepted:
	// the report's queued phase runs from it to RunWith's call (the wait
	// for a place), its startup phase from Spec.Started to it. Zero: no
	// queued phase.
	Accepted time.Time
	// Served is the server's admission figures for the report; nil: none.
	Served *report.Served
}

// RunWith is Run with opts.
func RunWith(given *jail.Spec, opts Options) (*report.Report, error) {
	t0 := time.Now()
	if opts.Stdio != nil && len(opts.Stdio) != 3 {
		return nil, fmt.Errorf("bug: %d stdio files, want 3", len(opts.Stdio))
	}
	s, err := given.Validate()
	if err != nil {
		return nil, err
	}
	// The report's file is made first: the check that it can be written.
	var rf *runfiles.ReportFile
	if s.Report != "" {
		if rf, err = runfiles.OpenReport(s.Report, given.Report); err != nil {
			return nil, err
		}
		defer rf.Close()
	}
	sigs := opts.Signals
	if sigs == nil {
		c := make(chan os.Signal, 8)
		signal.Notify(c, protocol.Forwarded...)
		defer signal.Stop(c)
		sigs = c
	}
	lease, err := leaseIDs(s) // uids.go
	if err != nil {
		return nil, err
	}
	sv := &supervisor{spec: s, opts: opts, clock: newPhaseTimer(t0, s.Started, opts.Accepted), sig: &signalMachine{c: sigs}, report: rf, lease: lease}
	// Released last: the run's processes are dead and its files removed
	// (or left for gc, owned by an id no later run can be given while
	// this one holds it).
	defer func() { sv.lease.Release() }()
	return sv.run()
}

// supervisor is one run in the parent. Its state is in small owners, each
// with its own file: the phase timer (clock.go), the signal and timeout
// machine (signals.go), the init connection (jail/initconn) and the run's
// resources (below); every step's result is a value, gathered into the
// report at the end (finish.go, assemble.go).
type supervisor struct {
	spec     *jail.Resolved // for the plan and the report: the steps consult only the plan
	opts     Options
	plan     *jail.Plan
	slot     *Slot // the slot the run took; nil: a cold start
	clock    *phaseTimer
	sig      *signalMachine
	conn     *initconn.Conn // nil until the init is started
	res      resources
	warnings []string             // the steps' warnings, in order, until the cleanup
	report   *runfiles.ReportFile // where the report goes (nil: nowhere)
	lease    *uidlease.Lease      // the run's host ids when leased (uids.go); nil: fixed or rootless
	relay    *relay               // the caller's stdout and stderr but terminals (relay.go); nil: none
	// relayDecided: openRelay ran; before it, the report has no streams.
	relayDecided bool
}

// resources are what the run made on the host, which the cleanup removes.
type resources struct {
	leaf    *cgroupfs.Leaf
	cgroup  *report.CgroupReport // the leaf as made, for the report
	spawner *initconn.Spawner    // cgroup v1: the thread the init was forked from, in the leaf
	dir     *runfiles.Dir
	base    *cgroupfs.Usage // a slot's leaf: its usage when the run took it, taken off the run's
}

// run is a run in order, each step a call. The whole run is decided
// before anything exists (decide); it is then carried out (execute:
// create, spawn, run directory, configure, wait, post-run), cleaned up,
// and reported. A run the host cannot hold, or a cancel before anything
// exists, ends with a report and nothing made.
func (sv *supervisor) run() (*report.Report, error) {
	sv.clock.lap("validate")
	fail, err := sv.decide()
	if err != nil {
		return nil, err
	}
	sv.clock.lap("policy")
	var c carried
	if fail == nil && !sv.sig.poll() {
		if c, err = sv.execute(); err != nil {
			sv.relay.drain()
			return nil, err
		}
	} else {
		c.fail = fail
	}
	facts := sv.finish(c)
	sv.clock.lap("cleanup")
	facts.phases = sv.clock.phases
	rep := assembleReport(facts)
	deliverReport(rep, sv.clock, sv.report)
	return rep, nil
}

// decide builds the plan; a plan the host cannot hold (a promise short of
// layers) is the run's setup failure.
func (sv *supervisor) decide() (*setupFailure, error) {
	plan, warnings, err := jail.BuildPlan(sv.spec, jail.LookHost(&sv.spec.Spec))
	var pe *jail.PlanError
	if err != nil && !errors.As(err, &pe) {
		return nil, fmt.Errorf("bug: BuildPlan returned %w, want a *PlanError", err)
	}
	sv.plan, sv.sig.grace = plan, plan.Run.Grace
	sv.warnings = append(sv.warnings, warnings...)
	if pe != nil {
		return failAt(pe.Stage, pe), nil
	}
	return nil, nil
}

// carried is what carrying out the plan gave.
type carried struct {
	fail *setupFailure // the step that failed, in the supervisor or the init
	end  ending        // what the event loop saw
	out  *outputsRead  // what the post-run work read; nil: not read yet
}

// execute carries out the plan, stopping at the first step that fails or
// at a cancel between steps. The init is started as early as it can be,
// right after its leaf exists, and born in it (cgroup v2:
// CLONE_INTO_CGROUP; v1: forked by a thread that moved itself into the
// leaf): its exec and Go runtime's start then overlap with the sweep and
// the run directory. An error means the run could not begin (the ID is in
// use): nothing is left.
func (sv *supervisor) execute() (carried, error) {
	var c carried
	if c.fail = sv.openRelay(); c.fail != nil {
		return c, nil
	}
	if c.fail = sv.start(); c.fail != nil || sv.conn == nil {
		return c, nil
	}
	var err error
	if c.fail, err = sv.makeRunDir(); c.fail != nil || err != nil {
		return c, err
	}
	if c.fail = sv.configure(); c.fail != nil || sv.sig.Cancelled {
		return c, nil
	}
	c.end = sv.wait()
	c.out = sv.readInPlace(&c.end)
	sv.hangUp()
	return c, nil
}

// start takes a slot prepared ahead when one fits, or makes the leaf and
// spawns the init into it. No init (sv.conn nil) and no failure: a cancel
// came first.
func (sv *supervisor) start() *setupFailure {
	prog, err := initconn.Open()
	if err != nil {
		return failAt(protocol.StageInit, err)
	}
	defer prog.Close()
	if sv.takeSlot(prog) {
		return nil
	}
	if fail := sv.create(); fail != nil || sv.sig.poll() {
		return fail
	}
	return sv.spawn(prog)
}

// readInPlace reads the outputs through the init's root, if it reported
// the target's end: it waits, with the namespace emptied, until the run
// directory is read there (for a tmpfs, the only place it exists); then
// it may go. nil: the init ended without that report.
func (sv *supervisor) readInPlace(e *ending) *outputsRead {
	if e.exited == nil {
		return nil
	}
	out := sv.postRun(fmt.Sprintf("/proc/%d/root%s", sv.conn.Pid(), sv.res.dir.Path()), e.started != nil)
	sv.clock.lap("outputs")
	sv.sig.awaitCompanion(e.exited)
	sv.release(e)
	return &out
}

// hangUp ends the supervisor's hold on an init that has ended: no kill
// of the tree is due, and the socket is closed.
func (sv *supervisor) hangUp() {
	sv.sig.disarm()
	sv.conn.Close()
}
