package runfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// A jail killed with SIGKILL (or a crash, or a power cut) cannot clean up.
// What it may leave, and how a sweep knows it is a dead jail's and nothing
// else's:
//
//	<tmp-root>/scidex-analysis-<ID>                run directory: unlocked, and
//	                                               marked by its jail (runDirMark)
//	<tmp-root>/.scidex-analysis-<ID>.<hex>.new     half-made run directory:
//	                                               unlocked, and ours (owner or mark)
//	<report dir>/.<name>.scidex-<hex>.tmp          temporary report: unlocked, ours
//	scidex-* cgroup leaves                         cgroupfs.RemoveStale
//
// "Unlocked" is the proof that the owner is dead: every one of these is
// held by an exclusive flock of its live owner from before anyone else can
// see it (the writers check, after locking, that a sweeper did not take
// the name first) until it is gone, and the kernel drops the lock when the
// owner dies. The mark keeps the sweep off directories kept on purpose
// (--keep removes it) and off anything another program made. The sweep
// removes without following links: a link the analysis planted in a --disk
// 0 run directory is removed as a link.
//
// When a run sweeps: a sweep opens, and tries to lock, every matching name,
// live ones included, so with many runs sharing a tmp-root (or a cgroup
// parent) a sweep by every run costs each run in proportion to the runs
// alive, all runs together in proportion to its square. So a run sweeps
// only when no run has swept for SweepInterval: each tmp-root carries a
// stamp, an extended attribute (sweepStamp) holding the time of the last
// sweep, set by the run that sweeps just before it does. A run that finds
// a stamp less than SweepInterval old skips the sweep (one getxattr); any
// doubt (no stamp, unreadable, in the future, cannot be set: no extended
// attributes, or a rootless run in a tmp-root it does not own) means it
// sweeps, as every run did before. The stamp is root's alone (trusted.*),
// as the mark is; two runs that read an old stamp at the same moment both
// sweep, which is harmless. Two stamps, one per kind of leftover:
//
//	trusted.scidex-jail.swept-files   the tmp-root's run directories and
//	                                  the run's report directory
//	                                  (SweepLeftovers)
//	trusted.scidex-jail.swept-leaves  the scidex-* cgroup leaves below the
//	                                  parent the run's leaf goes in
//	                                  (SweepStaleLeaves)
//
// The leaves' stamp is on the tmp-root too: a cgroup v1 hierarchy takes no
// extended attributes unless mounted with -o xattr. Runs that share a
// tmp-root but not a cgroup parent share that stamp, so the leaves below
// one parent wait for one of its own runs to find the stamp old.
//
// So a leftover is removed by the first run that starts SweepInterval
// after the last sweep in its tmp-root (a leftover run directory of the
// same ID at once, by that run's CreateDir), and at any time by
// `scidex-jail gc`, which always sweeps, for a timer. What a sweep removes
// is decided as above, by name, owner or mark, and lock: the stamp only
// decides whether to look.

// SweepInterval is how often, at most, runs sweep one tmp-root: a run
// sweeps when the tmp-root's stamp is older than this.
const SweepInterval = time.Second

// sweepDue reports whether a run that starts at now sweeps the leftovers of
// kind what ("files", "leaves") for tmpRoot: no when the tmp-root's stamp
// says a run swept them less than SweepInterval before now. When yes it
// stamps now first, so the runs that start after it skip. It fails safe:
// when the stamp cannot be read or set, it says yes.
func sweepDue(tmpRoot, what string, now time.Time) bool {
	if tmpRoot == "" {
		return true
	}
	name := sweepStamp(what)
	var b [24]byte
	if n, err := unix.Lgetxattr(tmpRoot, name, b[:]); err == nil {
		if ns, err := strconv.ParseInt(string(b[:n]), 10, 64); err == nil {
			last := time.Unix(0, ns)
			if !last.After(now) && now.Sub(last) < SweepInterval {
				return false
			}
		}
	}
	// Not being able to stamp is not an error: every run then sweeps.
	_ = unix.Lsetxattr(tmpRoot, name, []byte(strconv.FormatInt(now.UnixNano(), 10)), 0)
	return true
}

// Sweep removes the leftovers of dead jails in tmpRoot and in reportDirs
// (where earlier runs wrote reports). It returns the paths it removed and
// what it could not remove; a leftover that is still locked, or not
// provably a dead jail's, is not touched and not an error.
func Sweep(tmpRoot string, reportDirs []string) ([]string, error) {
	var removed []string
	var errs []error
	if tmpRoot != "" {
		r, err := sweepTmpRoot(tmpRoot)
		removed, errs = append(removed, r...), append(errs, err)
	}
	for _, d := range reportDirs {
		r, err := sweepReports(d)
		removed, errs = append(removed, r...), append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// SweepLeaves removes the unlocked, empty scidex-* cgroup leaves below
// parent ("" = this process's own cgroup) older than the margin a live
// jail needs to lock a leaf it has just made.
func SweepLeaves(parent string) ([]string, error) {
	return cgroupfs.RemoveStale(cgroupfs.Config{Parent: parent}, LeafPrefix, StaleLeafAge)
}

// SweepLeftovers is a run's own sweep of its tmp-root and of the directory
// of its report (a path, "" for none), when one is due, as report warnings.
func SweepLeftovers(tmpRoot, report string) []string {
	if !sweepDue(tmpRoot, "files", time.Now()) {
		return nil
	}
	var dirs []string
	if report != "" {
		dirs = append(dirs, filepath.Dir(report))
	}
	removed, err := Sweep(tmpRoot, dirs)
	var warn []string
	for _, p := range removed {
		warn = append(warn, fmt.Sprintf("removed %s, a leftover of a dead run (its jail was killed)", p))
	}
	if err != nil {
		warn = append(warn, fmt.Sprintf("remove leftovers of dead runs: %v", err))
	}
	return warn
}

// SweepStaleLeaves is a run's own sweep of the cgroup leaves below the
// parent its leaf goes in (cfg, with the Host it makes the leaf with), when
// one is due, as report warnings. A jail killed with SIGKILL cannot remove
// its leaf; a later run takes it once it is unlocked, older than
// StaleLeafAge and empty.
func SweepStaleLeaves(h cgroupfs.Host, cfg cgroupfs.Config, tmpRoot string) []string {
	if !sweepDue(tmpRoot, "leaves", time.Now()) {
		return nil
	}
	gone, err := h.RemoveStale(cfg, LeafPrefix, StaleLeafAge)
	switch {
	case err != nil:
		return []string{fmt.Sprintf("remove leftover cgroup leaves: %v", err)}
	case len(gone) > 0:
		return []string{fmt.Sprintf("removed %d leftover cgroup leaf directories of dead runs", len(gone))}
	}
	return nil
}

func sweepTmpRoot(tmpRoot string) ([]string, error) {
	parent, err := os.OpenFile(tmpRoot, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open tmp-root %s: %w", tmpRoot, err)
	}
	defer parent.Close()
	names, err := parent.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read tmp-root %s: %w", tmpRoot, err)
	}
	var removed []string
	var errs []error
	for _, name := range names {
		var ours func(fd int, st *unix.Stat_t) bool
		switch {
		case strings.HasPrefix(name, DirPrefix) && CheckID(name[len(DirPrefix):]) == nil:
			ours = func(fd int, _ *unix.Stat_t) bool { return hasMark(fd) }
		case isNewDir(name):
			ours = func(fd int, st *unix.Stat_t) bool { return int(st.Uid) == os.Geteuid() || hasMark(fd) }
		default:
			continue
		}
		ok, err := takeDead(parent, name, unix.O_DIRECTORY, ours, func() error { return removeTree(parent, name) })
		if ok {
			removed = append(removed, filepath.Join(tmpRoot, name))
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

func sweepReports(dir string) ([]string, error) {
	parent, err := os.OpenFile(dir, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open report directory %s: %w", dir, err)
	}
	defer parent.Close()
	names, err := parent.Readdirnames(-1)
	if err != nil {
		return nil, fmt.Errorf("read report directory %s: %w", dir, err)
	}
	var removed []string
	var errs []error
	for _, name := range names {
		if !isTempReportName(name) {
			continue
		}
		ours := func(_ int, st *unix.Stat_t) bool {
			return st.Mode&unix.S_IFMT == unix.S_IFREG && int(st.Uid) == os.Geteuid()
		}
		ok, err := takeDead(parent, name, 0, ours, func() error { return unix.Unlinkat(int(parent.Fd()), name, 0) })
		if ok {
			removed = append(removed, filepath.Join(dir, name))
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// takeDead removes parent/name with remove if it is ours (by the check on
// its open fd) and no live process holds its lock. While remove runs we
// hold the lock, so its owner cannot be alive; the name is checked to be
// still the inode we locked.
func takeDead(parent *os.File, name string, flags int, ours func(fd int, st *unix.Stat_t) bool, remove func() error) (bool, error) {
	pfd := int(parent.Fd())
	fd, err := unix.Openat(pfd, name, flags|unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return false, nil // gone meanwhile, or not a directory/file of ours
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || !ours(fd, &st) {
		return false, nil
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false, nil // a live owner
	}
	var now unix.Stat_t
	if unix.Fstatat(pfd, name, &now, unix.AT_SYMLINK_NOFOLLOW) != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		return false, nil // replaced meanwhile
	}
	if err := remove(); err != nil {
		return false, fmt.Errorf("remove leftover %s: %w", filepath.Join(parent.Name(), name), err)
	}
	return true, nil
}
