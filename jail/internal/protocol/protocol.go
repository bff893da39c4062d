// Package protocol is everything the jail's two processes say to each
// other: the supervisor (supervise.Run, in the caller's process) and the init
// (package initproc, the program cmd/scidex-jail-init, PID 1 of the run's
// namespaces). Both import it; neither imports the other, so the message
// kinds, the config the init receives and the exit codes they share are
// written once, here.
//
// They talk over one unix stream socket, inherited by the init as fd 3
// (SyncFD). Messages are JSON objects, one per line, each of one kind
// with a type of its own: the init's are InitMsg (Hello, SocketsMade,
// SetupFailed, Started, Exited, Ready), the supervisor's after the config SupervisorMsg (Go,
// Kill, Signal). Each side reads a line at most so long (ReadLine) and
// decodes it with one function (DecodeInitMsg, DecodeSupervisorMsg) that
// refuses anything malformed, unknown or of the wrong shape, naming it: a
// supervisor that gets such a line from the init ends the run as a setup
// failure at StageInit, as it would for an init that died.
//
//	supervisor                                  init (PID 1, new namespaces)
//	    |  exec the opened init file (fd 3) -------->|
//	    |<-- {kind:"hello", version} ----------------|  first thing, then blocks
//	    |-- Config -------------------------------->|  reading fd 3
//	    |   (no "go" unless the hello came first     |
//	    |   and its version is the supervisor's own) |
//	    |   (a slot's init, ahead of its run: a      |
//	    |   Config with view set, answered by        |
//	    |   {kind:"ready", phases} once the view is  |
//	    |   built and its forking thread confined;   |
//	    |   the run's part of its Config follows     |
//	    |   (RunPart: a digest for the rest), with   |
//	    |   its stdio,                               |
//	    |   and the init only names the run          |
//	    |   directory, sets the hostname and hands   |
//	    |   the sockets, from an unconfined thread)  |
//	    |                                            |  mounts, hostname, network,
//	    |<-- {kind:"sockets", n} + descriptors ------|  (a mode with a hook only:
//	    |                                            |  sockets.go)
//	    |                                            |  identity, landlock, fds,
//	    |                                            |  seccomp
//	    |-- {kind:"go"} ---------------------------->|  waits for it before the exec
//	    |<-- {kind:"error", stage, phases} ----------|  (on any failure, any time
//	    |    and exit 125                            |  before the target runs)
//	    |<-- {kind:"started", pid, landlock, cpus, --|  target running
//	    |     phases}                                |
//	    |-- {kind:"signal", signal} ---------------->|  init forwards it to the target
//	    |-- {kind:"kill"} (grace over) ------------->|  init SIGKILLs every other
//	    |                                            |  process of the namespace
//	    |<-- {kind:"exited", status, rusage, wall} --|  target reaped, rest killed;
//	    |                                            |  the init waits, the run
//	    |  read the run directory through            |  directory still mounted
//	    |  /proc/<init>/root                         |
//	    |-- shutdown(SHUT_WR): "released" ---------->|  end of file on fd 3
//	    |                                            |  exits with the target's
//	    |                                            |  status; the kernel tears
//	    |                                            |  the namespaces down
//
// The init says what it found that the plan cannot know (the Landlock ABI
// and what it lacked, the CPUs it pinned), never what the supervisor
// planned: the report's Landlock rules and seccomp filter follow from the
// plan's policies (landlock.Policy.Rules, seccomp.Lookup).
//
// The init's setup phases travel in its one message at the end of setup
// ("started" or "error"), not one message each: every message wakes the
// supervisor, which shares the CPUs with the init while it sets up.
// Signals for the target travel as messages too: the init registers no
// signal handler before the target runs (os/signal's start costs about
// half a millisecond of thread hand-offs), and as PID 1 it would receive
// none without one.
//
// The config travels over the socket, never argv or the environment, so
// nothing of it shows in /proc/<pid>/cmdline or environ. The init cannot
// start the target before the supervisor has sent "go": a cancel that comes
// during setup ends the init before any of the analysis runs. The release is the end of the
// supervisor's side of the stream, not a message: a supervisor that dies
// releases the init all the same (and its parent-death signal ends it).
package protocol

import (
	"os"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/landlock"
	"github.com/scidex/scidex-jail/seccomp"
)

const (
	// SyncFD is the socket's fd number in the init.
	SyncFD = 3
	// ProgFD is the init program's own file as the forked child holds
	// it: the supervisor execs /proc/self/fd/4. The init closes it first.
	ProgFD = 4
	// SlotArg is the init's argv[1] when it is a slot, started ahead of
	// its run (its argv[0] is childmode.Init): it names itself for ps.
	SlotArg = "slot"
	// InitComm and SlotComm are the init's name in ps (its comm, 15 bytes
	// at most), where the exec by /proc/self/fd/4 made it "4": a slot
	// waiting for a run, then the run's init. The analysis' exec gives
	// the analysis its own.
	InitComm = "sj-init"
	SlotComm = "sj-slot"
	// InsideUID is the uid and gid of the target inside its user namespace.
	InsideUID = 1000
	// AnalysisHome is the analysis' HOME inside the view: its per-run
	// scratch space (caches, configuration, TMPDIR below it), never an
	// output. The one place it is written: the environment, the mount
	// view and the user database inside all take it from here.
	AnalysisHome = "/home/analysis"
	// ScratchKeptName is the scratch's directory in the run directory
	// when it is kept for debugging (Mounts.KeepScratch).
	ScratchKeptName = ".scidex-scratch"
)

// Exit statuses of the jail's own failures, as in env(1), nohup(1) and
// docker run; the target's own status otherwise, 128+n for signal n.
const (
	ExitSetup         = 125 // the jail failed before the target ran
	ExitCannotExecute = 126 // the command exists but cannot be executed inside
	ExitNotFound      = 127 // the command is not found inside
)

// Forwarded are the signals the supervisor passes to the target, as
// Signal messages to the init. SIGTERM, SIGINT and SIGHUP also cancel
// the run. The init also handles them itself, from before it forks the
// target: one the analysis sends to PID 1 (kill 1) goes on to the target
// instead of ending the init.
var Forwarded = []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2}

// Kind is a message's "kind" on the wire: which type it is.
type Kind string

const (
	// init -> supervisor
	KindHello   Kind = "hello"   // Hello
	KindError   Kind = "error"   // SetupFailed
	KindStarted Kind = "started" // Started
	KindExited  Kind = "exited"  // Exited
	KindReady   Kind = "ready"   // Ready
	// supervisor -> init
	KindGo     Kind = "go"     // Go
	KindKill   Kind = "kill"   // Kill
	KindSignal Kind = "signal" // Signal
)

// MaxConfigBytes bounds the config's line, which the init refuses above
// it (ReadLine): the view's files (passwd, group) and every path of the
// run, far below it.
const MaxConfigBytes = 16 << 20

// Config is everything the init needs. Paths are host paths, checked by
// the supervisor, and the same inside: the mount view binds every host path
// at its own place.
type Config struct {
	Command   []string `json:"command"`
	Env       []string `json:"env"`
	RunDir    string   `json:"run_dir"`
	Hostname  string   `json:"hostname"`
	UID       int      `json:"uid"` // inside the user namespace
	GID       int      `json:"gid"`
	Mounts    Mounts   `json:"mounts"`
	Loopback  bool     `json:"loopback"`  // bring lo up in the run's network namespace
	Setgroups bool     `json:"setgroups"` // false when rootless: setgroups is denied in the namespace
	// Stdio: the target's stdin, stdout and stderr come with this line,
	// three descriptors (SCM_RIGHTS) the init puts at 0, 1 and 2. An init
	// started ahead of its run (a slot of scidex-jail serve) was exec'd
	// before the run's stdio was known. False: the init's own 0, 1, 2.
	Stdio bool `json:"stdio,omitempty"`
	// Groups are the supplementary groups the target keeps, as the run's
	// user namespace shows them: the run's own gid for the caller's
	// primary group, the overflow gid (65534) for every other. Empty when
	// Setgroups: the init clears them. A rootless init cannot (setgroups
	// is denied in an unprivileged user namespace, so that a group used
	// to deny access keeps denying it), and the check before the fork
	// wants exactly these.
	Groups []int `json:"groups,omitempty"`
	// View: this config is a slot's view, sent ahead of its run (a slot
	// of scidex-jail serve): the init pins its CPUs, builds Mounts with
	// the run directory at its SlotRunDir placeholder, brings lo up when
	// Loopback, confines the thread that will fork the target (identity,
	// Landlock, seccomp: ViewOf keeps them) and says Ready; the command,
	// environment, hostname and run directory's name are empty. The
	// run's own part of its config follows (RunPart, with ViewSum), and
	// the init checks it asks for the view built before it completes it
	// (Complete) and gives the run directory its name.
	View bool `json:"view,omitempty"`
	// ViewSum is a digest of a view (ViewOf), made by the supervisor: in
	// a slot's view (View), of that view; in a run's config for a slot
	// whose view was built ahead, which then carries only what the run
	// decides (RunPart), of the run's view. The init completes the run's
	// config from the view it built (Complete) only when they agree.
	ViewSum  string   `json:"view_sum,omitempty"`
	Security Security `json:"security"`
	// CPUs is how many CPUs the target may run on: the CPU quota rounded
	// up. When its affinity allows more, the init pins it to that many
	// (sched_setaffinity), so that os.sched_getaffinity, nproc and
	// os.cpu_count (through /sys/devices/system/cpu/online in the view)
	// count what the quota gives. 0: its affinity as it is.
	CPUs int `json:"cpus,omitempty"`
	// Sockets are made by the init in the run's network namespace and
	// handed to the supervisor (sockets.go); nil: none (every mode but
	// one whose row has a supervisor-side hook).
	Sockets *Sockets `json:"sockets,omitempty"`
}

// Mounts is the target's whole filesystem view, as data. The init builds it
// on a fresh tmpfs and pivots into it: nothing of the host is visible unless
// it is listed here.
type Mounts struct {
	// System entries at the root (/usr, /bin, /lib64, /etc, ...): a host
	// directory is bound read-only, a host symlink (merged /usr) is
	// recreated as the same symlink.
	System []SystemEntry `json:"system"`
	// ReadOnly host paths bound read-only at the same path (data/, docs/).
	ReadOnly []string `json:"read_only"`
	// ReadWrite host paths bound writable at the same path.
	ReadWrite []string `json:"read_write"`
	// Links are symbolic links the init makes at the top of the run
	// directory, once it is mounted: ./data to the data dir's host path,
	// so that a script reads data/x.csv from its working directory
	// through the host path's own bind, Landlock rule and report line.
	Links []Link `json:"links,omitempty"`
	// Files are made by the init and bound read-only over the view's own
	// file at each Path, which must exist (the analysis' /etc/passwd and
	// /etc/group, over the host's).
	Files []File `json:"files,omitempty"`
	// RunDir is the run directory's path. With RunDirBytes > 0 it is a
	// fresh tmpfs of that size (the disk budget), else the host directory
	// bound writable.
	RunDir      string `json:"run_dir"`
	RunDirBytes int64  `json:"run_dir_bytes"`
	// ShmBytes is the size of the private /dev/shm tmpfs.
	ShmBytes int64 `json:"shm_bytes"`
	// Scratch is where the analysis' scratch space (AnalysisHome) is
	// mounted: with RunDirBytes > 0 a directory of the run directory's
	// tmpfs beside the one bound at RunDir, so both count against one
	// budget; else a tmpfs of its own of ScratchBytes (0: the kernel's
	// default, half the memory), charged to the run's memory cgroup.
	// ScratchTmp is made in it (TMPDIR). With KeepScratch the scratch is
	// instead the run directory's ScratchKeptName subdirectory, listed
	// and collected with the outputs.
	Scratch      string `json:"scratch"`
	ScratchTmp   string `json:"scratch_tmp"`
	ScratchBytes int64  `json:"scratch_bytes"`
	KeepScratch  bool   `json:"keep_scratch"`
	// Meminfo, when set, is bound read-only over the fresh /proc/meminfo:
	// the run's memory limit as the analysis sees it, generated by the
	// supervisor as the init starts (a snapshot). "": the kernel's.
	Meminfo string `json:"meminfo,omitempty"`
	// Names: a unix socket at NamesSocket in the view, where the C
	// library asks a name service cache (nscd) before anything else, so
	// that the supervisor answers and records the analysis' name lookups
	// in a mode with no network (sockets.go: made before the root is
	// sealed, handed over with the mode's other sockets).
	Names bool `json:"names,omitempty"`
	// Cgroup, when set, is the run's cgroup leaf to show read-only at
	// /sys/fs/cgroup, as its cgroup namespace sees it (the leaf is its
	// root), so that runtimes that read their limits there find them.
	Cgroup *CgroupView `json:"cgroup,omitempty"`
}

// CgroupView is the run's leaf: on cgroup v2 the one hierarchy; on v1 the
// hierarchies holding Controllers (memory, cpu, cpuacct, pids), each
// mounted with its full set of co-mounted controllers, as the host does.
type CgroupView struct {
	Version     int      `json:"version"`
	Controllers []string `json:"controllers,omitempty"`
}

// CgroupMount is where the view shows the run's cgroup leaf.
const CgroupMount = "/sys/fs/cgroup"

// File is one file of the view that the init writes: its path in the view
// and its whole content.
type File struct {
	Path    string `json:"path"`
	Content string `json:"content"`
}

// Link is one symbolic link in the run directory: its name there and its
// target, an absolute path of the view.
type Link struct {
	Name   string `json:"name"`
	Target string `json:"target"`
}

// SystemEntry is one system path of the host at the root of the view.
type SystemEntry struct {
	Path    string `json:"path"`
	Symlink string `json:"symlink,omitempty"` // non-empty: recreate as this link
}

// Security is what the init enforces on itself, and so on the target,
// after the mount view and the identity drop. A nil policy is a layer the
// caller disabled by name.
type Security struct {
	Landlock *landlock.Policy `json:"landlock,omitempty"`
	Seccomp  *seccomp.Policy  `json:"seccomp,omitempty"`
}

// Phase is one setup step of the init and how long it took.
type Phase struct {
	Name   string `json:"name"`
	Micros int64  `json:"us"`
}

// HelloLine is the init's first message, {"kind":"hello","version":v}, as
// one line: the line every version of the jail writes and reads alike,
// whatever else of the wire changes. It is written before the init's
// setup, so it costs the string alone (EncodeInitMsg would write the same).
func HelloLine(version string) []byte {
	line := append([]byte(`{"kind":"`+string(KindHello)+`","version":`), appendString(nil, version)...)
	return append(line, '}', '\n')
}
