package initconn

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/childmode"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// hardKillDelay is how long the init gets to kill and reap the tree when
// asked, before it is killed itself (which loses a tmpfs run directory).
const hardKillDelay = 5 * time.Second

// Conn is the supervisor's hold on the init: the program it was
// started from, the child process, the sync socket and the messages read
// from it (readInit), which the supervisor's steps take in turn.
type Conn struct {
	prog  *Program // the init's file, opened once at the start
	child *initChild
	sock  *os.File
	mu    sync.Mutex // one message at a time on sock
	msgs  chan protocol.InitMsg
	// err is why readInit stopped before the end of the stream (a line
	// DecodeInitMsg refused, or a failed read); set before msgs closes.
	err error
	// ended: the init reported the target's end and waits for the
	// supervisor to read the run directory; set before reading it.
	ended atomic.Bool
	// hello: its version was read and checked (an init started ahead of
	// its run, a slot, is checked before it is handed out).
	hello bool
}

// Start starts the init in its new namespaces with attr, in leaf
// (v1: forked by a spawner thread in it; v2: attr's cgroup fd), reading its
// end of the sync socket, where it waits for its config.
// Its stdio is the supervisor's own, or stdio when given (three files:
// /dev/null for an init started ahead of its run, whose target's stdio
// comes with its config: SendConfigStdio).
func Start(prog *Program, leaf *cgroupfs.Leaf, attr *syscall.SysProcAttr, stdio []*os.File) (*Conn, *Spawner, error) {
	return start(prog, leaf, attr, stdio, childmode.Init.Argv())
}

// StartSlot is Start for a slot, an init started ahead of its run: it
// shows in ps as one (protocol.SlotComm) until its run's config comes.
func StartSlot(prog *Program, leaf *cgroupfs.Leaf, attr *syscall.SysProcAttr, stdio []*os.File) (*Conn, *Spawner, error) {
	return start(prog, leaf, attr, stdio, childmode.Init.Argv(protocol.SlotArg))
}

func start(prog *Program, leaf *cgroupfs.Leaf, attr *syscall.SysProcAttr, stdio []*os.File, argv []string) (*Conn, *Spawner, error) {
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "sync"), os.NewFile(uintptr(fds[1]), "sync-init")
	defer child.Close()
	c := &Conn{prog: prog, sock: parent, msgs: make(chan protocol.InitMsg, 16)}
	var sp *Spawner
	if leaf != nil && leaf.Version() == 1 {
		c.child, sp, err = startInitInLeaf(leaf, prog, attr, stdio, child, argv)
	} else {
		c.child, err = startInitChild(prog, attr, stdio, child, argv)
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

// readInit turns the init's messages into events until the socket closes,
// or until a line that is no message of an init (DecodeInitMsg): it then
// stops reading and kills the init, whose stream can no longer be trusted,
// and Err says why.
func (c *Conn) readInit() {
	defer close(c.msgs)
	rr, err := newRightsReader(c.sock) // rights.go: the "sockets" message's descriptors
	if err != nil {
		c.err = fmt.Errorf("bug: read the sync socket: %w", err)
		return
	}
	defer rr.close()
	r := bufio.NewReader(rr)
	for {
		line, err := protocol.ReadLine(r, protocol.MaxInitMsgBytes)
		if err != nil && !errors.Is(err, protocol.ErrLineTooLong) {
			// The end of the stream, or of the init (a reset when it
			// died with our messages unread): it ended, not misspoke.
			return
		}
		var m protocol.InitMsg
		if err == nil {
			m, err = protocol.DecodeInitMsg(line)
		}
		if sm, ok := m.(*protocol.SocketsMade); ok && err == nil {
			err = rr.attach(sm)
		}
		if err != nil {
			c.err = fmt.Errorf("init program %s sent a line no %s of this build sends (%w), and was killed: reinstall the %s of this build beside the jail (make build, or the package); if it persists, it is a bug to report",
				c.prog.path, InitName, err, InitName)
			c.child.signal(unix.SIGKILL)
			return
		}
		c.msgs <- m
		// Let the goroutine that takes m (the run's event loop) run now,
		// on this thread, before the next read blocks in recvmsg. The
		// supervisor runs with one P (cmd/scidex-jail's GOMAXPROCS(1)),
		// and a blocking syscall keeps it: the woken loop waited in that
		// P's run queue until sysmon took the P back and woke a thread
		// for it, 0.14-0.48 ms of every Started and Exited (load 5-7).
		runtime.Gosched()
	}
}

// Err is, once Msgs is closed, why the init's messages ended before its
// stream did: a line that is no message of an init (the init is killed).
// nil: the stream ended. From an init that said it is ours, it is a bug or
// a compromised init: the run ends as a setup failure of StageInit.
func (c *Conn) Err() error { return c.err }

// SendConfig writes the init's config, one line of JSON.
func (c *Conn) SendConfig(cfg *protocol.Config) error {
	return c.write(protocol.EncodeConfig(cfg))
}

// Send writes one message to the init.
func (c *Conn) Send(m protocol.SupervisorMsg) error {
	line, err := protocol.EncodeSupervisorMsg(m)
	if err != nil {
		return err
	}
	return c.write(line)
}

// SendConfigStdio writes the config with the target's stdin, stdout and
// stderr attached (SCM_RIGHTS; cfg.Stdio must be set), for an init that
// was started before they were known.
func (c *Conn) SendConfigStdio(cfg *protocol.Config, stdio [3]int) error {
	return c.sendStdio(protocol.EncodeConfig(cfg), stdio)
}

// SendConfigStdioGo is SendConfigStdio with "go" after the config, in the
// same write: for an init whose version was checked before (AwaitHello),
// nothing the supervisor waits for comes between the two. The init reads
// them in turn, as two writes (its reader buffers the line after the
// config), and still starts nothing before its setup is done.
func (c *Conn) SendConfigStdioGo(cfg *protocol.Config, stdio [3]int) error {
	if !c.hello {
		return errors.New("bug: config and go sent together to an init whose version was not checked")
	}
	g, err := protocol.EncodeSupervisorMsg(protocol.Go{})
	if err != nil {
		return err
	}
	return c.sendStdio(append(protocol.EncodeConfig(cfg), g...), stdio)
}

// sendStdio writes line, the target's stdio attached to its first byte.
func (c *Conn) sendStdio(line []byte, stdio [3]int) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	rights := unix.UnixRights(stdio[:]...)
	fd := int(c.sock.Fd())
	for len(line) > 0 {
		n, err := unix.SendmsgN(fd, line, rights, nil, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("send config to init: %w", err)
		}
		line, rights = line[n:], nil
	}
	return nil
}

func (c *Conn) write(line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, err := c.sock.Write(line)
	return err
}

// Forward passes sig on to the target, through the init. A failed send
// means the init is gone, and the target with it.
func (c *Conn) Forward(sig syscall.Signal) {
	c.Send(protocol.Signal{Signal: int(sig)})
}

// AwaitHello waits for the init's first message, its version, and checks
// it (checkHello): an init of another version never gets "go". A signal
// on sigs meanwhile goes to take, and one it takes (a cancel: the caller
// ends the run) ends the wait; an init that neither speaks nor ends
// within initHelloTimeout is refused.
func (c *Conn) AwaitHello(sigs <-chan os.Signal, take func(os.Signal) bool) error {
	if c.hello {
		return nil
	}
	err := c.awaitHello(sigs, take)
	c.hello = err == nil
	return err
}

func (c *Conn) awaitHello(sigs <-chan os.Signal, take func(os.Signal) bool) error {
	tm := time.NewTimer(initHelloTimeout)
	defer tm.Stop()
	for {
		select {
		case m, ok := <-c.msgs:
			var err error
			if !ok {
				err = c.err
				if err == nil {
					err = io.EOF
				}
			}
			return checkHello(c.prog.path, m, err)
		case s := <-sigs:
			if take(s) {
				return nil
			}
		case <-tm.C:
			return &InitError{Path: c.prog.path, Found: fmt.Sprintf("it did not state its version within %v", initHelloTimeout),
				Fix: "install the " + InitName + " of this build there"}
		}
	}
}

// Abort ends an init that has not been told "go": no target ever ran, so
// there is nothing to save. It returns the phases of an init that
// reported an error, which are still recorded.
func (c *Conn) Abort() []protocol.Phase {
	phases, _ := c.AbortReported()
	return phases
}

// AbortReported is Abort, with the setup error the init reported before
// it ended (nil: none). An init whose setup failed reports why and exits;
// a message written to it meanwhile fails (EPIPE), and the init's report,
// already in the socket, is the run's failure, not that write's error.
func (c *Conn) AbortReported() ([]protocol.Phase, *protocol.SetupFailed) {
	c.child.kill()
	// The socket is a blocking fd: Close would not wake readInit's read,
	// and the init's end is still open here. Shutdown does: the read
	// returns end of file, and readInit closes msgs. What the init wrote
	// before is still read (a shut socket's queue is read to its end).
	unix.Shutdown(int(c.sock.Fd()), unix.SHUT_RDWR)
	var phases []protocol.Phase
	var failed *protocol.SetupFailed
	for m := range c.msgs {
		switch m := m.(type) {
		case *protocol.SetupFailed:
			phases = append(phases, m.Phases...)
			failed = m
		case *protocol.SocketsMade:
			CloseSockets(m) // never served: the run did not start
		}
	}
	// Closed once read to its end: a message that came with descriptors
	// is read alone (recvmsg stops at it), and the ones after it would be
	// lost to a close while readInit still reads.
	c.sock.Close()
	return phases, failed
}

// Release tells an init that reported the target's end that it may exit:
// the supervisor has read the run directory through its root.
func (c *Conn) Release() {
	unix.Shutdown(int(c.sock.Fd()), unix.SHUT_WR)
}

// KillTree has the init SIGKILL every other process of the namespace, so it
// can still report and the run directory can still be read; if it does not
// manage, the init itself is killed, and the kernel ends the namespace.
func (c *Conn) KillTree() {
	c.Send(protocol.Kill{})
	// Harmless once the init is gone: signal checks under the reaper's
	// lock. Not once it has reported the end: then it only waits for us to read
	// the run directory, which may take long for big outputs.
	time.AfterFunc(hardKillDelay, func() {
		if !c.ended.Load() {
			c.child.signal(unix.SIGKILL)
		}
	})
}

// End is how the init ended, once reaped: its wait status and the
// rusage of it and every process it reaped.
type End struct {
	WS unix.WaitStatus
	RU unix.Rusage
	OK bool // reaped: false when it never ran
}

// End is how the init ended (see End); nil c: it never ran.
func (c *Conn) End() End {
	if c == nil {
		return End{}
	}
	ws, ru, ok := c.child.ended()
	return End{ws, ru, ok}
}

// Msgs are the init's messages, in order; closed when the socket is.
func (c *Conn) Msgs() <-chan protocol.InitMsg { return c.msgs }

// Done is closed once the init is reaped.
func (c *Conn) Done() <-chan struct{} { return c.child.done }

// Pid is the init's pid (in the supervisor's pid namespace).
func (c *Conn) Pid() int { return c.child.pid }

// MarkEnded says the init reported the target's end: from then on the
// init waits for the supervisor to read the run directory, and KillTree
// no longer kills the init itself.
func (c *Conn) MarkEnded() { c.ended.Store(true) }

// Close closes the supervisor's end of the sync socket.
func (c *Conn) Close() { c.sock.Close() }

// SendView sends a slot's init its view, ahead of its run
// (protocol.Config.View), and waits until it is built: Ready, or the
// init's setup failure as an error, or its end, or initHelloTimeout.
func (c *Conn) SendView(view *protocol.Config) error {
	if !view.View {
		return errors.New("bug: SendView of a config that is no view")
	}
	if err := c.SendConfig(view); err != nil {
		return fmt.Errorf("send the slot's view to the init: %w", err)
	}
	tm := time.NewTimer(initHelloTimeout)
	defer tm.Stop()
	select {
	case m, ok := <-c.msgs:
		switch m := m.(type) {
		case *protocol.Ready:
			return nil
		case *protocol.SetupFailed:
			return fmt.Errorf("the slot's init failed to build its view, at %s: %s", m.Stage, m.Error)
		}
		if !ok {
			return fmt.Errorf("the slot's init ended before its view was built: %w", errors.Join(c.err, io.EOF))
		}
		return fmt.Errorf("bug: the slot's init sent %s before its view was built", m.Kind())
	case <-tm.C:
		return fmt.Errorf("the slot's init did not build its view within %v", initHelloTimeout)
	}
}
