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
	"github.com/scidex/scidex-jail/jail/netmode"
	"github.com/scidex/scidex-jail/jail/option"
	"github.com/scidex/scidex-jail/jail/relay"
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
// returns (jail/relay).
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
	// Begin, if set, is called once before the run makes anything of its
	// own (its slot, leaf, run directory, init: start), and returns when
	// it may: a server writes the run's accepted reply there (or waits
	// for its write), which tells the client that before it nothing of
	// the run existed. The run's checks and plan come before it.
	Begin func()
	// Served is the server's admission figures for the report; nil: none.
	Served *report.Served

	// later: the run's cleanup follows its report (RunServed).
	later bool
	// leaseAtStart: the run's ids were planned with a placeholder
	// (planIDs) and are leased at its start when it takes no slot.
	leaseAtStart bool
}

// RunWith is Run with opts.
func RunWith(given *jail.Spec, opts Options) (*report.Report, error) {
	opts.later = false
	rep, _, err := runWith(given, opts)
	return rep, err
}

// runWith is RunWith, and RunServed when opts.later: then the cleanup
// of a run whose analysis ended is returned, not done (nil: it was done).
func runWith(given *jail.Spec, opts Options) (*report.Report, *Cleanup, error) {
	t0 := time.Now()
	if opts.Stdio != nil && len(opts.Stdio) != 3 {
		return nil, nil, fmt.Errorf("bug: %d stdio files, want 3", len(opts.Stdio))
	}
	s, err := given.Validate()
	if err != nil {
		return nil, nil, err
	}
	// The report's file is made first: the check that it can be written.
	var rf *runfiles.ReportFile
	if s.Report != "" {
		if rf, err = runfiles.OpenReport(s.Report, given.From.Name(option.Report), given.Report); err != nil {
			return nil, nil, err
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
	var lease *uidlease.Lease
	if leasesAtStart(opts) {
		opts.leaseAtStart = planIDs(s) // uids.go: leased once no slot is taken (start)
	} else if lease, err = leaseIDs(s); err != nil {
		return nil, nil, err
	}
	clock := newPhaseTimer(t0, s.Started, opts.Accepted)
	rep, held, later, err := run(s, opts, clock, sigs, lease)
	if err == nil {
		deliverReport(rep, clock, rf)
	}
	if later != nil {
		// The lease goes with the cleanup, released at its end.
		later.lease = held
		return rep, later, nil
	}
	// Released last: the run's processes are dead and its files removed
	// (or left for gc, owned by an id no later run can be given while
	// this one holds it).
	held.Release()
	return rep, nil, err
}

// supervisor is one run in the parent: what every step consults, fixed
// before the first (the spec, its plan, the caller's options), and the
// owners of what lasts the whole run, each with its own file: the phase
// timer (clock.go), the signal and timeout machine (signals.go) and the
// warnings, in order. What the steps make is not here: each returns it,
// and run holds it (carried), to be cleaned up and reported (finish.go,
// assemble.go).
type supervisor struct {
	spec     *jail.Resolved // for the report (runFacts): the steps consult only the plan
	plan     *jail.Plan
	opts     Options
	clock    *phaseTimer
	sig      *signalMachine
	warnings []string // the steps' warnings, in order, until the cleanup
	// hook is the network mode's supervisor-side session (hook.go), from
	// before the init starts to after it is gone; nil: none.
	hook netmode.Session
}

// run is a run in order, each step a call that returns what it made. The
// whole run is decided before anything exists (decide); it is then
// carried out (execute: relay, init, run directory, configure, wait,
// post-run), cleaned up, and reported. A run the host cannot hold, or a
// cancel before anything exists, ends with a report and nothing made. It
// returns the lease the run holds at its end (its own, or its slot's),
// and the cleanup left for after the report (nil: it was done).
func run(s *jail.Resolved, opts Options, clock *phaseTimer, sigs <-chan os.Signal, lease *uidlease.Lease) (*report.Report, *uidlease.Lease, *Cleanup, error) {
	clock.lap("validate")
	plan, warnings, fail, err := decide(s)
	if err != nil {
		return nil, lease, nil, err
	}
	clock.lap("policy")
	sv := &supervisor{spec: s, plan: plan, opts: opts, clock: clock, sig: &signalMachine{c: sigs, grace: plan.Run.Grace}, warnings: warnings}
	c := carried{fail: fail, lease: lease}
	if fail == nil && !sv.sig.poll() {
		if c, err = sv.execute(lease); err != nil {
			c.relay.Drain()
			sv.stopHook()
			return nil, c.lease, nil, err
		}
	}
	if c.later {
		facts := sv.finishFirst(c)
		facts.phases = clock.phases
		return assembleReport(facts), c.lease, sv.cleanupLater(c), nil
	}
	facts := sv.finish(c)
	clock.lap("cleanup")
	facts.phases = clock.phases
	return assembleReport(facts), c.lease, nil, nil
}

// decide builds the plan; a plan the host cannot hold (a promise short of
// layers) is the run's setup failure.
func decide(s *jail.Resolved) (*jail.Plan, []string, *setupFailure, error) {
	plan, warnings, err := jail.BuildPlan(s, jail.LookHost(&s.Spec))
	var pe *jail.PlanError
	if err != nil && !errors.As(err, &pe) {
		return nil, nil, nil, fmt.Errorf("bug: BuildPlan returned %w, want a *PlanError", err)
	}
	if pe != nil {
		return plan, warnings, failAt(pe.Stage, pe), nil
	}
	return plan, warnings, nil, nil
}

// carried is what carrying out the plan made and saw, each step's product
// as the step returned it: finish removes what was made and gathers the
// run's facts from it.
type carried struct {
	fail  *setupFailure   // the step that failed, in the supervisor or the init
	lease *uidlease.Lease // the run's host ids when leased (uids.go): its own, or its slot's; nil: fixed or rootless
	relay *relay.Relay    // the caller's stdout and stderr but terminals (jail/relay); nil: none
	// relayDecided: openRelay ran; before it, the report has no streams.
	relayDecided bool
	init         spawned       // the init and its leaf; no conn: none started
	dir          *runfiles.Dir // the run directory; nil: not made
	end          ending        // what the event loop saw
	out          *outputsRead  // what the post-run work read; nil: not read yet
	// later: the init was released once its run directory was read, and
	// not waited for: its exit and the cleanup follow the report
	// (RunServed).
	later bool
}

// spawned is the init a run started, or took with its slot, and the leaf
// it was born in.
type spawned struct {
	conn    *initconn.Conn       // nil: no init (a failure or a cancel came first)
	leaf    *cgroupfs.Leaf       // nil: none (the layer disabled by name)
	cgroup  *report.CgroupReport // the leaf as made, for the report
	spawner *initconn.Spawner    // cgroup v1: the thread the init was forked from, in the leaf
	base    *cgroupfs.Usage      // a slot's leaf: its usage when the run took it, taken off the run's
	slot    *Slot                // the slot the run took; nil: a cold start
	anchor  *runfiles.Anchor     // the slot's run directory made ahead; nil: none, or claimed
}

// execute carries out the plan, stopping at the first step that fails or
// at a cancel between steps. The init is started as early as it can be,
// right after its leaf exists, and born in it (cgroup v2:
// CLONE_INTO_CGROUP; v1: forked by a thread that moved itself into the
// leaf): its exec and Go runtime's start then overlap with the sweep and
// the run directory. An error means the run could not begin (the ID is in
// use): nothing is left.
func (sv *supervisor) execute(lease *uidlease.Lease) (carried, error) {
	c := carried{lease: lease}
	if c.relay, c.fail = sv.openRelay(); c.fail != nil {
		return c, nil
	}
	c.relayDecided = true
	if c.fail = sv.startHook(); c.fail != nil {
		return c, nil
	}
	var err error
	if c.init, c.lease, c.fail, err = sv.start(c.relay, lease); err != nil || c.fail != nil || c.init.conn == nil {
		return c, err
	}
	if c.dir, c.fail, err = sv.makeRunDir(c.init); c.fail != nil || err != nil {
		return c, err
	}
	if c.fail = sv.configure(c.init, c.relay); c.fail != nil || sv.sig.Cancelled {
		return c, nil
	}
	c.end = sv.wait(c.init.conn)
	c.out = sv.readInPlace(&c.end, c.init.conn, c.dir)
	if c.later = c.out != nil && sv.opts.later; c.later {
		// The target has ended and its tree is reaped: no kill is due.
		sv.sig.disarm()
		return c, nil
	}
	sv.hangUp(c.init.conn)
	return c, nil
}

// start takes a slot prepared ahead when one fits, or makes the leaf and
// spawns the init into it. It returns the init and the lease the run
// holds from then on. No init (no conn) and no failure: a cancel came
// first. An error: the run's ids could not be leased (a served run's are
// leased here, when no slot is taken): nothing of the run exists.
func (sv *supervisor) start(r *relay.Relay, lease *uidlease.Lease) (spawned, *uidlease.Lease, *setupFailure, error) {
	if sv.opts.Begin != nil {
		if sv.opts.Begin(); sv.sig.poll() {
			return spawned{}, lease, nil, nil // cancelled (a client dropped at the accepted reply's write): nothing made
		}
	}
	prog, err := initconn.Open()
	if err != nil {
		return spawned{}, lease, failAt(protocol.StageInit, err), nil
	}
	defer prog.Close()
	if in, held, ok := sv.takeSlot(prog, lease); ok {
		return in, held, nil, nil
	}
	if sv.opts.leaseAtStart {
		if lease, err = leaseFor(sv.spec); err != nil {
			return spawned{}, nil, nil, err
		}
		sv.plan.RebindIDs(lease.ID())
	}
	var in spawned
	var fail *setupFailure
	if in.leaf, in.cgroup, fail = sv.create(); fail != nil || sv.sig.poll() {
		return in, lease, fail, nil
	}
	in.conn, in.spawner, fail = sv.spawn(prog, in.leaf, r)
	return in, lease, fail, nil
}

// readInPlace reads the outputs through the init's root, if it reported
// the target's end: it waits, with the namespace emptied, until the run
// directory is read there (for a tmpfs, the only place it exists); then
// it may go. nil: the init ended without that report.
func (sv *supervisor) readInPlace(e *ending, conn *initconn.Conn, dir *runfiles.Dir) *outputsRead {
	if e.exited == nil {
		return nil
	}
	out := sv.postRun(fmt.Sprintf("/proc/%d/root%s", conn.Pid(), dir.Path()), e.started != nil)
	sv.clock.lap("outputs")
	sv.sig.awaitCompanion(e.exited)
	if sv.opts.later {
		// Its release, its exit and the kernel's teardown are the
		// cleanup's, after the report (later.go).
		return &out
	}
	sv.release(e, conn)
	return &out
}

// hangUp ends the supervisor's hold on an init that has ended: no kill
// of the tree is due, and the socket is closed.
func (sv *supervisor) hangUp(conn *initconn.Conn) {
	sv.sig.disarm()
	conn.Close()
}
