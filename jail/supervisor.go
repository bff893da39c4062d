package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// initCaps are what the init needs for its setup, in its own namespaces
// only: mounts, pivot_root and sethostname (SYS_ADMIN), the drop to the
// target's identity (SETUID, SETGID, SETPCAP for the bounding set), bringing
// up lo (NET_ADMIN).
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN}

// initEnv is the init's own environment (the target's is in its config).
// One P: the init does one thing at a time, and every thread it starts
// counts toward the run's PID limit and memory.
var initEnv = []string{"GOMAXPROCS=1"}

// hardKillDelay is how long the init gets to kill and reap the tree when
// asked, before it is killed itself (which loses a tmpfs run directory).
const hardKillDelay = 5 * time.Second

// supervisor is the state of one run in the parent.
type supervisor struct {
	spec     *Resolved
	rep      *Report
	dir      *runDir
	leaf     *cgroupfs.Leaf
	spawner  *spawner // cgroup v1: the thread the init was forked from, in the leaf
	usage    *cgroupfs.Usage
	initProg *initProgram // the init's file, opened once at the start
	init     *initChild
	sock     *os.File
	sockMu   sync.Mutex
	t0       time.Time
	tStart   time.Time // target started
	tRelease time.Time // the init was told it may exit
	last     time.Time // the end of the last phase: the next one starts there
	plan     *Plan

	msgs    chan protocol.InitMsg
	started bool
	exited  *protocol.InitMsg
	failed  *protocol.InitMsg

	outputsDone bool
	diskFull    bool
	over        *OverBudget // the first output budget the outputs went over

	deliveryErrs []string // outputs asked for (--collect, --keep) that could not be delivered

	sigs                <-chan os.Signal
	timedOut, cancelled bool
	cancelSig           syscall.Signal // the signal that cancelled the run
	postRunCancelled    bool           // cancelled after the analysis ended, during the post-run work
	cancelAt            time.Time      // when a cancel came while the analysis ran
	killTimer           *time.Timer
	pendingSig          syscall.Signal
	heldSigs            []os.Signal
	ended               atomic.Bool // the init reported the end; set before reading outputs
}

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
// file of the jail's can take their numbers).
func Run(given *Spec, sigs <-chan os.Signal) (*Report, error) {
	t0 := time.Now()
	s, err := given.Validate()
	if err != nil {
		return nil, err
	}
	if sigs == nil {
		c := make(chan os.Signal, 8)
		signal.Notify(c, protocol.Forwarded...)
		defer signal.Stop(c)
		sigs = c
	}
	// The kernel's start of this process, asked on the other CPU too: the
	// report's startup phase runs from it when the caller gave a start.
	created := make(chan time.Time, 1)
	if !s.Started.IsZero() {
		go func() { created <- processCreated() }()
	} else {
		created <- time.Time{}
	}
	sv := &supervisor{spec: s, t0: t0, last: t0, msgs: make(chan protocol.InitMsg, 16), sigs: sigs}
	sv.rep = newReport(&s.Spec, sv.t0)
	if !s.Started.IsZero() && s.Started.Before(t0) {
		// The process's start, its runtime's and the flags: before Run.
		sv.rep.Phases = append(sv.rep.Phases, Phase{Name: "startup", Where: "supervisor", Micros: t0.Sub(s.Started).Microseconds()})
	}
	sv.lap("validate")

	// The whole run is decided before anything exists: a run the host
	// cannot hold (a promise short of layers) ends here, with a report and
	// nothing made.
	plan, warnings, err := BuildPlan(&s.Spec, LookHost(&s.Spec))
	sv.plan = plan
	sv.rep.Warnings = append(sv.rep.Warnings, warnings...)
	sv.rep.Enforced.Promises, sv.rep.Enforced.Degraded = plan.Enforced.Promises, plan.Enforced.Degraded
	sv.rep.Enforced.Identity = plan.Enforced.Identity
	sv.lap("policy")
	var pe *PlanError
	switch {
	case errors.As(err, &pe):
		sv.setupFailed(pe.Stage, pe.Error(), protocol.ExitSetup)
	case err != nil:
		return nil, fmt.Errorf("bug: BuildPlan returned %w, want a *PlanError", err)
	case !sv.pollSignals():
		// A cancel before anything exists on disk ends the run with
		// nothing made; after that, one between the steps below ends it
		// at the next step, and cleanup runs as on every other path.
		if err := sv.execute(); err != nil {
			return nil, err
		}
	}
	sv.finish()
	sv.settleStartup(<-created)
	sv.deliverReport()
	return sv.rep, nil
}

// execute carries out the plan: the cgroup leaf, the init, the run
// directory, and the run itself. The init is started as early as it can
// be, right after its leaf exists, and born in it (cgroup v2:
// CLONE_INTO_CGROUP; v1: forked by a thread that moved itself into the
// leaf): its exec and Go runtime's start then overlap with the sweep and
// the run directory. An error means the run could not begin (the ID is in
// use): nothing is left.
func (sv *supervisor) execute() error {
	s := sv.spec
	prog, err := openInit()
	if err != nil {
		sv.setupFailed("init", err.Error(), protocol.ExitSetup)
		return nil
	}
	sv.initProg = prog
	defer prog.close()
	if err := sv.createLeaf(); err != nil {
		sv.setupFailed("cgroup", err.Error(), protocol.ExitSetup)
		return nil
	}
	sv.lap("cgroup")
	if sv.pollSignals() {
		return nil
	}
	if err := sv.startInit(); err != nil {
		stage := "spawn"
		if _, ok := err.(*enterError); ok {
			stage = "cgroup"
		}
		sv.setupFailed(stage, err.Error(), protocol.ExitSetup)
		return nil
	}
	sv.lap("spawn")
	sv.rep.Warnings = append(sv.rep.Warnings, sweepLeftovers(s.TmpRoot, reportDir(s.Report))...)
	sv.lap("sweep")
	dir, stale, err := createRunDir(s.TmpRoot, s.ID, s.HostUID, s.HostGID)
	if err != nil {
		// Nothing may be left: the init, never told anything, and the leaf.
		sv.abortInit()
		sv.closeLeaf()
		return err
	}
	sv.dir = dir
	if dir.path != sv.plan.Init.RunDir {
		sv.abortInit()
		sv.setupFailed("rundir", fmt.Sprintf("bug: run directory %s, planned %s", dir.path, sv.plan.Init.RunDir), protocol.ExitSetup)
		return nil
	}
	if stale {
		sv.rep.Warnings = append(sv.rep.Warnings, "removed a leftover run directory of a dead earlier run with this ID")
	}
	sv.lap("rundir")
	if stage, err := sv.configure(); err != nil {
		sv.setupFailed(stage, err.Error(), protocol.ExitSetup)
	} else if !sv.cancelled {
		sv.loop()
	}
	return nil
}

// configure sends the init its config and "go". A cancel that arrived
// meanwhile ends the init before "go", with no error.
func (sv *supervisor) configure() (string, error) {
	cfg, err := sv.withLimits(sv.plan.Init)
	if err != nil {
		sv.abortInit()
		return "meminfo", err
	}
	err = sv.send(cfg)
	sv.lap("config")
	if err != nil {
		// An init that is gone before reading its config: one that is
		// no init of ours says so first.
		if herr := sv.awaitHello(); herr != nil {
			err = herr
		}
		sv.abortInit()
		if _, ok := err.(*InitError); ok {
			return "init", err
		}
		return "spawn", fmt.Errorf("send config to init: %w", err)
	}
	if sv.pollSignals() {
		// Cancelled before "go": the target never starts.
		sv.abortInit()
		return "", nil
	}
	if err := sv.awaitHello(); err != nil {
		sv.abortInit()
		return "init", err
	}
	sv.lap("hello")
	if sv.cancelled {
		sv.abortInit()
		return "", nil
	}
	if err := sv.send(protocol.SupervisorMsg{Kind: protocol.KindGo}); err != nil {
		sv.abortInit()
		return "spawn", fmt.Errorf("send go to init: %w", err)
	}
	sv.lap("go")
	return "", nil
}

// awaitHello waits for the init's first message, its version, and checks
// it (checkHello): an init of another version never gets "go". A cancel
// meanwhile is taken (the caller ends the run); an init that neither
// speaks nor ends within initHelloTimeout is refused.
func (sv *supervisor) awaitHello() error {
	tm := time.NewTimer(initHelloTimeout)
	defer tm.Stop()
	for {
		select {
		case m, ok := <-sv.msgs:
			return checkHello(sv.initProg.path, m, ok)
		case s := <-sv.sigs:
			if sv.takeSignal(s) {
				return nil
			}
		case <-tm.C:
			return &InitError{Path: sv.initProg.path, Found: fmt.Sprintf("it did not state its version within %v", initHelloTimeout),
				Fix: "install the " + InitName + " of this build there"}
		}
	}
}

// lap ends the current phase of the supervisor: the supervisor's phases
// follow each other without a gap, from the process's start to the report,
// so that together they are its whole wall time.
func (sv *supervisor) lap(name string) {
	now := time.Now()
	sv.rep.Phases = append(sv.rep.Phases, Phase{Name: name, Where: "supervisor", Micros: now.Sub(sv.last).Microseconds()})
	sv.last = now
}

// startInit starts the init in its new namespaces, reading its end of the
// sync socket; it waits there for its config.
func (sv *supervisor) startInit() error {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "sync"), os.NewFile(uintptr(fds[1]), "sync-init")
	defer child.Close()
	sv.sock = parent

	if sv.leaf != nil && sv.leaf.Version() == 1 {
		sv.init, sv.spawner, err = startInitInLeaf(sv.leaf, sv.initProg, sv.sysProcAttr(), child)
	} else {
		sv.init, err = startInitChild(sv.initProg, sv.sysProcAttr(), child)
	}
	if err != nil {
		sv.sock.Close()
		sv.sock = nil
		if _, ok := err.(*enterError); ok {
			return err
		}
		return explainSpawnError(initExecError(sv.initProg.path, err))
	}
	go sv.readInit()
	return nil
}

func (sv *supervisor) send(v any) error {
	sv.sockMu.Lock()
	defer sv.sockMu.Unlock()
	return json.NewEncoder(sv.sock).Encode(v)
}

func (sv *supervisor) sysProcAttr() *syscall.SysProcAttr {
	attr := sv.plan.ProcAttr()
	if sv.leaf != nil {
		if fd, ok := sv.leaf.FD(); ok {
			// cgroup v2: born inside the leaf, never a moment unlimited.
			attr.UseCgroupFD, attr.CgroupFD = true, fd
		}
	}
	return attr
}

// ProcAttr is how the init is born for plan p: in its namespaces, with its
// ID mapping and the capabilities its setup needs (the cgroup fd is the
// supervisor's to add). check spawns its probe with it.
func (p *Plan) ProcAttr() *syscall.SysProcAttr {
	var flags uintptr
	for _, ns := range p.Namespaces {
		flags |= ns.Flag
	}
	ids := p.IDs
	attr := &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: ids.HostUID, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: ids.HostGID, Size: 1}},
		GidMappingsEnableSetgroups: ids.Setgroups,
		// The init runs as an unmapped uid until it drops to InsideUID:
		// an execve by a non-root uid would empty its capability sets, so
		// the ones setup needs cross the exec as ambient capabilities.
		// dropIdentity clears them all.
		AmbientCaps: initCaps,
		// Mapped from the start: files the init creates in its tmpfs need
		// a mapped owner (an unmapped one fails with EOVERFLOW).
		Credential: &syscall.Credential{Uid: InsideUID, Gid: InsideUID, NoSetGroups: !ids.Setgroups},
		// If the supervisor dies, even of SIGKILL, the kernel kills the
		// init, and with PID 1 gone, every process of its namespace.
		Pdeathsig: unix.SIGKILL,
		// Own process group: a terminal's Ctrl-C reaches the supervisor
		// only, which forwards it once.
		Setpgid: true,
	}
	return attr
}

func explainSpawnError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("start the init in new namespaces: %w; user namespaces may be disabled: check sysctl user.max_user_namespaces (must be > 0), kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04), or the container's seccomp profile", err)
	}
	return fmt.Errorf("start the init: %w", err)
}

// readInit turns the init's messages into events until the socket closes.
func (sv *supervisor) readInit() {
	defer close(sv.msgs)
	dec := json.NewDecoder(sv.sock)
	for {
		var m protocol.InitMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		sv.msgs <- m
	}
}

// loop waits for the init to finish while handling the timeout and signals.
func (sv *supervisor) loop() {
	waited := sv.init.done
	var timeout <-chan time.Time
	if sv.spec.Timeout > 0 {
		tm := time.NewTimer(sv.spec.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	msgs := sv.msgs
	done := false
	for !done || msgs != nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			sv.handle(m)
		case <-waited:
			done = true
			waited = nil
			if !sv.tRelease.IsZero() {
				// The init's exit and the kernel's teardown of its
				// namespaces and mounts.
				sv.lap("teardown")
			}
		case <-timeout:
			if sv.exited == nil && !sv.cancelled {
				sv.timedOut = true
				sv.stop(unix.SIGTERM)
			}
		case s := <-sv.sigs:
			if cancelSignals[s] && sv.exited == nil && !sv.timedOut {
				sv.cancelled = true
				if sv.cancelAt.IsZero() {
					sv.cancelAt = time.Now()
				}
				if sv.cancelSig == 0 {
					sv.cancelSig = s.(syscall.Signal)
				}
				sv.stop(s.(syscall.Signal))
				continue
			}
			if sv.started {
				sv.forward(s.(syscall.Signal))
			} else {
				// The target may already run while "started" is still
				// on its way: hold the signal until then.
				sv.heldSigs = append(sv.heldSigs, s)
			}
		}
	}
	if sv.killTimer != nil {
		sv.killTimer.Stop()
	}
	sv.sock.Close()
}

func (sv *supervisor) handle(m protocol.InitMsg) {
	switch m.Kind {
	case protocol.KindError:
		sv.initPhases(m.Phases)
		sv.failed = &m
	case protocol.KindStarted:
		sv.initPhases(m.Phases)
		sv.lap("init") // from "go" to the target's start, in the init
		sv.started = true
		sv.tStart = time.Now()
		sv.rep.Phases = append(sv.rep.Phases, Phase{Name: "exec", Where: "init", Micros: m.Micros})
		sv.recordEnforced(m.Enforced)
		for _, s := range sv.heldSigs {
			sv.forward(s.(syscall.Signal))
		}
		if sv.pendingSig != 0 {
			// A cancel or the timeout came during setup.
			sv.forward(sv.pendingSig)
		}
	case protocol.KindExited:
		sv.lap("analysis") // the target's run, as the supervisor saw it
		sv.exited = &m
		sv.ended.Store(true)
		if sv.killTimer != nil {
			sv.killTimer.Stop()
		}
		// From the init's own clock: just before the exec to the reaping.
		// The supervisor learns of both ends late, by different amounts
		// under load.
		sv.rep.WallSeconds = float64(m.WallUsec) / 1e6
		// The init waits, with the namespace emptied, until we have read
		// the run directory through its root; then it may go.
		sv.postRun(fmt.Sprintf("/proc/%d/root%s", sv.init.pid, sv.dir.path))
		sv.lap("outputs")
		sv.tRelease = time.Now()
		unix.Shutdown(int(sv.sock.Fd()), unix.SHUT_WR)
	}
}

// initPhases records the init's setup phases, sent with its last message
// of the setup.
func (sv *supervisor) initPhases(ps []protocol.Phase) {
	for _, p := range ps {
		sv.rep.Phases = append(sv.rep.Phases, Phase{Name: p.Name, Where: "init", Micros: p.Micros})
	}
}

// forward passes sig on to the target, through the init. A failed send
// means the init is gone, and the target with it.
func (sv *supervisor) forward(sig syscall.Signal) {
	sv.send(protocol.SupervisorMsg{Kind: protocol.KindSignal, Signal: int(sig)})
}

func (sv *supervisor) setupFailed(stage, msg string, code int) {
	sv.failed = &protocol.InitMsg{Kind: protocol.KindError, Stage: stage, Error: msg, ExitCode: code}
}
