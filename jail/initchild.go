package jail

import (
	"errors"
	"os"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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

// startInit forks and execs this binary as the init with attr (its
// namespaces, ID mapping, cgroup), stdio inherited and sync as fd 3.
func startInitChild(attr *syscall.SysProcAttr, sync *os.File) (*initChild, error) {
	start := time.Now()
	pid, err := syscall.ForkExec("/proc/self/exe", []string{"scidex-jail", protocol.InitArg}, &syscall.ProcAttr{
		Env:   initEnv,
		Files: []uintptr{os.Stdin.Fd(), os.Stdout.Fd(), os.Stderr.Fd(), sync.Fd()}, // fd 3 = protocol.SyncFD
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
