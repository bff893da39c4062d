// Package initproc is the jail's init: the program (cmd/scidex-jail-init) that is PID 1
// of a run's new user, mount, pid, network, ipc, uts and cgroup namespaces.
// It reads its whole config from the supervisor (package protocol), builds
// the run's mount view, drops to the target's identity, applies Landlock and
// seccomp, waits for "go", forks and execs the target, forwards signals to
// it, reaps every process of the namespace, reports how the target ended and
// exits with its status once the supervisor has read the run directory.
//
// It imports protocol, landlock and seccomp, and never cgroupfs or the
// supervisor's package: the init does not manage cgroups (the supervisor puts
// it into its leaf before it may start the target; the init only mounts that
// leaf read-only in the view, for the analysis to read its limits), and that
// is a compile-time fact, checked by .ci/layering.
//
// Main never returns. Only the init program (cmd/scidex-jail-init, through
// jail/initmain) links this package, built with CGO_ENABLED=0.
package initproc

import (
	"bufio"
	"os"
	"runtime"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/buildversion"
	"github.com/scidex/scidex-jail/internal/netif"
	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// Main is the init. It never returns.
func Main() {
	// First, on the thread the process started on (init below): its start.
	started := protocol.ProcessStart()
	// Every step below that is per thread (the bounding set, Landlock's and
	// seccomp's view of "this thread", the fork of the target) happens on
	// this one thread.
	runtime.LockOSThread()
	os.Exit(run(started))
}

// init keeps the init's main goroutine on the process's main thread, its
// thread-group leader (a lock taken while packages initialise holds for
// main): the one thread the init confines. A signal to PID 1 is checked
// against the leader's Landlock domain, and with signal scoping only a
// leader in the analysis' own domain lets what the analysis sends to PID 1
// in (passInbound); on another thread it would be refused with EPERM, or
// not, by chance of scheduling. Only the init program links this package:
// the supervisor's main goroutine moves freely.
func init() {
	runtime.LockOSThread()
}

// conn is the init's end of the sync socket.
type conn struct {
	sock   *os.File
	r      *bufio.Reader    // the supervisor's lines: the config, then its messages
	last   time.Time        // the end of the last phase: the init's phases follow each other without a gap
	phases []protocol.Phase // sent with the message that ends setup
}

// lap records the phase that ends now.
func (c *conn) lap(name string) { c.lapAt(name, time.Now()) }

// lapAt records the phase that ended at t.
func (c *conn) lapAt(name string, t time.Time) {
	c.phases = append(c.phases, protocol.Phase{Name: name, Micros: t.Sub(c.last).Microseconds()})
	c.last = t
}

func (c *conn) send(m protocol.InitMsg) {
	// A failed write means the supervisor is gone; the pdeathsig will end
	// us, nothing else to do. Our own messages always encode.
	line, _ := protocol.EncodeInitMsg(m)
	_, _ = c.sock.Write(line)
}

// fail reports a setup failure of stage and returns the exit code.
func (c *conn) fail(stage protocol.Stage, err error, code int) int {
	c.send(&protocol.SetupFailed{Stage: stage, Error: err.Error(), ExitCode: code, Phases: c.phases})
	return code
}

// step is one setup stage of the init, run in order; its phase in the
// report bears the stage's name.
type step struct {
	stage protocol.Stage
	f     func() error
}

// setupSteps are the init's stages, each before the next, with why the
// order is what it is.
// What the steps find that the plan cannot know goes into found, the
// Started the init sends once the target runs.
func setupSteps(cfg *protocol.Config, found *protocol.Started) []step {
	var online string // the target's CPUs, for the view
	return append([]step{
		// On this thread, which forks the target: it inherits the
		// affinity. Before the mounts, which show its CPU list.
		{protocol.StageCPUs, func() (err error) {
			online, err = pinCPUs(cfg.CPUs)
			found.CPUs = online
			return err
		}},
		// While the init still has CAP_SYS_ADMIN over its mount
		// namespace: every later step sees only the run's view.
		{protocol.StageMounts, func() error { return buildMountView(&cfg.Mounts, online, nil) }},
		{protocol.StageHostname, func() error { return unix.Sethostname([]byte(cfg.Hostname)) }},
		{protocol.StageNetwork, func() error {
			if cfg.Loopback {
				if err := netif.LoopbackUp(); err != nil {
					return err
				}
			}
			return handSockets(cfg.Sockets) // sockets.go
		}},
		// After the mounts and lo: they need the capabilities that
		// the confinement drops.
	}, confineSteps(cfg, found)...)
}

// confineSteps confine the init's locked main thread, the one that forks
// the target, in order: a cold run's after its mounts, a slot's ahead of
// its run (ahead.go).
func confineSteps(cfg *protocol.Config, found *protocol.Started) []step {
	return []step{
		// Before Landlock (it needs no_new_privs, which this sets).
		{protocol.StageIdentity, func() error { return dropIdentity(cfg.UID, cfg.GID, cfg.Setgroups) }},
		{protocol.StageLandlock, func() error { return applyLandlock(cfg.Security.Landlock, found) }},
		{protocol.StageFDs, closeOnExec},
		// Last, as close to the execve as a Go program gets: the filter
		// also covers the init, which only waits and signals from here on.
		{protocol.StageSeccomp, func() error { return applySeccomp(cfg.Security.Seccomp) }},
	}
}

// closeOnExec gives every fd above 2 close-on-exec: the target inherits
// stdio and nothing else, whatever the supervisor's caller leaked to us.
func closeOnExec() error { return unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) }

// runSteps runs steps in order; false: one failed, and the init reported
// it.
func (c *conn) runSteps(steps []step) bool {
	for _, s := range steps {
		if !c.runStep(s) {
			return false
		}
	}
	return true
}

// runStep runs one stage, timing it and reporting a failure with its name.
func (c *conn) runStep(s step) bool {
	if err := s.f(); err != nil {
		c.fail(s.stage, err, protocol.ExitSetup)
		return false
	}
	c.lap(string(s.stage))
	return true
}

func run(started time.Time) int {
	if os.Getpid() != 1 {
		_, _ = os.Stderr.WriteString("scidex-jail: this is the jail's internal init; use `scidex-jail run`\n")
		return protocol.ExitSetup
	}
	// Our own file, which the supervisor execed us by: nothing more to do
	// with it, and no host file stays open in the view.
	unix.Close(protocol.ProgFD)
	// Named for ps, where the exec by /proc/self/fd/4 named us "4": one
	// prctl on this thread, the leader, whose comm ps shows.
	slot := len(os.Args) > 1 && os.Args[1] == protocol.SlotArg
	name := protocol.InitComm
	if slot {
		name = protocol.SlotComm
	}
	setComm(name)
	sock := os.NewFile(protocol.SyncFD, "sync")
	unix.CloseOnExec(protocol.SyncFD)
	rr := newRightsReader(protocol.SyncFD)
	var arrival time.Time // of the config's first bytes
	rr.arrived = func() {
		if arrival.IsZero() {
			arrival = time.Now()
		}
	}
	c := &conn{sock: sock, r: bufio.NewReader(rr), last: started}
	if started.IsZero() {
		c.last = time.Now()
	}
	// First, the version this init was built as: the supervisor sends
	// "go" only to an init of its own version (the config has no
	// compatibility rule across versions).
	// A failed write: the supervisor is gone, and the pdeathsig ends us.
	_, _ = sock.Write(protocol.HelloLine(buildversion.Version))
	// The init's own start: its exec and Go runtime, as the kernel counts
	// them; the supervisor's spawn phase overlaps with it.
	c.lap("runtime")
	// Before anything of the analysis exists: what it sends PID 1 is
	// either forwarded or dropped by the kernel, never the Go runtime's
	// crash (signals.go). The forwarded signals are registered beside the
	// setup, and waited for before the fork.
	if err := shutOutSignals(); err != nil {
		return c.fail(protocol.StageInit, err, protocol.ExitSetup)
	}
	inbound := startInbound()

	cfg, err := readConfig(c.r)
	if err != nil {
		return c.fail(protocol.StageConfig, err, protocol.ExitSetup)
	}
	var ahead *heldView
	if cfg.View {
		// A slot's view, ahead of its run (ahead.go): built now, the
		// run's part of its config after it.
		if ahead = c.buildAhead(cfg, slot); ahead == nil {
			return protocol.ExitSetup
		}
		arrival = time.Time{}
	}
	found := &protocol.Started{}
	ok := false
	setUp := func() { cfg, ok = c.setUp(cfg, ahead, rr, &arrival, found) }
	if ahead != nil {
		// On the helper's thread, from the run's config to "go" (the
		// mounts need it): the main thread, confined, waits and is
		// woken once, to fork.
		ahead.helper.do(setUp)
	} else {
		setUp()
	}
	if !ok {
		return protocol.ExitSetup
	}
	if cfg.Stdio && slot {
		setComm(protocol.InitComm) // it has its run; on the leader, whose comm ps shows
	}
	sigs := <-inbound
	pid, execAt, code := c.startTarget(cfg, found, ahead == nil)
	if pid == 0 {
		return code
	}
	t := &tree{target: pid}
	released := make(chan struct{})
	go obey(c.r, t, released)
	go passInbound(t, sigs)
	ws, reaped := t.reapAll()
	m := exitedMsg(ws, reaped.Sub(execAt))
	// Every other process of the run is reaped: the init's copies of the
	// analysis' stdio are the last writers of the supervisor's relay
	// pipes. Closed before the report of the end, so that the streams end
	// with it, not with the init's exit: a served run's reply waits for
	// the streams, and not for that exit (supervise/later.go).
	closeStdio()
	c.send(&m)
	// Stay, with nothing else left in the namespace, until the supervisor
	// has read the run directory through our root (a tmpfs run directory
	// lives only as long as this mount namespace).
	<-released
	return m.ExitCode
}

// setUp is the run's setup up to "go": its config (cfg, or for a slot
// whose view was built ahead, the run's part of it that follows,
// completed from the view), its stdio, the setup steps and the wait for
// "go". false: a step failed, and the init reported it.
func (c *conn) setUp(cfg *protocol.Config, ahead *heldView, rr *rightsReader, arrival *time.Time, found *protocol.Started) (*protocol.Config, bool) {
	var err error
	if ahead != nil {
		if cfg, err = readConfig(c.r); err == nil {
			cfg, err = ahead.complete(cfg)
		}
	}
	if err == nil {
		err = installStdio(cfg.Stdio, rr.take())
	}
	if err != nil {
		c.fail(protocol.StageConfig, err, protocol.ExitSetup)
		return cfg, false
	}
	if cfg.Stdio {
		// A slot's init, started ahead: its wait for a run is the
		// slot's idle time, no part of the run's.
		c.lapAt("slot", *arrival)
	}
	c.lap(string(protocol.StageConfig))
	if ahead != nil && !ahead.setUp(c, cfg, found) || ahead == nil && !c.runSteps(setupSteps(cfg, found)) {
		return cfg, false
	}
	return cfg, c.runStep(step{protocol.StageWaitGo, func() error { return waitGo(c.r) }})
}

// startTarget forks and execs the target from this thread and reports it
// started (found, what the setup found, with its pid and phases); on failure it reports the error and returns pid 0 and the exit
// code (126 cannot execute, 127 not found). check: the thread's
// confinement is checked first (a slot's init checked it ahead, ahead.go).
func (c *conn) startTarget(cfg *protocol.Config, found *protocol.Started, check bool) (pid int, execAt time.Time, code int) {
	start := c.last
	if check {
		if err := confined(cfg.UID, cfg.GID, cfg.Groups, cfg.Security.Seccomp != nil); err != nil {
			return 0, time.Time{}, c.fail(protocol.StageExec, err, protocol.ExitSetup)
		}
	}
	path, code, err := lookCommand(cfg.Command[0], cfg.Env, cfg.RunDir)
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
			// A session of its own, with no controlling terminal (as
			// bubblewrap's --new-session): in the caller's session the
			// analysis could make itself the terminal's foreground
			// process group (TIOCSPGRP), taking ^C from the jail and
			// stopping its output, or push input into the caller's shell
			// (TIOCSTI, which seccomp alone stopped). Now the kernel
			// refuses both: the terminal is not its controlling one, and
			// it cannot take it (TIOCSCTTY: the terminal has a session).
			// A ^C at the caller reaches the jail, whose process group is
			// the foreground one, and cancels the run.
			Sys: &syscall.SysProcAttr{Setsid: true},
		})
		code = execErrorCode(err)
		if err != nil {
			err = wrap.Error("exec "+path, err)
		}
	}
	if err != nil {
		return 0, execAt, c.fail(protocol.StageExec, err, code)
	}
	found.Pid, found.Micros, found.Phases = pid, time.Since(start).Microseconds(), c.phases
	c.send(found)
	return pid, execAt, 0
}

// exitedMsg is the report of the target's end: its status, the resources
// of every process of the run (all reaped by now), its wall time.
func exitedMsg(ws unix.WaitStatus, wall time.Duration) protocol.Exited {
	var ru unix.Rusage
	unix.Getrusage(unix.RUSAGE_CHILDREN, &ru)
	m := protocol.Exited{UserUsec: protocol.Micros(ru.Utime), SysUsec: protocol.Micros(ru.Stime), MaxRSSKB: ru.Maxrss,
		WallUsec: wall.Microseconds()}
	switch {
	case ws.Exited():
		m.Exited, m.ExitCode = true, ws.ExitStatus()
	case ws.Signaled():
		m.Signal = int(ws.Signal())
		m.ExitCode = 128 + m.Signal
	}
	return m
}

// readConfig reads the init's config, one line of JSON.
func readConfig(r *bufio.Reader) (*protocol.Config, error) {
	line, err := protocol.ReadLine(r, protocol.MaxConfigBytes)
	if err != nil {
		return nil, wrap.Error("read config from supervisor", err)
	}
	cfg, err := protocol.DecodeConfig(line)
	if err != nil {
		return nil, wrap.Error("decode config from supervisor", err)
	}
	return cfg, nil
}

// setComm sets this thread's name (comm, in ps and /proc/PID/comm); a
// failure leaves the name the exec gave, and costs nothing else.
func setComm(name string) {
	b := append([]byte(name), 0)
	_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(&b[0])), 0, 0, 0)
}
