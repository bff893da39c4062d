package jail

import (
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// hardKillDelay is how long the init gets to kill and reap the tree when
// asked, before it is killed itself (which loses a tmpfs run directory).
const hardKillDelay = 5 * time.Second

// initConn is the supervisor's hold on the init: the program it was
// started from, the child process, the sync socket and the messages read
// from it (readInit), which the supervisor's steps take in turn.
type initConn struct {
	prog  *initProgram // the init's file, opened once at the start
	child *initChild
	sock  *os.File
	mu    sync.Mutex // one message at a time on sock
	msgs  chan protocol.InitMsg
	// ended: the init reported the target's end and waits for the
	// supervisor to read the run directory; set before reading it.
	ended atomic.Bool
}

// startInit starts the init in its new namespaces with attr, in leaf
// (v1: forked by a spawner thread in it; v2: attr's cgroup fd), reading its
// end of the sync socket, where it waits for its config.
func startInit(prog *initProgram, leaf *cgroupfs.Leaf, attr *syscall.SysProcAttr) (*initConn, *spawner, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "sync"), os.NewFile(uintptr(fds[1]), "sync-init")
	defer child.Close()
	c := &initConn{prog: prog, sock: parent, msgs: make(chan protocol.InitMsg, 16)}
	var sp *spawner
	if leaf != nil && leaf.Version() == 1 {
		c.child, sp, err = startInitInLeaf(leaf, prog, attr, child)
	} else {
		c.child, err = startInitChild(prog, attr, child)
	}
	if err != nil {
		parent.Close()
		if _, ok := err.(*enterError); ok {
			return nil, sp, err
		}
		return nil, sp, explainSpawnError(initExecError(prog.path, err))
	}
	go c.readInit()
	return c, sp, nil
}

// readInit turns the init's messages into events until the socket closes.
func (c *initConn) readInit() {
	defer close(c.msgs)
	dec := json.NewDecoder(c.sock)
	for {
		var m protocol.InitMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		c.msgs <- m
	}
}

func (c *initConn) send(v any) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return json.NewEncoder(c.sock).Encode(v)
}

// forward passes sig on to the target, through the init. A failed send
// means the init is gone, and the target with it.
func (c *initConn) forward(sig syscall.Signal) {
	c.send(protocol.SupervisorMsg{Kind: protocol.KindSignal, Signal: int(sig)})
}

// awaitHello waits for the init's first message, its version, and checks
// it (checkHello): an init of another version never gets "go". A cancel
// meanwhile is taken (the caller ends the run); an init that neither
// speaks nor ends within initHelloTimeout is refused.
func (c *initConn) awaitHello(sm *signalMachine) error {
	tm := time.NewTimer(initHelloTimeout)
	defer tm.Stop()
	for {
		select {
		case m, ok := <-c.msgs:
			return checkHello(c.prog.path, m, ok)
		case s := <-sm.c:
			if sm.take(s) {
				return nil
			}
		case <-tm.C:
			return &InitError{Path: c.prog.path, Found: fmt.Sprintf("it did not state its version within %v", initHelloTimeout),
				Fix: "install the " + InitName + " of this build there"}
		}
	}
}

// abort ends an init that has not been told "go": no target ever ran, so
// there is nothing to save. It returns the phases of an init that
// reported an error, which are still recorded.
func (c *initConn) abort() []protocol.Phase {
	c.child.kill()
	// The socket is a blocking fd: Close would not wake readInit's read,
	// and the init's end is still open here. Shutdown does: the read
	// returns end of file, and readInit closes msgs.
	unix.Shutdown(int(c.sock.Fd()), unix.SHUT_RDWR)
	c.sock.Close()
	var phases []protocol.Phase
	for m := range c.msgs {
		if m.Kind == protocol.KindError {
			phases = append(phases, m.Phases...)
		}
	}
	return phases
}

// release tells an init that reported the target's end that it may exit:
// the supervisor has read the run directory through its root.
func (c *initConn) release() {
	unix.Shutdown(int(c.sock.Fd()), unix.SHUT_WR)
}

// killTree has the init SIGKILL every other process of the namespace, so it
// can still report and the run directory can still be read; if it does not
// manage, the init itself is killed, and the kernel ends the namespace.
func (c *initConn) killTree() {
	c.send(protocol.SupervisorMsg{Kind: protocol.KindKill})
	// Harmless once the init is gone: signal checks under the reaper's
	// lock. Not once it has reported the end: then it only waits for us to read
	// the run directory, which may take long for big outputs.
	time.AfterFunc(hardKillDelay, func() {
		if !c.ended.Load() {
			c.child.signal(unix.SIGKILL)
		}
	})
}

// initEnd is how the init ended, once reaped: its wait status and the
// rusage of it and every process it reaped.
type initEnd struct {
	ws unix.WaitStatus
	ru unix.Rusage
	ok bool // reaped: false when it never ran
}

// end is how the init ended (see initEnd); nil c: it never ran.
func (c *initConn) end() initEnd {
	if c == nil {
		return initEnd{}
	}
	ws, ru, ok := c.child.ended()
	return initEnd{ws, ru, ok}
}
