// Package supervise carries out one run that package jail planned, to
// completion, and reports how it ended: it is the run, in the caller's
// process (the supervisor), where jail is the decision. Everything a run
// creates on the host is made and removed from here: the leased ids, the
// cgroup leaf, the init process, the run directory, the relay's pipes
// (jail/relay), the report's file. It imports jail; jail never imports
// it.
//
// Run (RunWith, with Options) validates the spec, plans it
// (jail.BuildPlan on jail.LookHost) and carries the plan out. In order,
// with the file (and the process) each step lives in: a bare name is this
// package's file, one with a directory is in that package under jail/:
//
//	OpenReport         runfiles/report.go     the report's file, made first:
//	                                          the check that it can be written
//	leaseIDs           uids.go                as root, host ids of the run's
//	                                          own (jail/uidlease), held to the
//	                                          run's end
//	decide             run.go                 jail.BuildPlan on jail.LookHost:
//	                                          the plan, nothing made yet
//	--- supervisor (run.go: the order; supervisor.go: the steps) ---
//	openRelay          relay/relay.go         the caller's stdout and stderr
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
// The stages a setup_error can name besides the steps': promises and
// policy (jail.BuildPlan), rundir (a bug: the directory is not where the
// plan put it) and init (the init ended before it started the target:
// settle). jail.Stages is the closed list.
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
//
//	rep, err := supervise.Run(&spec, nil) // err: nothing was created (bad input, ID in use)
//	// rep.Status says why the run ended; rep.ExitCode is what to exit with.
//
// A run may start from a slot (slot.go): PrepareSlot does what a run's
// request does not decide ahead of any request (the init exec'd as PID 1
// of its namespaces, born in its leaf, its version checked, its stdio
// /dev/null, its whole view built with the run directory at a
// placeholder and its forking thread confined, the run directory's host
// side made: initproc's ahead.go, runfiles.Anchor), and RunWith, given Options.Slots, takes one whose key
// (namespaces, ID map, the leaf's place and controllers, the view and the
// identity of what it binds, the init file) matches the plan in place of
// createLeaf and spawn: the run's limits are written over the leaf's when
// they differ, the usage counted from the handoff, the run directory
// named by a rename, and the analysis' stdio sent with the config. A slot
// serves one run; scidex-jail serve (jail/server) keeps them. RunServed
// is RunWith for a server that replies before the cleanup (later.go).
//
// The init is a program of its own, cmd/scidex-jail-init, which Run finds
// beside the running binary (or in ../libexec/scidex-jail/ from its
// directory; initconn.InitName, CheckInit), built with the same
// internal/buildversion stamp and CGO_ENABLED=0 (the identity drop uses
// all-threads syscalls, which Go refuses with cgo); a missing, unsafe or
// other-version init is a setup error of stage "init" (*initconn.InitError).
//
// Kernel: what jail's doc lists for a run, used here: user namespaces,
// the cgroup leaf (cgroupfs), pidfds and /proc/<init>/root for the
// outputs.
package supervise
