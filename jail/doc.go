// Package jail runs one untrusted analysis to completion in a sandbox and
// reports how it ended. It is the only package that knows every kernel
// facility: it drives landlock, seccomp and cgroupfs, and builds the
// namespaces and the mount view itself.
//
// A run is decided before anything exists, then carried out. In order, with
// the file (and the process) each step lives in:
//
//	Spec.Validate      spec.go, limits.go,    checks; ErrBadSpec says what to fix
//	                   paths.go, destinations.go
//	LookHost           host.go, groups.go     the only look at the host: system
//	                   exposure.go            dirs, data dirs, /etc, devices,
//	                                          resolver, Landlock ABI; rootless:
//	                                          the caller's groups, what the view
//	                                          exposes to them
//	BuildPlan          plan.go, security.go,  pure: namespaces, ID map and kept
//	                   promises.go,           groups, cgroup limits, the init's
//	                   userdb.go              whole config (the analysis' own
//	                                          passwd/group), the promises (fail
//	                                          closed per promise, and the group
//	                                          rule: *PlanError, stage
//	                                          promises), static enforced
//	--- supervisor (supervisor.go, signals.go, cgroup.go, rundir.go) ---
//	sweepLeftovers     sweep.go               what dead jails left behind
//	createRunDir       rundir.go              <tmp-root>/scidex-analysis-<id>,
//	                                          fresh, locked, marked
//	createLeaf         cgroup.go              the leaf, limits written first
//	spawn              supervisor.go          /proc/self/exe as PID 1 of the
//	                   initchild.go           plan's namespaces (Plan.ProcAttr),
//	                                          born in the leaf (v1: forked by a
//	                                          thread in it); config over fd 3
//	--- init (internal/initproc; protocol: internal/protocol) ---
//	mounts             initproc/mounts.go     new read-only root, the analysis'
//	                   initproc/files.go      own /etc/passwd and /etc/group,
//	                                          pivot_root
//	identity           initproc/identity.go   uid 1000, groups cleared (as
//	                                          root; rootless keeps the caller's),
//	                                          no capabilities, no_new_privs
//	landlock, seccomp  initproc/security.go   seccomp last, then "go", then exec
//	reap               initproc/reap.go       signals in, every child reaped
//	--- supervisor ---
//	loop               supervisor.go          timeout + grace, signals, the
//	                                          init's messages
//	outputs            deliver_outputs.go     listed (and collected) through
//	                                          /proc/<init>/root
//	finish, settle     finish.go, outcome.go  cleanup; status, exit code and
//	                                          notes as one pure function
//	deliverReport      deliver.go             atomically; a failed delivery is
//	                                          delivery_failed, exit 122
//
// A cancel (SIGTERM, SIGINT, SIGHUP on the channel given to Run) is taken
// between every step up to the target's start, and ends the run there.
//
// Use:
//
//	profiles, _, err := jail.LoadProfiles("")      // built-ins + /etc/scidex-jail/profiles.json
//	p := profiles["default"]
//	spec := p.Spec()                                 // every field the profile decides
//	spec.ID, spec.Command = "SDA-1", []string{"python3", "script.py"}
//	spec.TmpRoot, spec.Root, spec.Report = "/tmp", "/srv/platform", "/srv/reports/SDA-1.json"
//	spec.HostUID, spec.HostGID = 65534, 65534
//	plan, warnings, err := jail.BuildPlan(&spec, jail.LookHost(&spec)) // optional: what a run would do
//	rep, err := jail.Run(&spec, nil)  // err: nothing was created (bad input, ID in use)
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
