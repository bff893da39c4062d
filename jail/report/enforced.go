package report

import "github.com/scidex/scidex-jail/jail/promise"

// EnforcedReport is what was in force while the target ran.
type EnforcedReport struct {
	Namespaces   []string                            `json:"namespaces"`
	HostUID      int                                 `json:"host_uid"`
	HostGID      int                                 `json:"host_gid"`
	UID          int                                 `json:"uid"` // inside the user namespace
	Identity     IdentityReport                      `json:"identity"`
	NoNewPrivs   bool                                `json:"no_new_privs"`
	Capabilities string                              `json:"capabilities"`
	Net          string                              `json:"net"`
	AllowTCP     []uint16                            `json:"allow_tcp"` // outbound TCP ports (net host only)
	Mounts       MountReport                         `json:"mounts"`
	CPUs         string                              `json:"cpus"`     // the CPUs the analysis could run on (a kernel CPU list), as /sys/devices/system/cpu/online showed them
	Landlock     *LandlockReport                     `json:"landlock"` // null: disabled by --unsafe-disable
	Seccomp      *SeccompReport                      `json:"seccomp"`  // null: disabled by --unsafe-disable
	Cgroup       *CgroupReport                       `json:"cgroup"`   // null: disabled by --unsafe-disable
	Promises     map[promise.Promise][]promise.Layer `json:"promises"` // promise -> the layers that hold it on this run
	Degraded     []string                            `json:"degraded"` // promises holding with fewer layers than required (explicit opt-in only)
}

// MountReport is the target's filesystem view.
type MountReport struct {
	Generated []string `json:"generated"`  // the view's own files over the host's: the analysis' /etc/passwd and /etc/group
	ReadOnly  []string `json:"read_only"`  // host paths bound read-only (besides the system dirs)
	ReadWrite []string `json:"read_write"` // host paths bound writable (besides the run directory)
	System    []string `json:"system"`     // bound read-only from the host
	RunDir    string   `json:"run_dir"`    // "tmpfs, N bytes" or "bound from the host"
	Scratch   string   `json:"scratch"`    // where HOME, TMPDIR and the caches were, and what bounded them
	DataDirs  []string `json:"data_dirs"`  // each data dir of the profile: its host path and its link in the run directory, or why it is not there
	Meminfo   string   `json:"meminfo"`    // what /proc/meminfo showed: the run's limit or the host's
	ShmBytes  int64    `json:"shm_bytes"`
}

// LandlockReport is the Landlock ruleset in force.
type LandlockReport struct {
	ABI      int      `json:"abi"`      // of the running kernel
	Required int      `json:"required"` // what the policy needs in full
	Rules    []string `json:"rules"`    // e.g. "rx /usr", "ro /work/data", "rw /tmp/scidex-analysis-x", "tcp-connect 443"
	Degraded []string `json:"degraded"` // rights this kernel's Landlock does not enforce (other layers may hold the promise: see promises)
}

// SeccompReport is the filter in force: the plan tells it from its policy
// and the program the init loads for it (seccomp.Lookup).
type SeccompReport struct {
	Policy string   `json:"policy"` // rule set / network mode
	Arch   string   `json:"arch"`
	SHA256 string   `json:"sha256"` // of the loaded BPF program
	Denied []string `json:"denied"` // what the filter refuses, one line per rule of seccomp's table
}

// CgroupReport is the run's cgroup leaf: where, which version, what was
// written and what was used.
type CgroupReport struct {
	Version int               `json:"version"`
	Paths   []string          `json:"paths"`
	Written map[string]string `json:"written"` // file -> value, as written before the target started
	Usage   *CgroupUsage      `json:"usage,omitempty"`
}

// CgroupUsage is what the leaf counted (cgroupfs.Usage, as the run's own:
// a slot's counters taken off). A counter the kernel does not provide is 0.
type CgroupUsage struct {
	PeakMemoryBytes int64 `json:"peak_memory_bytes"` // v2 memory.peak; v1 memory.max_usage_in_bytes
	OOMKills        int64 `json:"oom_kills"`
	MemoryLimitHits int64 `json:"memory_limit_hits"`
	PIDsLimitHits   int64 `json:"pids_limit_hits"`

	CPUUsageUsec  int64 `json:"cpu_usage_us"`
	CPUUserUsec   int64 `json:"cpu_user_us"`
	CPUSystemUsec int64 `json:"cpu_system_us"`
	NrPeriods     int64 `json:"cpu_nr_periods"`
	NrThrottled   int64 `json:"cpu_nr_throttled"`
	ThrottledUsec int64 `json:"cpu_throttled_us"`
}
