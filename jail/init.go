package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// forwarded are the signals the init passes on to the target. As PID 1 of its
// namespace the init only ever receives signals it has a handler for, so
// registering them is also what lets them in at all.
var forwarded = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2}

// IsInit reports whether argv asks for the init. main checks it before
// parsing any flags.
func IsInit(args []string) bool { return len(args) > 1 && args[1] == initArg }

// InitMain is the re-executed init: PID 1 of the run's namespaces. It never
// returns.
func InitMain() {
	// Every step below that is per thread (the bounding set, Landlock's and
	// seccomp's view of "this thread", the fork of the target) happens on
	// this one thread.
	runtime.LockOSThread()
	os.Exit(initRun())
}

type initProc struct {
	enc *json.Encoder
}

func (p *initProc) send(m initMsg) {
	// A failed write means the supervisor is gone; the pdeathsig will end
	// us, nothing else to do.
	_ = p.enc.Encode(m)
}

// step runs one setup stage, timing it and reporting a failure with its name.
func (p *initProc) step(stage string, f func() error) error {
	start := time.Now()
	if err := f(); err != nil {
		p.send(initMsg{Kind: "error", Stage: stage, Error: err.Error(), ExitCode: 125})
		return err
	}
	p.send(initMsg{Kind: "phase", Phase: stage, Micros: time.Since(start).Microseconds()})
	return nil
}

func initRun() int {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "scidex-jail: this is the jail's internal init; use `scidex-jail run`")
		return 125
	}
	sock := os.NewFile(initSyncFD, "sync")
	unix.CloseOnExec(initSyncFD)
	p := &initProc{enc: json.NewEncoder(sock)}

	sigs := make(chan os.Signal, 16)
	signal.Notify(sigs, forwarded...)
	sigchld := make(chan os.Signal, 1)
	signal.Notify(sigchld, unix.SIGCHLD)

	var cfg initConfig
	dec := json.NewDecoder(sock)
	if err := dec.Decode(&cfg); err != nil {
		p.send(initMsg{Kind: "error", Stage: "config", Error: fmt.Sprintf("read config from supervisor: %v", err), ExitCode: 125})
		return 125
	}
	enforced := &enforcedInit{}
	steps := []struct {
		name string
		f    func() error
	}{
		{"mounts", func() error { return buildMountView(&cfg.Mounts) }},
		{"hostname", func() error { return unix.Sethostname([]byte(cfg.Hostname)) }},
		{"network", func() error {
			if cfg.Net == string(NetLoopback) {
				return loopbackUp()
			}
			return nil
		}},
		{"identity", func() error { return dropIdentity(cfg.UID, cfg.GID, cfg.Setgroups) }},
		{"landlock", func() error { return applyLandlock(&cfg.Security, enforced) }},
		// Every fd above 2 gets close-on-exec: the target inherits stdio
		// and nothing else, whatever the supervisor's caller leaked to us.
		{"fds", func() error { return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) }},
		// Last, as close to the execve as a Go program gets: the filter
		// also covers the init, which only waits and signals from here on.
		{"seccomp", func() error { return applySeccomp(&cfg.Security, enforced) }},
	}
	for _, s := range steps {
		if err := p.step(s.name, s.f); err != nil {
			return 125
		}
	}

	if err := p.step("wait-go", func() error { return waitGo(dec) }); err != nil {
		return 125
	}
	start := time.Now()
	path, code, err := lookCommand(cfg.Command[0], cfg.Env, cfg.RunDir)
	pid := 0
	var execAt time.Time // the start of the target's wall time
	if err == nil {
		// Not dumpable: the target (same uid) cannot open /proc/1/mem,
		// /proc/1/fd or ptrace us. execve resets it for the target.
		unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
		// syscall.ForkExec, not os.StartProcess: no pidfd is needed (we
		// wait and signal by pid, as PID 1, with no pid reuse possible
		// before we reap), and os probes pidfd support with an extra fork.
		execAt = time.Now()
		pid, err = syscall.ForkExec(path, cfg.Command, &syscall.ProcAttr{
			Dir:   cfg.RunDir,
			Env:   cfg.Env,
			Files: []uintptr{0, 1, 2},
		})
		code = execErrorCode(err)
		if err != nil {
			err = fmt.Errorf("exec %s: %w", path, err)
		}
	}
	if err != nil {
		p.send(initMsg{Kind: "error", Stage: "exec", Error: err.Error(), ExitCode: code})
		return code
	}
	p.send(initMsg{Kind: "started", Pid: pid, Micros: time.Since(start).Microseconds(), Enforced: enforced})

	kills := make(chan struct{}, 1)
	released := make(chan struct{})
	go obey(dec, kills, released)
	ws, reaped := superviseTarget(pid, sigs, sigchld, kills)
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_CHILDREN, &ru)
	m := initMsg{Kind: "exited", UserUsec: tvUsec(ru.Utime), SysUsec: tvUsec(ru.Stime), MaxRSSKB: ru.Maxrss,
		WallUsec: reaped.Sub(execAt).Microseconds()}
	switch {
	case ws.Exited():
		m.Exited, m.ExitCode = true, ws.ExitStatus()
	case ws.Signaled():
		m.Signal = int(ws.Signal())
		m.ExitCode = 128 + m.Signal
	}
	p.send(m)
	// Stay, with nothing else left in the namespace, until the supervisor
	// has read the run directory through our root (a tmpfs run directory
	// lives only as long as this mount namespace).
	<-released
	return m.ExitCode
}

// waitGo blocks until the supervisor says the target may start.
func waitGo(dec *json.Decoder) error {
	var m supervisorMsg
	if err := dec.Decode(&m); err != nil {
		return fmt.Errorf("wait for the supervisor: %w", err)
	}
	if m.Kind != "go" {
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
		var m supervisorMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.Kind == "kill" {
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

// lookCommand resolves argv[0] the way a shell would, with the target's PATH.
func lookCommand(name string, env []string, dir string) (string, int, error) {
	if strings.Contains(name, "/") {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		return name, 0, nil
	}
	path := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			path = v
		}
	}
	denied := ""
	for _, d := range filepath.SplitList(path) {
		p := filepath.Join(d, name)
		fi, err := os.Stat(p)
		if err != nil || fi.IsDir() {
			continue
		}
		if unix.Access(p, unix.X_OK) == nil {
			return p, 0, nil
		}
		denied = p
	}
	if denied != "" {
		return "", 126, fmt.Errorf("%s: permission denied: it is not executable inside the jail", denied)
	}
	return "", 127, fmt.Errorf("%s: command not found in the jail's PATH %s (the jail sees /usr, /bin, /lib*, /etc, data/ and docs/ and its run directory)", name, path)
}

func execErrorCode(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, syscall.ENOENT):
		return 127
	default:
		return 126
	}
}
