// Package bench measures what the jail itself costs: the startup of one run,
// each of its setup phases, many runs at once, and the memory of the
// supervisor and of the init. It has no API; everything is in its
// benchmarks and in compare.sh.
//
// The jail wraps many short analyses, so a millisecond per run matters.
// Since issue 36 the startup targets are the resident mode's (scidex-jail
// serve against bubblewrap, below); the one-shot figures are regression
// guards, printed as the pairs' targets, against the design's floor,
// nsproto (the same kernel work in the same shape, no report, no checks):
// a whole run of /usr/bin/true within 1.7x nsproto in wall time and 2.1x
// in CPU time of the whole process tree on the host (1.2x in wall time on
// cgroup v2 in the VM, issue 25's); python3 -c pass within 1.6x
// bubblewrap; the init at most 2.5 MB resident. The jail against
// bubblewrap on true is printed as information: one C process that does
// less is no target for two Go processes.
//
// What the Go benchmarks measure, each through the real binary (built once
// by TestMain with CGO_ENABLED=0 into a 0755 temp dir, or copied there from
// $SCIDEX_JAIL_BIN):
//
//   - BenchmarkRunTrue, BenchmarkRunPythonPass: one whole
//     `scidex-jail run -- /usr/bin/true` (or `/usr/bin/python3 -c pass`) per
//     op. ns/op is the caller's wall time; "<phase>-us/op" is each phase of
//     the report ("mounts-us/op", "spawn-us/op", ...) as the mean over b.N.
//     Sub-benchmarks: "all" (every layer on) and, when the binary has the
//     flags, "no-landlock", "no-seccomp", "no-cgroup" (--unsafe-disable) and
//     "net-loopback", "net-host" (--net). Without them the rows are left out
//     and the log says why.
//
//   - BenchmarkConcurrent50, BenchmarkConcurrent200: 50 or 200 jails of
//     `sleep 0.5` started at once, then as many nsprotos (when
//     $SCIDEX_NSPROTO is set) and bubblewrap sandboxes of the same, in
//     reversed order every other op. Reports the wall time of each batch,
//     per-run latency (p50, p95) and the jail/bwrap and jail/nsproto wall
//     ratios; the jail/nsproto pair (target 1.2 for 200) is printed with
//     the startup pairs, with nsproto's flags (everything on, its cgroup
//     leaf too: see the cgroup view below). Fails if a run failed or
//     anything leaked: a run directory left in the tmp-root, a process
//     carrying the run's marker, a new mount in /proc/self/mountinfo, a new
//     scidex-* cgroup below this process's cgroups.
//
//   - BenchmarkMemory: resident memory (VmRSS, VmHWM, RssAnon, in kB) of the
//     supervisor and of the init while the target runs. The init's memory
//     counts against the analysis' own budget.
//
//   - BenchmarkPairs: the startup targets, as interleaved pairs (A B, B A,
//     ...) of the full jail against nsproto ($SCIDEX_NSPROTO, built by make
//     from ../shared/perf/nsproto; the pair is left out with a note without
//     it) and against bwrap: the median of each side and of the per-pair
//     ratio, in wall and in CPU time, printed at the end with the target
//     beside it. On a hybrid host whose memory cgroup is not the
//     hierarchy's root (these development machines), nsproto -cg v1 would
//     make its leaves outside this process' cgroups: there the nsproto
//     pairs (this one and the concurrency pair) run in a cgroup view, both
//     sides alike. The benchmark re-executes this test binary once, for
//     itself alone, in a private mount and cgroup namespace (unshare -m -C
//     --propagation private, never the host's mounts) with a tmpfs over
//     /sys/fs/cgroup and the v1 memory, cpu, cpuacct and pids hierarchies
//     and cgroup2 mounted from inside, their roots this process' own
//     cgroups; the binary inside hands its rows and metrics back in a file
//     ($SCIDEX_BENCH_VIEW). Where no view can be made (not root, no
//     unshare, mounts refused) the row says why. On a cgroup v2 host
//     nsproto runs -cg v2 with no view. For information, the jail against
//     crun (Debian's crun, with a bundle the bench writes: the same limits,
//     namespaces and read-only root, a seccomp deny-list), run in a cgroup
//     view of its own (v1 only: crun refuses a hybrid host) so that its
//     leaves land below this process' cgroups; without crun, or when it
//     cannot run, its row says why. Inside the vmtest VM (SCIDEX_IN_VM=1: pure cgroup v2, the
//     init born in its leaf with CLONE_INTO_CGROUP) it times the VM's pairs
//     instead, "vm-jail-vs-nsproto-true" (target 1.2) and
//     "vm-jail-vs-bwrap-true" (for reference), and prints the median of
//     each phase of the jail's reports. vmpairs.sh runs them there (make bench-vm, bench-compare;
//     .ci/vmtests a short version).
//
//   - BenchmarkServeStartup, BenchmarkServeSequential, BenchmarkServeBurst,
//     BenchmarkServeIdle: the resident mode's targets (docs/serve.md),
//     printed at the end under "resident mode", each row with its target,
//     never enforced. The runs go through the Python client,
//     scidex_jail.Server, from serve_pairs.py (Debian's /usr/bin/python3,
//     PYTHONPATH=../python), against bubblewrap (bwrapArgs) started by the
//     same Python process with subprocess.run: interleaved pairs of
//     /usr/bin/true (target: served/bwrap <= 0.8) and python3 -c pass
//     (<= 0.95), medians and p99, each side after the server idled with
//     its slots ready, and the median of each phase of the served runs'
//     reports (what remains at request time); `scidex-jail run --server
//     SOCK -- /usr/bin/true` against bwrap from Go (no target, beside
//     them; the row says so when run has no --server); runs of true back
//     to back through one server against bwrap from the same loop (runs
//     per second, target >= 1x) and the CPU per run of each side (the
//     server with its inits and analyses; bwrap's tree); a burst of requests at
//     once with --slots 8 ready (those past the pool start cold) against
//     as many `scidex-jail run` at once, wall and per-run p50 and p99; the
//     idle server's and each ready slot's init's resident memory. They
//     fail on a failed run or a leak: a run directory left in the private
//     tmp-root, a cgroup leaf the server used (named in the reports and by
//     the slots' inits) or made below a cgroup of ours that is not a
//     hierarchy's root. The counts come from SCIDEX_SERVE_PAIRS (default
//     100), SCIDEX_SERVE_SEQUENTIAL (1000) and SCIDEX_SERVE_BURST (100),
//     not from b.N: each measures once per process.
//
// BenchmarkRunTrue and BenchmarkRunPythonPass also print the median of every
// phase of the report and the share of the caller's wall time the
// supervisor's phases account for.
//
// compare.sh times bare exec, unshare, bubblewrap and the jail (every layer
// on, then each off) side by side with hyperfine and prints medians and
// ratios to bwrap.
//
// Needs: root, Linux with user namespaces, bubblewrap (apt-get install
// bubblewrap) for the concurrency comparison, crun and util-linux's
// unshare and nsenter for crun's pairs, python3 at /usr/bin/python3,
// and hyperfine for compare.sh.
//
// Usage:
//
//	go test -run '^$' -bench . -benchtime 1x ./bench/    # CI smoke: each once
//	make bench                                            # -benchtime 200x
//	SCIDEX_JAIL_BIN=$PWD/bin/scidex-jail go test -run '^$' -bench RunTrue ./bench/
//	make bench-compare                                    # pairs here and in the VM, the resident mode, bench/compare.sh
//	SCIDEX_SERVE_PAIRS=20 go test -run '^$' -bench Serve -benchtime 1x ./bench/
//	make bench-vm VM_PAIRS=40                             # bench/vmpairs.sh bin/scidex-vmtest 40
//	PIN=1 bench/compare.sh bin/scidex-jail                # all on CPU 0 (taskset -c 0)
package bench
