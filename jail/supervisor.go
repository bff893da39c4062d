package jail

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// cancelSignals end the run when the jail receives them; the rest of
// forwarded only pass through to the target.
var cancelSignals = map[os.Signal]bool{unix.SIGTERM: true, unix.SIGINT: true, unix.SIGHUP: true}

// namespaces is the fixed set; the network namespace is left out only in
// the host network mode.
var namespaces = []struct {
	name string
	flag uintptr
}{
	{"user", unix.CLONE_NEWUSER}, {"mount", unix.CLONE_NEWNS}, {"pid", unix.CLONE_NEWPID},
	{"net", unix.CLONE_NEWNET}, {"ipc", unix.CLONE_NEWIPC}, {"uts", unix.CLONE_NEWUTS},
	{"cgroup", unix.CLONE_NEWCGROUP},
}

// initCaps are what the init needs for its setup, in its own namespaces
// only: mounts, pivot_root and sethostname (SYS_ADMIN), the drop to the
// target's identity (SETUID, SETGID, SETPCAP for the bounding set), bringing
// up lo (NET_ADMIN).
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN}

// supervisor is the state of one run in the parent.
type supervisor struct {
	spec   *Spec
	rep    *Report
	dir    *runDir
	cmd    *exec.Cmd
	sock   *os.File
	t0     time.Time
	tStart time.Time // target started

	msgs    chan initMsg
	started bool
	exited  *initMsg
	failed  *initMsg

	timedOut, cancelled bool
	killTimer           *time.Timer
	pendingSig          syscall.Signal
}

// Run runs the spec to completion and returns its report. The error is
// non-nil only when the run could not begin at all (bad input, the ID in
// use): then nothing was created and there is no report.
func Run(s *Spec) (*Report, error) {
	sv := &supervisor{spec: s, t0: time.Now(), msgs: make(chan initMsg, 16)}
	if err := s.Validate(); err != nil {
		return nil, err
	}
	sv.rep = newReport(s, sv.t0)
	sv.phase("validate", sv.t0)

	// Registered before anything exists on disk: a SIGTERM from here on
	// cancels the run and still cleans up.
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)

	t := time.Now()
	dir, stale, err := createRunDir(s.TmpRoot, s.ID, s.HostUID, s.HostGID)
	if err != nil {
		return nil, err
	}
	sv.dir = dir
	if stale {
		sv.rep.Warnings = append(sv.rep.Warnings, "removed a leftover run directory of a dead earlier run with this ID")
	}
	sv.phase("rundir", t)

	if err := sv.spawn(); err != nil {
		sv.setupFailed("spawn", err.Error(), 125)
	} else {
		sv.loop(sigs)
	}
	sv.finish()
	return sv.rep, nil
}

func (sv *supervisor) phase(name string, since time.Time) {
	sv.rep.Phases = append(sv.rep.Phases, Phase{Name: name, Where: "supervisor", Micros: time.Since(since).Microseconds()})
}

// spawn starts the init in its new namespaces and sends it its config.
func (sv *supervisor) spawn() error {
	t := time.Now()
	fds, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("socketpair: %w", err)
	}
	parent, child := os.NewFile(uintptr(fds[0]), "sync"), os.NewFile(uintptr(fds[1]), "sync-init")
	defer child.Close()
	sv.sock = parent

	attr, setgroups := sv.sysProcAttr()
	sv.cmd = &exec.Cmd{
		Path:        "/proc/self/exe",
		Args:        []string{"scidex-jail", initArg},
		Env:         []string{},
		Stdin:       os.Stdin,
		Stdout:      os.Stdout,
		Stderr:      os.Stderr,
		ExtraFiles:  []*os.File{child}, // fd 3 = initSyncFD
		SysProcAttr: attr,
	}
	if err := sv.cmd.Start(); err != nil {
		return explainSpawnError(err)
	}
	sv.phase("spawn", t)

	t = time.Now()
	go sv.readInit()
	cfg := sv.initConfig(setgroups)
	if err := json.NewEncoder(parent).Encode(cfg); err != nil {
		return fmt.Errorf("send config to init: %w", err)
	}
	sv.phase("config", t)
	return nil
}

func (sv *supervisor) sysProcAttr() (*syscall.SysProcAttr, bool) {
	var flags uintptr
	for _, ns := range namespaces {
		flags |= ns.flag
	}
	uid, gid, setgroups := sv.spec.HostUID, sv.spec.HostGID, true
	if os.Geteuid() != 0 {
		// Rootless: the only uid we may map is our own, and setgroups
		// must be denied before an unprivileged gid_map write.
		uid, gid, setgroups = os.Geteuid(), os.Getegid(), false
	}
	return &syscall.SysProcAttr{
		Cloneflags: flags,
		// The init runs as an unmapped uid until it drops to InsideUID:
		// an execve by a non-root uid would empty its capability sets, so
		// the ones setup needs cross the exec as ambient capabilities.
		// dropIdentity clears them all.
		AmbientCaps: initCaps,
		// Mapped from the start: files the init creates in its tmpfs need
		// a mapped owner (an unmapped one fails with EOVERFLOW).
		Credential:                 &syscall.Credential{Uid: InsideUID, Gid: InsideUID, NoSetGroups: !setgroups},
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: uid, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: gid, Size: 1}},
		GidMappingsEnableSetgroups: setgroups,
		// If the supervisor dies, even of SIGKILL, the kernel kills the
		// init, and with PID 1 gone, every process of its namespace.
		Pdeathsig: unix.SIGKILL,
		// Own process group: a terminal's Ctrl-C reaches the supervisor
		// only, which forwards it once.
		Setpgid: true,
	}, setgroups
}

func (sv *supervisor) initConfig(setgroups bool) *initConfig {
	s := sv.spec
	host := "scidex-" + s.ID
	if len(host) > 64 {
		host = host[:64]
	}
	return &initConfig{
		Command:   s.Command,
		Env:       s.TargetEnv(),
		RunDir:    sv.dir.path,
		Hostname:  host,
		UID:       InsideUID,
		GID:       InsideUID,
		Setgroups: setgroups,
		Net:       "none",
		Mounts: mountPlan{
			System:    hostSystemEntries(),
			ReadWrite: []string{sv.dir.path},
			ShmBytes:  64 << 20,
		},
	}
}

func explainSpawnError(err error) error {
	if errors.Is(err, unix.EPERM) || errors.Is(err, unix.ENOSPC) || errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("start the init in new namespaces: %w; user namespaces may be disabled: check sysctl user.max_user_namespaces (must be > 0), kernel.unprivileged_userns_clone=1 (Debian), kernel.apparmor_restrict_unprivileged_userns=0 (Ubuntu 24.04), or the container's seccomp profile", err)
	}
	return fmt.Errorf("start the init: %w", err)
}

// readInit turns the init's messages into events until the socket closes.
func (sv *supervisor) readInit() {
	defer close(sv.msgs)
	dec := json.NewDecoder(sv.sock)
	for {
		var m initMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		sv.msgs <- m
	}
}

// loop waits for the init to finish while handling the timeout and signals.
func (sv *supervisor) loop(sigs chan os.Signal) {
	waited := make(chan error, 1)
	go func() { waited <- sv.cmd.Wait() }()
	var timeout <-chan time.Time
	if sv.spec.Timeout > 0 {
		tm := time.NewTimer(sv.spec.Timeout)
		defer tm.Stop()
		timeout = tm.C
	}
	msgs := sv.msgs
	done := false
	for !done || msgs != nil {
		select {
		case m, ok := <-msgs:
			if !ok {
				msgs = nil
				continue
			}
			sv.handle(m)
		case <-waited:
			done = true
			waited = nil
		case <-timeout:
			if sv.exited == nil && !sv.cancelled {
				sv.timedOut = true
				sv.stop(unix.SIGTERM)
			}
		case s := <-sigs:
			if cancelSignals[s] && sv.exited == nil && !sv.timedOut {
				sv.cancelled = true
				sv.stop(s.(syscall.Signal))
				continue
			}
			sv.cmd.Process.Signal(s)
		}
	}
	if sv.killTimer != nil {
		sv.killTimer.Stop()
	}
	sv.sock.Close()
}

// stop asks the target to end (the init forwards sig) and arms the kill
// that ends the whole tree after the grace period. Before the init has
// reported the target started, the signal is held and sent on "started":
// an init still in setup has no handler yet and would drop it.
func (sv *supervisor) stop(sig syscall.Signal) {
	sv.pendingSig = sig
	if sv.started {
		sv.cmd.Process.Signal(sig)
	}
	if sv.killTimer == nil {
		sv.killTimer = time.AfterFunc(sv.spec.Grace, func() { sv.cmd.Process.Kill() })
	}
}

func (sv *supervisor) handle(m initMsg) {
	switch m.Kind {
	case "phase":
		sv.rep.Phases = append(sv.rep.Phases, Phase{Name: m.Phase, Where: "init", Micros: m.Micros})
	case "error":
		sv.failed = &m
	case "started":
		sv.started = true
		sv.tStart = time.Now()
		sv.rep.Phases = append(sv.rep.Phases, Phase{Name: "exec", Where: "init", Micros: m.Micros})
		sv.recordEnforced(m.Enforced)
		if sv.pendingSig != 0 {
			// A cancel or the timeout came during setup.
			sv.cmd.Process.Signal(sv.pendingSig)
		}
	case "exited":
		sv.exited = &m
	}
}

func (sv *supervisor) setupFailed(stage, msg string, code int) {
	sv.failed = &initMsg{Kind: "error", Stage: stage, Error: msg, ExitCode: code}
}
