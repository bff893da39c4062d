package jail

import (
	"os"
	"syscall"
	"time"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
	"golang.org/x/sys/unix"
)

// cancelSignals end the run when the jail receives them; the rest of
// forwarded only pass through to the target.
var cancelSignals = map[os.Signal]bool{unix.SIGTERM: true, unix.SIGINT: true, unix.SIGHUP: true}

// pollSignals takes, without waiting, the signals that arrived while the
// supervisor was busy with a setup step. A cancel marks the run cancelled
// (the caller stops before its next step); the others are held and passed
// to the target once it runs. It reports whether the run is cancelled.
func (sv *supervisor) pollSignals() bool {
	for {
		select {
		case s := <-sv.sigs:
			sv.takeSignal(s)
		default:
			return sv.cancelled
		}
	}
}

// takeSignal takes one signal during setup (see pollSignals) and reports
// whether the run is cancelled.
func (sv *supervisor) takeSignal(s os.Signal) bool {
	if !cancelSignals[s] {
		sv.heldSigs = append(sv.heldSigs, s)
		return sv.cancelled
	}
	if !sv.cancelled {
		sv.cancelled = true
		sv.cancelSig = s.(syscall.Signal)
	}
	return true
}

// abortInit ends an init that has not been told "go": no target ever ran,
// so there is nothing to save; the phases of an init that reported an
// error are still recorded.
func (sv *supervisor) abortInit() {
	sv.init.kill()
	// The socket is a blocking fd: Close would not wake readInit's read,
	// and the init's end is still open here. Shutdown does: the read
	// returns end of file, and readInit closes msgs.
	unix.Shutdown(int(sv.sock.Fd()), unix.SHUT_RDWR)
	sv.sock.Close()
	for m := range sv.msgs {
		if m.Kind == protocol.KindError {
			sv.initPhases(m.Phases)
		}
	}
}

// stop asks the target to end (the init forwards sig) and arms the kill of
// the whole tree after the grace period. Before the init has reported the
// target started, the signal is held and sent on "started": there is no
// target to pass it to yet.
func (sv *supervisor) stop(sig syscall.Signal) {
	sv.pendingSig = sig
	if sv.started {
		sv.forward(sig)
	}
	if sv.killTimer == nil {
		sv.killTimer = time.AfterFunc(sv.spec.Grace, sv.killTree)
	}
}

// killTree has the init SIGKILL every other process of the namespace, so it
// can still report and the run directory can still be read; if it does not
// manage, the init itself is killed, and the kernel ends the namespace.
func (sv *supervisor) killTree() {
	sv.send(protocol.SupervisorMsg{Kind: protocol.KindKill})
	// Harmless once the init is gone: signal checks under the reaper's
	// lock. Not once it has reported the end: then it only waits for us to read
	// the run directory, which may take long for big outputs.
	time.AfterFunc(hardKillDelay, func() {
		if !sv.ended.Load() {
			sv.init.signal(unix.SIGKILL)
		}
	})
}
