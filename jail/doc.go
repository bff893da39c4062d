// Package jail runs one untrusted analysis to completion in a sandbox and
// reports how it ended. It is the core: the spec, the plan and the run. It
// is the only package that knows every kernel facility: it drives
// landlock, seccomp and cgroupfs, and builds the namespaces and the mount
// view itself. Its parts by job are packages of their own: jail/limits
// (the table of limits), jail/profile (profiles: text in, Spec out),
// jail/promise (the contract as data), jail/view (what a run sees of the
// host), jail/runfiles (the run's files on the host), jail/initconn (the
// init and the connection to it), jail/report (the report's types),
// jail/hostcheck (what `check` asks of the kernel) and jail/childmode (the
// child modes' registry).
//
// A run is decided before anything exists, then carried out. In order, with
// the file (and the process) each step lives in:
//
//	Spec.Validate      spec.go, limits.go,    checks (the limits by jail/limits'
//	                   inputs.go,             table, the destinations by
//	                   resolved.go            runfiles); ErrBadSpec says what
//	                                          to fix; returns the resolved copy
//	                                          (*Resolved), the caller's Spec
//	                                          untouched
//	LookHost           resolved.go, view/     the only look at the host: system
//	                                          dirs, data dirs, /etc, devices,
//	                                          resolver, Landlock ABI; rootless:
//	                                          the caller's groups, what the view
//	                                          exposes to them
//	BuildPlan          plan.go, security.go,  pure: namespaces, ID map and kept
//	                   groups.go, promise/,   groups, cgroup limits, the init's
//	                   view/userdb.go         whole config (the analysis' own
//	                                          passwd/group), the promises (fail
//	                                          closed per promise, and the group
//	                                          rule: *PlanError, stage
//	                                          promises), static enforced
//	--- supervisor (run.go: the order; supervisor.go: the steps) ---
//	openRelay          relay.go               the caller's stdout and stderr
//	                                          that are files: a pipe each (one
//	                                          for one description) that the
//	                                          jail copies into them, drained
//	                                          at finish
//	initconn.Open      initconn/program.go    the init program beside the
//	                                          binary, opened once, checked
//	                                          (stage init)
//	createLeaf         cgroup.go              the leaf, limits written first
//	                                          (stage cgroup)
//	spawn              initconn/conn.go,      that open file exec'd as PID 1 of
//	                   initconn/child.go      the plan's namespaces
//	                                          (Plan.ProcAttr), born in the leaf
//	                                          (v1: forked by a thread in it), as
//	                                          early as it can be: its start
//	                                          overlaps the next two steps
//	                                          (stage spawn)
//	SweepLeftovers     runfiles/sweep.go      what dead jails left behind
//	CreateDir          runfiles/rundir.go     <tmp-root>/scidex-analysis-<id>,
//	                                          fresh, locked, marked
//	configure          supervisor.go          the config over fd 3, with the
//	                   limitsview.go          run's meminfo made now (a
//	                                          snapshot; stage meminfo), then
//	                                          "go" only after the init's hello
//	                                          states our version
//	--- init (internal/initproc; protocol: internal/protocol) ---
//	                                          each step is a stage of the
//	                                          report's setup_error, in order:
//	config             initproc/init.go       the config from the supervisor
//	cpus               initproc/limits.go     pinned to the CPU quota
//	mounts             initproc/mounts.go     new read-only root, pivot_root;
//	                   initproc/runspace.go   run directory and scratch (HOME)
//	                   initproc/limits.go     in one budget; meminfo, CPU list
//	                   initproc/cgroupview.go and the leaf at /sys/fs/cgroup;
//	                   initproc/files.go      the analysis' own /etc/passwd
//	                                          and /etc/group
//	hostname, network  initproc/init.go,      scidex-<id>; lo up for loopback
//	                   initproc/identity.go
//	identity           initproc/identity.go   uid 1000, groups cleared (as
//	                                          root; rootless keeps the caller's),
//	                                          no capabilities, no_new_privs
//	landlock, fds,     initproc/security.go,  Landlock; every fd above 2
//	seccomp            initproc/init.go       close-on-exec; seccomp last
//	wait-go, exec      initproc/init.go       wait for "go", then fork and
//	                                          exec the target
//	reap               initproc/reap.go       signals in, every child reaped
//	--- supervisor ---
//	wait               events.go, signals.go  timeout + grace, signals, the
//	                                          init's messages; returns what
//	                                          happened (ending)
//	outputs            deliver_outputs.go     listed (and collected) through
//	                   runfiles/outputs.go,   /proc/<init>/root, within the
//	                   runfiles/outputs_copy  OutputBudget (over it:
//	                   .go                    output_limit, exit 123), with
//	                                          the signals live
//	finish, settle     finish.go, outcome.go  cleanup; the report assembled
//	                   assemble.go            once from the run's facts;
//	                                          status, exit code and notes as
//	                                          one pure function
//	deliverReport      deliver.go,            atomically, into the file made
//	                   runfiles/report.go,    as the run began; a failed
//	                   runfiles/atomic.go     delivery is delivery_failed,
//	                                          exit 122
//
// The other stages a setup_error can name: promises and policy (BuildPlan),
// rundir (a bug: the directory is not where the plan put it) and init (the
// init ended before it started the target: settle). Stages is the closed
// list, a Stage constant of jail/internal/protocol each; the README's
// troubleshooting table has one row per stage, in that order.
//
// A cancel (SIGTERM, SIGINT, SIGHUP on the channel given to Run) is taken
// between every step up to the target's start, and ends the run there;
// while the target runs it is forwarded; after the target ended, it stops
// the post-run work within a chunk of a file (postRun).
//
// Use (the package's Example, compiled with its tests):
//
//	profiles, _, err := profile.LoadProfiles("") // built-ins + /etc/scidex-jail/profiles.json
//	spec := profiles["default"].Spec()           // every field the profile decides
//	spec.ID, spec.Command = "SDA-1", []string{"python3", "script.py"}
//	spec.TmpRoot, spec.Root, spec.Report = "/tmp", "/srv/platform", "/srv/reports/SDA-1.json"
//	// HostUID, HostGID left 0: as root, the run leases ids of its own from
//	// spec.UIDRange (jail/uidlease); set both to fix them.
//
//	// Optional: the resolved copy, and what a run would do.
//	r, err := spec.Validate()                                      // errors.Is(err, jail.ErrBadSpec): what to fix
//	plan, warnings, err := jail.BuildPlan(r, jail.LookHost(&spec)) // err: a *PlanError, the plan still returned
//
//	rep, err := jail.Run(&spec, nil) // err: nothing was created (bad input, ID in use)
//	// rep.Status says why the run ended; rep.ExitCode is what to exit with.
//
// A run may start from a slot (slot.go): PrepareSlot does a run's first
// half ahead of any request (the init exec'd as PID 1 of its namespaces,
// born in its leaf, its version checked, its stdio /dev/null), and
// RunWith, given Options.Slots, takes one whose key (namespaces, ID map,
// the leaf's place and controllers, the init file) matches the plan in
// place of createLeaf and spawn: the run's limits are written over the
// leaf's, the usage counted from the handoff, and the analysis' stdio
// sent with the config. A slot serves one run; scidex-jail serve
// (jail/server) keeps them.
//
// The init is a program of its own, cmd/scidex-jail-init, which Run finds
// beside the running binary (or in ../libexec/scidex-jail/ from its
// directory; initconn.InitName, CheckInit), built with the same
// internal/buildversion stamp and CGO_ENABLED=0 (the identity drop uses
// all-threads syscalls, which Go refuses with cgo); a missing, unsafe or
// other-version init is a setup error of stage "init" (*initconn.InitError).
//
// Kernel: user namespaces; seccomp filters; cgroup v2 with a delegated
// parent, or memory, cpu and pids on cgroup v1; Landlock, whose rights count
// as layers of the promises (promise.EvaluatePromises): with any Landlock (ABI 1,
// Linux 5.13) the default profile runs, without it the filesystem promises
// have one layer and the run is refused unless --allow-degraded landlock.
package jail
