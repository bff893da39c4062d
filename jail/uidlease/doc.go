// Package uidlease gives each run of a jail started as root a host uid
// and gid of its own, so that no two runs, and no account or daemon of the
// host, are the same principal to the kernel: a process running as nobody
// (65534) can signal, stop or re-weight whatever else runs as nobody.
//
// The ids come from a Range no account uses (Default: 0x70000000 and the
// 65535 above it, a band systemd's UIDS-GIDS document leaves unused, between
// its container range and its foreign range). Check refuses a range that
// holds an id some account or group has, a reserved id (0, 65534, 65535,
// 4294967295), an /etc/subuid or /etc/subgid range, or an id not mapped in
// the user namespace the jail runs in; it reads six small files, about
// 30 µs (BenchmarkCheck).
//
// Acquire leases one id of the range: a lock file per id in a root-owned
// directory (LeaseDir), locked with flock(LOCK_EX|LOCK_NB). The lock
// belongs to the open file, so it ends with its holder, even on SIGKILL;
// Release removes the file while still holding the lock. A lock file left
// by a holder that was killed is empty and is taken (and later removed) by
// the next run that draws its id, or by gc (Sweep). The uid and the gid of
// a lease are the same number. A lease and its release cost 8 µs with
// LeaseDir on a tmpfs (BenchmarkAcquireRelease).
//
// Usage (the package's Example, compiled with its tests):
//
//	if err := uidlease.Check(r); err != nil { ... } // once per run's start
//	l, err := uidlease.Acquire(r)
//	defer l.Release() // after the run's processes are dead and its files removed
//	spec.HostUID, spec.HostGID = l.ID(), l.ID()
package uidlease
