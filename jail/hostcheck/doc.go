// Package hostcheck is what `scidex-jail check` asks of the kernel
// facilities, so that the command line needs none of them: the cgroup
// parent a run's leaf would go under (cgroupfs), and the plan's Landlock
// and seccomp policies tried in a child process (landlock, seccomp). Every
// probe tries the real operation; what it finds is returned as plain
// values for the caller to judge and print. [CheckHostSetup] judges the
// host's own settings that a run depends on (user namespace sysctls,
// AppArmor's restriction of them, cgroup delegation) from values the
// caller gathers, so it is tested without the host.
//
// Landlock and seccomp cannot be undone, so the checking process never
// applies them to itself: [ProbeSecurity] re-executes the running binary
// as the probe child mode (jail/childmode.Probe, its argv[0]), whose main
// calls
// [SecurityChild], which applies the policies the way the init does
// (no_new_privs, Landlock, seccomp last), tries that each denies what it
// should, and reports as JSON on its stdout.
//
// It needs what a run needs: Linux with Landlock, seccomp filters and a
// cgroup (v2 delegated, or v1) the caller may write. A missing feature is
// not an error of the probes but a finding: [Explain] splits a facility's
// unsupported error into what was found and how to get the feature.
//
// Usage, in the checking process and in its child (first thing in main;
// the package's Example, compiled with its tests):
//
//	if childmode.Of(os.Args) == childmode.Probe {
//		err := hostcheck.SecurityChild(os.Stdin, os.Stdout)
//		...
//	}
//	sec := hostcheck.ProbeSecurity(plan.Init.Security)
//	info, err := hostcheck.ProbeCgroup(parent)
//	if err != nil {
//		found, fix := hostcheck.Explain(err)
//		...
//	}
package hostcheck
