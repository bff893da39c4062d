package jail

// The supervisor and the init talk over one unix stream socket, inherited by
// the init as fd 3 (initSyncFD). Messages are JSON objects, one per line.
//
//	supervisor                                 init (PID 1, new namespaces)
//	    |  spawn /proc/self/exe init (fd 3) ------>|
//	    |                                           |  blocks reading fd 3
//	    |-- initConfig ---------------------------->|
//	    |  [cgroup v1: move init into the leaf]     |  mounts, identity, landlock,
//	    |<-- {kind:"phase"} per step ---------------|  fds, seccomp
//	    |-- {kind:"go"} --------------------------->|  waits for it before the exec
//	    |<-- {kind:"error", stage} and exit 125 ----|  (on any failure)
//	    |<-- {kind:"started", pid} -----------------|  target running
//	    |    signals: supervisor kill(init) ------->|  init forwards to the target
//	    |<-- {kind:"exited", status, rusage, wall} -|  target reaped, rest killed
//	    |    init exits with the target's status    |
//
// The config travels over the socket, never argv or the environment, so
// nothing of it shows in /proc/<pid>/cmdline or environ. The init cannot
// start the target before the supervisor has sent "go", which is what closes
// the window on cgroup v1 hosts, where the init cannot be born in the leaf
// and is moved there while it sets up.

const (
	initSyncFD = 3
	// initArg is argv[1] of the re-executed binary; main dispatches on it
	// before any flag parsing.
	initArg = "__scidex-jail-init"
)

// initConfig is everything the init needs. Paths are host paths, checked by
// the supervisor.
type initConfig struct {
	Command   []string       `json:"command"`
	Env       []string       `json:"env"`
	RunDir    string         `json:"run_dir"`
	Hostname  string         `json:"hostname"`
	UID       int            `json:"uid"` // inside the user namespace
	GID       int            `json:"gid"`
	Mounts    mountPlan      `json:"mounts"`
	Net       string         `json:"net"`
	Setgroups bool           `json:"setgroups"` // false when rootless: setgroups is denied in the namespace
	Security  securityConfig `json:"security"`
}

// initMsg is every message from the init; Kind says which fields are set.
type initMsg struct {
	Kind string `json:"kind"` // phase, error, started, exited

	Phase  string `json:"phase,omitempty"`
	Micros int64  `json:"us,omitempty"`

	Stage    string `json:"stage,omitempty"`
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code,omitempty"` // error: 125, or 126/127 for exec

	Pid int `json:"pid,omitempty"`

	Exited   bool  `json:"exited,omitempty"` // exited normally, ExitCode set
	Signal   int   `json:"signal,omitempty"`
	UserUsec int64 `json:"user_us,omitempty"`
	SysUsec  int64 `json:"sys_us,omitempty"`
	MaxRSSKB int64 `json:"maxrss_kb,omitempty"`
	// WallUsec is the target's wall time on the init's own clock, from
	// just before its exec to its reaping: the supervisor hears of both
	// ends late, and by different amounts under load.
	WallUsec int64 `json:"wall_us,omitempty"`

	Enforced *enforcedInit `json:"enforced,omitempty"`
}

// supervisorMsg is every message to the init after the config.
type supervisorMsg struct {
	Kind string `json:"kind"` // go: the target may start (it is in its cgroup); kill: SIGKILL every other process now
}
