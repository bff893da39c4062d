package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

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
// Every run sweeps its own tmp-root and report directory before it starts
// (cheap: one directory read, and an open only of names that match);
// `scidex-jail gc` does the same for a timer, and the cgroup leaves too.

// runDirMark is the extended attribute a live run's directory carries. As
// root it is a trusted.* attribute, which only a process with CAP_SYS_ADMIN
// in the host's user namespace can set or remove, so an analysis can
// neither forge nor drop it; rootless, a user.* one.
func runDirMark() string {
	if os.Geteuid() == 0 {
		return "trusted.scidex-jail.run"
	}
	return "user.scidex-jail.run"
}

// markRunDir marks a new run directory as a live run's.
func markRunDir(fd int) error {
	return unix.Fsetxattr(fd, runDirMark(), []byte("1"), 0)
}

func hasMark(fd int) bool {
	var b [8]byte
	_, err := unix.Fgetxattr(fd, runDirMark(), b[:])
	return err == nil
}

// newDirID returns the ID of a run directory being made,
// .scidex-analysis-<ID>.<12 hex>.new, and whether name is one.
func isNewDir(name string) bool {
	id, ok := newDirID(name)
	return ok && ValidateID(id) == nil
}

func newDirID(name string) (string, bool) {
	rest, ok := strings.CutSuffix(name, ".new")
	if !ok || strings.ContainsRune(name, '\n') {
		return "", false
	}
	rest, ok = strings.CutPrefix(rest, "."+DirPrefix)
	if !ok {
		return "", false
	}
	id, suffix, ok := cutLast(rest, ".")
	return id, ok && id != "" && isHex12(suffix)
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
	return cgroupfs.RemoveStale(cgroupfs.Config{Parent: parent}, "scidex-", staleLeafAge)
}

// sweepLeftovers is a run's own sweep, as report warnings.
func sweepLeftovers(tmpRoot, reportDir string) []string {
	var dirs []string
	if reportDir != "" {
		dirs = append(dirs, reportDir)
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

// reportDir is the directory of a report path, "" for none.
func reportDir(report string) string {
	if report == "" {
		return ""
	}
	return filepath.Dir(report)
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
		case strings.HasPrefix(name, DirPrefix) && ValidateID(name[len(DirPrefix):]) == nil:
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
