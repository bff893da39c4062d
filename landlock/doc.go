// Package landlock is scidex-jail's file and network policy, enforced with
// the Linux Landlock LSM through its system calls (the constants and
// wrappers of github.com/landlock-lsm/go-landlock/landlock/syscall; not
// go-landlock's high-level package, which would bring fmt into the
// jail's init).
//
// The jail's init calls it once, after it has built the run's mount view and
// dropped to an unprivileged uid with no_new_privs, and before it closes
// stray descriptors, loads seccomp and execs the target (as
// ExamplePolicy_Restrict, compiled with the tests):
//
//	res, err := landlock.Policy{
//		ReadExec:   []string{"/usr", "/bin", "/lib", "/lib64", "/etc"},
//		ReadOnly:   []string{"/work/data", "/work/docs"},
//		ReadWrite:  []string{"/tmp/scidex-analysis-42", "/dev/shm"},
//		Devices:    []string{"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/pts"},
//		HandleTCP:  true,
//		ConnectTCP: []uint16{443},
//		Scope:      true,
//	}.Restrict()
//	if err != nil {
//		// errors.Is(err, landlock.ErrUnsupported): the kernel is too old or
//		// Landlock is off; the message says which ABI was found, which is
//		// needed, what would be lost and how to get it. Do not run the target.
//	}
//	// res.ABI, res.Rules and res.Degraded go into the run's report.
//
// # What it enforces
//
// Restrict applies to the whole process (every thread, through go-landlock's
// psx-based all-threads system calls) and to everything it starts
// afterwards; RestrictThread to the calling thread and what it starts. Neither
// can be undone. The ruleset handles
// every filesystem right the kernel knows, so anything not granted below is
// denied, also to root:
//
//	rx   ReadExec   read files, list directories, execute
//	ro   ReadOnly   read files, list directories (no execute)
//	rw   ReadWrite  read, write, truncate, execute, create files, directories,
//	                sockets, fifos and symlinks, remove, and "refer" (rename or
//	                link between directories inside read-write trees);
//	                never device nodes (make_char, make_block) or device ioctl
//	dev  Devices    read, write and ioctl on device files (list, for a device
//	                directory such as /dev/pts)
//
// The run directory is executable on purpose: the target is an interpreter
// that can run arbitrary code anyway, and scientific code sometimes builds
// and runs compiled helpers there. Execute is withheld from ReadOnly so that
// data/ and docs/ cannot smuggle in binaries.
//
// A rule on a directory covers the tree below it; a rule on a file (any
// list accepts files) gets only the rights that apply to files, since the
// kernel rejects directory rights on a file. Paths are opened following
// symbolic links, so a rule on /etc/resolv.conf covers its target (often in
// /run), and a symlink inside the run directory to a file the policy does
// not grant gives no access to it. Rules add up, so a read-only path inside a
// read-write tree would be writable: Validate rejects that. Renaming or
// linking a file from a read-only tree into the run directory fails (EXDEV
// or EACCES): Landlock refuses to let a file gain rights by moving.
//
// With HandleTCP, bind(2) is denied on every TCP port (no servers in the
// sandbox) and connect(2) is allowed only to the ConnectTCP ports, on any
// address. Leave HandleTCP off for profiles that need loopback servers
// (notebook kernels) and rely on the network namespace there.
//
// With Scope, the sandbox cannot send signals to processes outside its
// Landlock domain (its own children it can still signal and kill) nor
// connect to abstract unix sockets created outside it.
//
// # What it does not cover
//
//   - connect(2) to pathname unix sockets (PostgreSQL's
//     /var/run/postgresql/.s.PGSQL.5432) is not governed by Landlock up to
//     ABI 8; the mount view hiding /run and the other socket directories is
//     what stops it. On ABI 9 kernels the ruleset also handles resolve_unix,
//     which denies it (not counted in Required, never reported as lost).
//   - UDP is not covered by the TCP rules (Landlock ABI 10 could; the
//     policy has no UDP rules). Neither are other protocols.
//   - Multipath TCP sockets (socket(AF_INET, SOCK_STREAM, IPPROTO_MPTCP))
//     bypass the TCP rules (checked on Linux 6.18, ABI 7): seccomp must
//     deny IPPROTO_MPTCP when the policy restricts TCP.
//   - stat(2), chmod(2), chown(2), utime(2), xattrs, flock(2) and
//     fcntl(2) are not restricted by Landlock; the mount view and the
//     unprivileged uid are what limit them.
//   - Files opened before Restrict (stdin, stdout, inherited descriptors)
//     keep the access they were opened with.
//   - Restrict in a program built with cgo also grants listing
//     /proc/<pid>/task: libpsx, which carries the system calls to every
//     thread there, lists it from a thread already restricted.
//
// # Kernel ABI
//
// Landlock is in mainline Linux since 5.13 (CONFIG_SECURITY_LANDLOCK=y) and
// must be enabled at boot: landlock in the lsm= boot parameter or CONFIG_LSM.
// Each ABI adds what a policy can rely on:
//
//	ABI 1  Linux 5.13  filesystem access control
//	ABI 2  Linux 5.19  refer: rename and link between directories
//	ABI 3  Linux 6.2   truncate
//	ABI 4  Linux 6.7   TCP bind and connect
//	ABI 5  Linux 6.10  ioctl on device files
//	ABI 6  Linux 6.12  scoping of signals and abstract unix sockets
//	ABI 7  Linux 6.15  audit logging flags (nothing new is denied)
//
// Every policy needs ABI 5 (truncate and device ioctl are always handled);
// Scope raises that to 6. A kernel that reports ABI 6 or later without the
// fix for Landlock erratum 2 (signal scoping) counts as ABI 5, as it does
// for go-landlock.
//
// # Fail closed
//
// If the kernel's ABI is below Result.Required, Restrict changes nothing and
// returns an *UnsupportedError (errors.Is(err, ErrUnsupported)) naming the
// ABI found, the ABI needed, each feature that would go unenforced and the
// kernel or boot parameter that provides it. Only with AllowDegraded does it
// enforce what the kernel offers; Result.Degraded then lists, one entry per
// feature ("fs.truncate (needs ABI 3): Landlock does not restrict ..."),
// exactly what Landlock did not enforce, and is "landlock: not enforced at
// all" when the kernel has no Landlock. A caller that weighed what the
// kernel offers beforehand (the jail decides per promise, counting
// Landlock's rights as layers beside the mount view and namespaces) sets
// MinABI to the ABI it relied on: below it, Restrict refuses all the same.
// Nothing is left to a library's best-effort mode, which can silently fall
// back to enforcing nothing (go-landlock's did: GHSA-vv6c-69r6-chg9).
//
// # Tests
//
// Tests that restrict run in a re-executed child of the test binary (the
// parent prepares files, TCP listeners and an abstract socket, the child
// restricts itself and checks with real syscalls). They do not need root.
// They need Landlock ABI 6 or later; on an older kernel they skip, naming
// the ABI found. Run them with
//
//	go test ./landlock/                  # as the tests of the package
//	CGO_ENABLED=0 go test ./landlock/    # as the jail is built
package landlock
