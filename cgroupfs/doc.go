// Package cgroupfs gives each jail run a hand-managed cgroup leaf: memory,
// CPU and PID limits written before anything runs in it, usage read back
// afterwards, a clean kill of everything inside, and removal.
//
// # Backends
//
// One Limits/Usage API, two small backends chosen by probing the host:
//
//   - cgroup v2 (unified): used when the cgroup2 parent offers the memory
//     controller. Limits go to memory.max, memory.swap.max, cpu.max and
//     pids.max; usage comes from memory.peak (5.19+), memory.events,
//     pids.events and cpu.stat; Kill writes cgroup.kill (5.14+; before that
//     the leaf is frozen and every process is sent SIGKILL). The leaf's
//     directory fd ([Leaf.FD]) lets the supervisor start its child inside the
//     leaf with CLONE_INTO_CGROUP (5.7+, Go's SysProcAttr.UseCgroupFD), so
//     there is no moment in which the child runs unlimited.
//   - cgroup v1 (hybrid hosts whose memory, cpu and pids controllers are
//     still on v1): one leaf per hierarchy (memory, cpu, cpuacct when it is a
//     separate mount, pids), limits in memory.limit_in_bytes,
//     memory.memsw.limit_in_bytes, cpu.cfs_quota_us and pids.max, usage from
//     memory.max_usage_in_bytes, memory.failcnt, memory.oom_control
//     (oom_kill needs 4.13+), pids.events, cpuacct.* and cpu.stat. There is
//     no CLONE_INTO_CGROUP on v1: fork the child from a thread that moved
//     itself into the leaf ([Leaf.EnterThread]: cheap, and the child is
//     born there), or start it blocked, [Leaf.AddProcess] it (the kernel's
//     global lock and an RCU grace period), then let it go.
//
// What the limits write is data first. One ordered list of controllers
// (controllers.go: memory, cpu, cpuacct, pids) gives each its name on
// cgroup v2, its hierarchy's name on v1 (they may differ: v2's io is
// v1's blkio), the kernel option that builds it, the keys of [Limits] it
// reads with the form of each key's [Value] (a whole number, a CPU
// quota, or one value per block device, as io.max takes), whether every
// leaf needs it or only limits that set its keys, what it writes and how
// its counters are read back; its own file (memory.go, cpu.go, pids.go)
// holds those functions. [Settings] lists the files and their values, and
// one loop writes them; [Keys] lists the keys, [Needs] the controllers a
// leaf with given limits requires on a version, and [Info.Missing] the
// error (with its fix) for those a probed parent lacks, which `scidex-jail
// check` prints. A new limit of the leaf is a row of the list (or a key
// of one) and its file, with no line elsewhere in the package; nothing
// registers itself.
//
// The report names the version used ([Leaf.Version]) and the values
// written ([Leaf.Written]): that list, with v2's two setup writes (the
// parent's cgroup.subtree_control, the supervisor's move into its own
// leaf) when they were needed; a file written once per device holds its
// values one a line. [Leaf.MemoryCurrent] is the usage now
// (memory.current, memory.usage_in_bytes), and [Leaf.Controllers] the v1
// controllers the leaf has directories for: what the jail needs to show
// the analysis its own limits.
//
// # Where leaves go
//
// A leaf is created only below a delegated parent: [Config.Parent], or by
// default the calling process's own cgroup (what systemd's Delegate=yes, a
// container's cgroup namespace or a batch scheduler hands out). Nothing is
// created outside that subtree and no existing cgroup is written to, with
// one exception on v2: to enable controllers in the parent's
// cgroup.subtree_control the parent must hold no processes (the "no internal
// processes" rule), so when the parent is the caller's own cgroup and the
// kernel refuses with EBUSY, the caller moves itself into the sibling leaf
// <parent>/scidex-supervisor and tries again. That leaf is shared by every
// jail started from the same parent and is left in place. Controllers
// enabled in the parent are left enabled, since other leaves may use them.
//
// Only the controllers needed are required: memory always (peak and OOM
// accounting), cpu when the CPUsKey limit is set, pids when PIDsKey is;
// cpuacct (v1) is taken when mounted. A missing controller or a parent
// this process may not write is an error that errors.Is [ErrUnsupported]
// and says what was found and how to fix it.
//
// # Usage
//
// As ExampleCreate and ExampleHost_RemoveStale (compiled with the tests):
//
//	leaf, err := cgroupfs.Create(cgroupfs.Config{
//		Name:   "scidex-" + runID,
//		Limits: cgroupfs.Limits{cgroupfs.MemoryKey: {N: 2 << 30}, cgroupfs.CPUsKey: {CPUs: 1}, cgroupfs.PIDsKey: {N: 256}},
//	})
//	if err != nil {
//		return fmt.Errorf("cgroup leaf: %w", err)
//	}
//	defer leaf.Remove()
//	if fd, ok := leaf.FD(); ok {
//		cmd.SysProcAttr.UseCgroupFD, cmd.SysProcAttr.CgroupFD = true, fd
//		err = cmd.Start()
//	} else {
//		err = cmd.Start() // child waits for a go-ahead ...
//		if err == nil {
//			err = leaf.AddProcess(cmd.Process.Pid) // ... given after this
//		}
//	}
//	...
//	usage, err := leaf.Usage()
//	err = leaf.Remove() // kills whatever is left, waits, removes the leaf
//
// A leaf holds its counter files open from Create to Remove (nine on v1):
// each Usage reads them again from their start, fresh, without opening
// them, which was most of its cost.
//
// [Probe] reports what the host offers without creating anything; `scidex-jail
// check` prints it.
//
// # Leftovers
//
// A leaf's owner holds a lock on it; an owner killed with SIGKILL cannot
// remove its leaf, and [RemoveStale] takes such leftovers (unlocked, old
// enough, empty) later. A run that sweeps before it creates reads the host
// once ([ReadHost]) and uses that [Host] for both, rather than reading and
// parsing the mount table twice:
//
//	h, err := cgroupfs.ReadHost()
//	if err != nil {
//		return err
//	}
//	gone, err := h.RemoveStale(cfg, "scidex-", 2*time.Second) // a warning, not fatal
//	...
//	leaf, err := h.Create(cfg)
package cgroupfs
