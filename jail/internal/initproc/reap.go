package initproc

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// waitGo blocks until the supervisor says the target may start.
func waitGo(r *bufio.Reader) error {
	m, err := readOrder(r)
	if err != nil {
		return wrap.Error("wait for the supervisor's go", err)
	}
	if _, ok := m.(protocol.Go); !ok {
		return errors.New("bug: supervisor sent " + strconv.Quote(string(m.Kind())) + " before go")
	}
	return nil
}

// readOrder reads the supervisor's next message.
func readOrder(r *bufio.Reader) (protocol.SupervisorMsg, error) {
	line, err := protocol.ReadLine(r, protocol.MaxSupervisorMsgBytes)
	if err != nil {
		return nil, err
	}
	return protocol.DecodeSupervisorMsg(line)
}

// tree is the target as the init holds it: signals for it are sent under
// the lock the reaping takes, so none goes to its pid once it is reaped.
// (A pid of the namespace is only ever reused by another process of the
// same analysis, and pids are allocated cyclically, but there is no need
// to lean on either.)
type tree struct {
	target int
	mu     sync.Mutex
	done   bool
}

// forward sends sig to the target unless it has ended. From any thread of
// the init: the others are not in the target's Landlock domain at all, so
// signal scoping does not hold them back; the locked thread shares it.
func (t *tree) forward(sig syscall.Signal) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.done {
		unix.Kill(t.target, sig)
	}
}

// obey carries out the supervisor's orders once the target runs: signals
// for the target, and the kill of the whole tree. It closes released when
// the supervisor is done with us (or gone).
func obey(r *bufio.Reader, t *tree, released chan struct{}) {
	defer close(released)
	for {
		// The end of the stream is the release; a malformed message
		// (which a supervisor of ours never sends) is taken as one: the
		// target has its end of the run either way.
		m, err := readOrder(r)
		if err != nil {
			return
		}
		switch m := m.(type) {
		case protocol.Kill:
			// From PID 1, kill(-1) reaches every other process of the
			// namespace.
			unix.Kill(-1, unix.SIGKILL)
		case protocol.Signal:
			t.forward(syscall.Signal(m.Signal))
		}
	}
}

// passInbound passes the signals the analysis sends to PID 1 (kill 1),
// caught on sigs (catchForwarded), on to the target, as those of the
// supervisor are, instead of letting them end the init.
func passInbound(t *tree, sigs <-chan os.Signal) {
	for s := range sigs {
		t.forward(s.(syscall.Signal))
	}
}

// reapAll reaps every child of the init, orphans of the namespace
// included, until none is left, and returns how the target ended and when
// it was reaped. When the target itself ends, whatever it left running is
// killed: the run ends with its main process. A blocking wait4 on the
// init's locked thread, not SIGCHLD: nothing else runs on the way from the
// target's exit to the report of it.
func (t *tree) reapAll() (unix.WaitStatus, time.Time) {
	var status unix.WaitStatus
	var at time.Time
	for {
		var ws unix.WaitStatus
		pid, err := unix.Wait4(-1, &ws, 0, nil)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil { // ECHILD: nothing left
			return status, at
		}
		if pid == t.target {
			t.mu.Lock()
			t.done = true
			t.mu.Unlock()
			status, at = ws, time.Now()
			unix.Kill(-1, unix.SIGKILL)
		}
	}
}
