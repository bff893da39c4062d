package initconn

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/internal/osthread"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// initChild is the init as the supervisor holds it: the supervisor's own
// child, started with syscall.ForkExec and held by its pid. os/exec would
// first make sure pidfds work, with an extra fork of a dummy child on the
// first start of every process, which is every run here; a pid is safe
// without one, because a child's pid cannot be reused before its parent
// reaps it, and signals are sent under the lock that reaping takes.
type initChild struct {
	pid  int
	done chan struct{} // closed once reaped

	mu     sync.Mutex
	exited bool // reaped, or about to be: no signal may go to pid any more
	ws     unix.WaitStatus
	ru     unix.Rusage
	wall   time.Duration // from the start to the reaping
}

// initExecPath execs the opened init program from the forked child, which
// gets its file as fd protocol.ProgFD beside its stdio and the sync
// socket: the same as execveat(fd, "", AT_EMPTY_PATH), which
// syscall.ForkExec cannot call. Not the fd's own number in this process:
// ForkExec moves its error pipe, in the child, to the fd above the
// highest one it passes, and when the program's fd was that one (a
// server's cold run, whose stdio came in just before the program was
// opened), the child execed the pipe: EACCES
// (TestStartInitAboveChildFiles).
var initExecPath = "/proc/self/fd/" + strconv.Itoa(protocol.ProgFD)

// startInitChild forks and execs the opened init program with attr (its
// namespaces, ID mapping, cgroup), stdio inherited, sync as fd 3 and the
// program's file as fd 4, with argv (childmode.Init's).
func startInitChild(prog *Program, attr *syscall.SysProcAttr, stdio []*os.File, sync *os.File, argv []string) (*initChild, error) {
	if stdio == nil {
		stdio = []*os.File{os.Stdin, os.Stdout, os.Stderr}
	}
	start := time.Now()
	pid, err := syscall.ForkExec(initExecPath, argv, &syscall.ProcAttr{
		Env: initEnv,
		// fd 3 = protocol.SyncFD, 4 = protocol.ProgFD (initExecPath)
		Files: []uintptr{stdio[0].Fd(), stdio[1].Fd(), stdio[2].Fd(), sync.Fd(), prog.f.Fd()},
		Sys:   attr,
	})
	if err != nil {
		return nil, err
	}
	c := &initChild{pid: pid, done: make(chan struct{})}
	go c.reap(start)
	return c, nil
}

// reap waits for the init to end, without reaping it, marks it exited
// under the lock, then reaps it: no signal can reach a reused pid.
func (c *initChild) reap(start time.Time) {
	defer close(c.done)
	var info unix.Siginfo
	for {
		err := unix.Waitid(unix.P_PID, c.pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.exited = true
	for {
		_, err := unix.Wait4(c.pid, &c.ws, 0, &c.ru)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	c.wall = time.Since(start)
}

// signal sends sig to the init unless it has ended.
func (c *initChild) signal(sig os.Signal) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.exited {
		unix.Kill(c.pid, sig.(syscall.Signal))
	}
}

// kill ends the init (and, as PID 1, its whole namespace) and waits for it.
func (c *initChild) kill() {
	c.signal(unix.SIGKILL)
	<-c.done
}

// ended reports, once reaped, how the init ended and what it used (it and
// every process it reaped).
func (c *initChild) ended() (ws unix.WaitStatus, ru unix.Rusage, ok bool) {
	select {
	case <-c.done:
		return c.ws, c.ru, true
	default:
		return 0, unix.Rusage{}, false
	}
}

// Spawner is the supervisor's thread an init is forked from on cgroup v1.
// It moves itself, alone, into the run's leaf first (cgroupfs.EnterThread:
// cheap, where moving the init afterwards waits for an RCU grace period),
// so the init is born in the leaf, never a moment outside its limits. It
// stays until the init has ended, because the init's parent-death signal
// follows the thread that forked it, and then ends, in the leaf: it never
// moves back out, and nothing else ever runs on it.
type Spawner struct {
	tid     int
	release chan struct{}
	once    sync.Once
}

// enterError is a spawner that could not enter the leaf.
type enterError struct{ err error }

func (e *enterError) Error() string { return e.err.Error() }
func (e *enterError) Unwrap() error { return e.err }

// IsEnterError reports whether err is the spawner thread's failure to
// enter the cgroup leaf (a failure of stage cgroup, not of the spawn).
func IsEnterError(err error) bool {
	_, ok := err.(*enterError)
	return ok
}

// startInitInLeaf starts the init from a spawner in leaf (v1).
func startInitInLeaf(leaf *cgroupfs.Leaf, prog *Program, attr *syscall.SysProcAttr, stdio []*os.File, sync *os.File, argv []string) (*initChild, *Spawner, error) {
	type result struct {
		c   *initChild
		err error
	}
	sp := &Spawner{release: make(chan struct{})}
	tid := make(chan int, 1)
	res := make(chan result, 1)
	osthread.Run(func() {
		tid <- unix.Gettid()
		if err := leaf.EnterThread(); err != nil {
			res <- result{err: &enterError{err}}
			return
		}
		c, err := startInitChild(prog, attr, stdio, sync, argv)
		res <- result{c, err}
		if err == nil {
			<-sp.release
		}
	})
	sp.tid = <-tid
	r := <-res
	return r.c, sp, r.err
}

// End lets the spawner's thread end once the init has (killing it if it
// still runs), and waits until the thread is gone, and with it out of the
// leaf. An error means it is still there: the leaf must then be left.
func (sp *Spawner) End(c *Conn) error {
	var init *initChild
	if c != nil {
		init = c.child
	}
	if init != nil {
		init.kill()
	}
	sp.once.Do(func() { close(sp.release) })
	task := fmt.Sprintf("/proc/self/task/%d", sp.tid)
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := os.Stat(task); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the thread that spawned the init (%d) has not ended after 5 s", sp.tid)
		}
		time.Sleep(20 * time.Microsecond)
	}
}

// initEnv is the init's own environment (the target's is in its config).
// One P: the init does one thing at a time, and every thread it starts
// counts toward the run's PID limit and memory.
var initEnv = []string{"GOMAXPROCS=1"}

func explainSpawnError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("start the init in new namespaces: %w; user namespaces may be disabled: check sysctl user.max_user_namespaces (must be > 0), kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04), or the container's seccomp profile", err)
	}
	return fmt.Errorf("start the init: %w", err)
}
