// Package testutil is the test support shared by the end-to-end tests
// (cmd/scidex-jail), the benchmarks (bench), the deployment tests (deploy)
// and the cgroup package's own tests (cgroupfs). It is imported by tests
// only, and imports none of this module's packages: it is the oracle the
// tests hold the code under test against, so it must not share that code.
// .ci/layering checks that it stays so.
//
// # What it offers
//
//   - The mount table: [ParseMountinfo] reads /proc/self/mountinfo lines
//     (proc(5)), undoing the kernel's octal escapes (\040 space, \011 tab,
//     \012 newline, \134 backslash) with [Unescape]; [ReadMounts] reads this
//     process's.
//   - Where this process sits in the cgroup hierarchies: [PlaceCgroups]
//     matches /proc/self/cgroup lines with the cgroup mounts, giving each
//     cgroup's directories; [OwnCgroups] does so for this process;
//     [Cgroup2Mount] is the mount of the whole cgroup v2 hierarchy.
//   - [Cgroup2Required]: the VM harness (.ci/vmtests) sets
//     SCIDEX_REQUIRE_CGROUP2=1 ([RequireCgroup2Env]); there a cgroup v2 test
//     must fail rather than skip.
//   - [ProcessesWith]: the host's processes whose command line holds a
//     marker, to find what a run left alive.
//   - [JailBinary]: the jail binary for a package's TestMain, built once from
//     ./cmd/scidex-jail, or copied from $SCIDEX_JAIL_BIN (the VM harness and
//     `make bench` build it outside), in a directory every uid can traverse.
//   - [CompileReportSchema]: the report's JSON Schema (given as text by the
//     caller: report.JSONSchema) compiled by a maintained validator, whose
//     [ReportSchema.Validate] checks a report the tests read.
//
// # Usage
//
// As ExampleJailBinary and ExampleOwnCgroups (compiled with the tests):
//
//	var jailBin string
//
//	func TestMain(m *testing.M) {
//		bin, cleanup, err := testutil.JailBinary()
//		if err != nil {
//			fmt.Fprintln(os.Stderr, err)
//			os.Exit(2)
//		}
//		jailBin = bin
//		code := m.Run()
//		cleanup()
//		os.Exit(code)
//	}
//
//	cgs, err := testutil.OwnCgroups()
//	...
//	for _, c := range cgs {
//		fmt.Println(c.Version, c.Controllers, c.Dirs)
//	}
package testutil
