package initproc

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// waitGo blocks until the supervisor says the target may start.
func waitGo(dec *json.Decoder) error {
	var m protocol.SupervisorMsg
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("wait for the supervisor: %w", err)
	}
	if m.Kind != protocol.KindGo {
		return fmt.Errorf("bug: supervisor sent %q before go", m.Kind)
	}
	return nil
}

// obey reads the supervisor's messages after the start, passing kill
// requests to the init's main thread; it closes
// released when the supervisor is done with us (or gone).
func obey(dec *json.Decoder, kills chan<- struct{}, released chan struct{}) {
	defer close(released)
	for {
		var m protocol.SupervisorMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.Kind == protocol.KindKill {
			select {
			case kills <- struct{}{}:
			default:
			}
		}
	}
}

// superviseTarget forwards signals to the target and reaps every child,
// orphans included, until none is left. When the target itself ends,
// whatever it left running is killed: the run ends with its main process.
//
// Everything here runs on the init's one locked thread, the thread that
// forked the target. That matters: before Landlock ABI 8, restricting a
// multi-threaded process gives each thread its own sibling domain, and
// with signal scoping only the forking thread's domain may signal the
// target.
func superviseTarget(target int, sigs, sigchld <-chan os.Signal, kills <-chan struct{}) (unix.WaitStatus, time.Time) {
	var status unix.WaitStatus
	var reaped time.Time
	targetDone := false
	for {
		for {
			var ws unix.WaitStatus
			pid, err := unix.Wait4(-1, &ws, unix.WNOHANG, nil)
			if errors.Is(err, unix.EINTR) {
				continue
			}
			if err != nil { // ECHILD: nothing left
				return status, reaped
			}
			if pid == 0 {
				break
			}
			if pid == target {
				status, targetDone, reaped = ws, true, time.Now()
				// From PID 1, kill(-1) reaches every other process of
				// the namespace.
				unix.Kill(-1, unix.SIGKILL)
			}
		}
		select {
		case s := <-sigs:
			if !targetDone {
				unix.Kill(target, s.(syscall.Signal))
			}
		case <-kills:
			unix.Kill(-1, unix.SIGKILL)
		case <-sigchld:
		}
	}
}

func tvUsec(tv unix.Timeval) int64 { return tv.Sec*1e6 + int64(tv.Usec) }
