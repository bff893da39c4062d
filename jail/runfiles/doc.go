// Package runfiles is the run's files on the host: the run directory, what
// the analysis left in it (the outputs), the copies of them (collect), the
// report's atomic write, and the sweep of what a killed jail left behind.
// Everything here handles paths an untrusted analysis may have shaped (its
// run directory, names, links, sizes), as root, so every step is made
// relative to an open directory and never follows a link, and the names it
// gives things on disk are all in names.go.
//
// A run, in order (the package's Example, which the tests run):
//
//	warn := runfiles.SweepLeftovers(tmpRoot, reportPath) // dead runs' leftovers, at most once a SweepInterval
//	dir, stale, err := runfiles.CreateDir(tmpRoot, id, uid, gid) // fresh, locked, marked; err wraps ErrBusy or ErrBadSpec
//	... the analysis runs with dir.Path() as its working directory ...
//	outs, over, err := runfiles.ListOutputs(ctx, dir.Path(), budget) // bounded by the budget and ctx
//	errs := runfiles.Collect(ctx, dir.Path(), collectDir, outs)      // never overwrites, never follows
//	err = dir.Remove() // or dir.Keep()
//	err = report.Write(encoded) // made by OpenReport(reportPath, name, given) when the run began; whole or not at all
//
// The proof that a leftover is a dead jail's is a lock: every run
// directory, half-made directory and temporary report is held by an
// exclusive flock of its live owner from before anyone else can see it
// (sweep.go says how), so `scidex-jail gc` and the runs' own sweeps remove
// only what no live process holds.
//
// It needs Linux: flock, O_TMPFILE (with a fallback), renameat2 with
// RENAME_NOREPLACE, extended attributes (trusted.* as root, user.* without;
// without them a sweep cannot tell a run directory kept on purpose, and
// leaves every one alone). Nothing here needs root: its tests run as any
// user.
package runfiles
