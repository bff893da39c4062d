// Package jail runs one untrusted analysis to completion in a sandbox and
// reports how it ended. It is the only package that knows every kernel
// facility: it drives landlock, seccomp and cgroupfs, and builds the
// namespaces and the mount view itself.
//
// A run, in order:
//
//	Spec.Validate                 checks, limits (limits.go), paths resolved
//	                              (paths.go), destinations (destinations.go);
//	                              ErrBadSpec says what to fix
//	sweepLeftovers                what dead jails left in the tmp-root and the
//	                              report directory (sweep.go)
//	holdPromises                  the layers that hold each promise on this
//	                              host (promises.go); fail closed per promise
//	createRunDir                  <tmp-root>/scidex-analysis-<id>, fresh, locked,
//	                              marked
//	cgroupfs.Create               the leaf, limits written before anything runs
//	spawn                         /proc/self/exe as PID 1 of new user, mount,
//	                              pid, net, ipc, uts, cgroup namespaces;
//	                              config over fd 3 (protocol.go)
//	init: buildMountView          new read-only root, pivot_root
//	init: dropIdentity            uid 1000, no capabilities, no_new_privs
//	init: landlock.Restrict       file, TCP and scope rules
//	init: seccomp Load            last, then "go" from the supervisor, then exec
//	supervise                     signals, timeout + grace, the init's report
//	outputs                       listed (and collected) through /proc/<init>/root
//	cleanup                       cgroup usage and removal, run directory removal
//	deliverReport                 the report, atomically (deliver.go); a failed
//	                              delivery is status delivery_failed, exit 122
//
// A cancel (SIGTERM, SIGINT, SIGHUP on the channel given to Run) is taken
// between every step up to the target's start, and ends the run there.
//
// Use:
//
//	profiles, _, err := jail.LoadProfiles("")      // built-ins + /etc/scidex-jail/profiles.json
//	p := profiles["default"]
//	spec := &jail.Spec{ID: "SDA-1", Command: []string{"python3", "script.py"},
//		TmpRoot: "/tmp", Root: "/srv/platform", DataDirs: p.DataDirs,
//		Timeout: p.Timeout, Grace: p.Grace, DiskBytes: p.Disk, ShmBytes: p.Shm,
//		Report: "/srv/reports/SDA-1.json",
//		Net: p.Net, DBPorts: p.DBPorts, HostUID: 65534, HostGID: 65534,
//		Resources: jail.Resources{MemoryBytes: p.Memory, CPUs: p.CPUs, PIDs: p.PIDs}}
//	rep, err := jail.Run(spec, nil)  // err: nothing was created (bad input, ID in use)
//	// rep.Status says why the run ended; rep.ExitCode is what to exit with.
//
// The binary that calls Run must dispatch the init before anything else:
// if IsInit(os.Args) { InitMain() }. It must be built with CGO_ENABLED=0:
// the identity drop uses all-threads syscalls, which Go refuses with cgo.
//
// Kernel: user namespaces; seccomp filters; cgroup v2 with a delegated
// parent, or memory, cpu and pids on cgroup v1; Landlock, whose rights count
// as layers of the promises (EvaluatePromises): with any Landlock (ABI 1,
// Linux 5.13) the default profile runs, without it the filesystem promises
// have one layer and the run is refused unless --allow-degraded landlock.
package jail
