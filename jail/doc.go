// Package jail decides one run of an untrusted analysis before anything
// exists: the spec and its validation, the one look at the host, and the
// plan (namespaces, ID map, cgroup limits, the init's whole config, the
// security policy, the promises and the report's static part). It creates
// nothing on the host: jail/supervise carries a plan out (the supervisor,
// slots, events, the run's end, the report) and imports it; nothing here
// imports jail/supervise. The two together are the core, the only
// packages that know every kernel facility: the plan holds the landlock
// and seccomp policies and the cgroupfs limits, the run drives cgroupfs
// and the init. Their parts by job are packages of their own: jail/limits
// (the table of limits), jail/profile (profiles: text in, Spec out),
// jail/promise (the contract as data), jail/view (what a run sees of the
// host), jail/runfiles (the run's files on the host), jail/initconn (the
// init and the connection to it), jail/report (the report's types),
// jail/relay (the analysis' stdout and stderr, bounded, for the run),
// jail/hostcheck (what `check` asks of the kernel) and jail/childmode (the
// child modes' registry).
//
// A run is decided before anything exists, then carried out. The
// deciding, in order, with the file each step lives in (the carrying out
// is jail/supervise's table):
//
//	Spec.Validate      spec.go, limits.go,    checks (the limits by jail/limits'
//	                   inputs.go, uids.go,    table, the destinations by
//	                   container.go,          runfiles); ErrBadSpec says what
//	                   scratch.go,            to fix; returns the resolved copy
//	                   resolved.go            (*Resolved), the caller's Spec
//	                                          untouched
//	LookHost           resolved.go, view/     the only look at the host: system
//	                                          dirs, data dirs, /etc, devices,
//	                                          resolver, Landlock ABI; rootless:
//	                                          the caller's groups, what the view
//	                                          exposes to them
//	BuildPlan          plan.go, security.go,  pure: namespaces, ID map and kept
//	                   groups.go, promise/,   groups, cgroup limits, the init's
//	                   datadirs.go,           whole config (the analysis' own
//	                   scratch.go,            passwd/group), the promises (fail
//	                   limitsview.go,         closed per promise, and the group
//	                   unheld.go,             rule: *PlanError, stage
//	                   view/userdb.go         promises); what the report takes
//	                                          from the plan: the static
//	                                          enforced, the limits no layer
//	                                          holds
//	Plan.ProcAttr      procattr.go            how the init is born: its
//	                                          namespaces, ID map, capabilities
//
// The stages a plan can fail at are promises and policy (a *PlanError).
// Stages is the closed list of every stage a run can report, a Stage
// constant of jail/internal/protocol each; the README's troubleshooting
// table has one row per stage, in that order.
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
//	r, err := spec.Validate()                                      // errors.Is(err, jail.ErrBadSpec): what to fix
//	plan, warnings, err := jail.BuildPlan(r, jail.LookHost(&spec)) // err: a *PlanError, the plan still returned
//
// supervise.Run(&spec, nil) runs it (jail/supervise).
//
// Kernel: none of its own (it reads the host through jail/view). What a
// run needs: user namespaces; seccomp filters; cgroup v2 with a delegated
// parent, or memory, cpu and pids on cgroup v1; Landlock, whose rights count
// as layers of the promises (promise.EvaluatePromises): with any Landlock (ABI 1,
// Linux 5.13) the default profile runs, without it the filesystem promises
// have one layer and the run is refused unless --allow-degraded landlock.
package jail
