package supervise

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/initconn"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// cancelSignals end the run when the jail receives them; the rest of
// forwarded only pass through to the target.
var cancelSignals = map[os.Signal]bool{unix.SIGTERM: true, unix.SIGINT: true, unix.SIGHUP: true}

// signalMachine is the run's signal and timeout machine: it takes the
// jail's signals in every step (a cancel ends the run at the next step,
// the others are held for the target until it runs), and stops the target
// on a cancel or the timeout, with the kill of the whole tree after the
// grace period.
type signalMachine struct {
	c     <-chan os.Signal
	grace time.Duration

	signalFacts
	cancelAt   time.Time      // when a cancel came while the analysis ran
	pendingSig syscall.Signal // the stop signal, sent on "started" when it came before
	held       []os.Signal    // signals for the target that came before it ran
	killTimer  *time.Timer
}

// signalFacts is what the signals and the timeout did to the run, for its
// end (settle).
type signalFacts struct {
	TimedOut, Cancelled bool
	CancelSig           syscall.Signal // the signal that cancelled the run
	PostRunCancelled    bool           // cancelled after the analysis ended, during the post-run work
}

// poll takes, without waiting, the signals that arrived while the
// supervisor was busy with a setup step. A cancel marks the run cancelled
// (the caller stops before its next step); the others are held and passed
// to the target once it runs. It reports whether the run is cancelled.
func (sm *signalMachine) poll() bool {
	for {
		select {
		case s := <-sm.c:
			sm.take(s)
		default:
			return sm.Cancelled
		}
	}
}

// take takes one signal during setup (see poll) and reports whether the
// run is cancelled.
func (sm *signalMachine) take(s os.Signal) bool {
	if !cancelSignals[s] {
		sm.held = append(sm.held, s)
		return sm.Cancelled
	}
	if !sm.Cancelled {
		sm.Cancelled = true
		sm.CancelSig = s.(syscall.Signal)
	}
	return true
}

// whileRunning handles one signal while the target may run (the event
// loop): a cancel stops the run, the others go to the target, or are held
// until it has started.
func (sm *signalMachine) whileRunning(s os.Signal, e *ending, conn *initconn.Conn) {
	if cancelSignals[s] && e.exited == nil && !sm.TimedOut {
		sm.Cancelled = true
		if sm.cancelAt.IsZero() {
			sm.cancelAt = time.Now()
		}
		if sm.CancelSig == 0 {
			sm.CancelSig = s.(syscall.Signal)
		}
		sm.stop(s.(syscall.Signal), e.started != nil, conn)
		return
	}
	if e.started != nil {
		conn.Forward(s.(syscall.Signal))
	} else {
		// The target may already run while "started" is still on its
		// way: hold the signal until then.
		sm.held = append(sm.held, s)
	}
}

// timeout stops a run whose wall-clock budget ran out.
func (sm *signalMachine) timeout(e *ending, conn *initconn.Conn) {
	if e.exited == nil && !sm.Cancelled {
		sm.TimedOut = true
		sm.stop(unix.SIGTERM, e.started != nil, conn)
	}
}

// started passes on, now that the target runs, the signals held for it
// and a stop that came during setup.
func (sm *signalMachine) started(conn *initconn.Conn) {
	for _, s := range sm.held {
		conn.Forward(s.(syscall.Signal))
	}
	if sm.pendingSig != 0 {
		conn.Forward(sm.pendingSig)
	}
}

// stop asks the target to end (the init forwards sig) and arms the kill of
// the whole tree after the grace period. Before the init has reported the
// target started, the signal is held and sent on "started": there is no
// target to pass it to yet.
func (sm *signalMachine) stop(sig syscall.Signal, started bool, conn *initconn.Conn) {
	sm.pendingSig = sig
	if started {
		conn.Forward(sig)
	}
	if sm.killTimer == nil {
		sm.killTimer = time.AfterFunc(sm.grace, conn.KillTree)
	}
}

// disarm stops the kill of the tree: the target has ended.
func (sm *signalMachine) disarm() {
	if sm.killTimer != nil {
		sm.killTimer.Stop()
	}
}

// companionWait bounds how long the jail waits for its own copy of a
// cancel signal that killed the analysis: a batch system (Slurm's scancel,
// a time limit) or a terminal's Ctrl-C signals every process of the job
// at once, the analysis perhaps first, and the run is then cancelled, not
// "killed by SIGTERM (not by the jail)". Only an analysis killed by
// SIGTERM, SIGINT or SIGHUP that the jail did not send pays it.
const companionWait = 250 * time.Millisecond

// awaitCompanion waits, at most companionWait, for the jail's own copy of
// the cancel signal that killed the analysis (see companionWait); it
// takes it as a cancel with the analysis' own end.
func (sm *signalMachine) awaitCompanion(x *protocol.Exited) {
	if x == nil || sm.Cancelled || sm.TimedOut || !cancelSignals[syscall.Signal(x.Signal)] {
		return
	}
	t := time.NewTimer(companionWait)
	defer t.Stop()
	for !sm.Cancelled {
		select {
		case s := <-sm.c:
			sm.take(s)
		case <-t.C:
			return
		}
	}
}

// duringPostRun takes one signal while the outputs are read: the analysis
// has ended, so only a cancel counts, and it stops the work. It reports
// whether the work is to stop.
func (sm *signalMachine) duringPostRun(s os.Signal) bool {
	if !cancelSignals[s] {
		// The analysis has ended: there is no one to pass it to.
		return false
	}
	if !sm.Cancelled {
		sm.Cancelled, sm.CancelSig = true, s.(syscall.Signal)
	}
	sm.PostRunCancelled = true
	return true
}
