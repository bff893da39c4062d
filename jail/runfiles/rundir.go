package runfiles

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"
)

// Dir is the analysis' own directory, created fresh and held by an
// exclusive flock on its own fd for the lifetime of the supervisor.
//
// Why the lock lives on the directory: a run whose jail died (SIGKILL, crash,
// reboot) leaves the directory behind but not the lock, because the kernel
// drops a flock when its last fd closes. So "exists and unlocked" means a
// leftover that is safe to clean, and "exists and locked" means a live run.
type Dir struct {
	path   string
	parent *os.File // the tmp-root, opened once; every later step is relative to it
	name   string
	lock   *os.File // the directory itself, flock'ed LOCK_EX
}

// Path is the run directory's absolute path.
func (d *Dir) Path() string { return d.path }

// Name is the run directory's name in the tmp-root.
func (d *Dir) Name() string { return d.name }

// CreateDir makes <tmp-root>/scidex-analysis-<id> fresh, mode 0700, owned
// by uid:gid (when we may chown), without following any link.
//
// The directory is born under a random temporary name, locked, chowned, and
// only then renamed into place with RENAME_NOREPLACE: no other party ever
// sees it unlocked, and a link or directory planted at the final name by
// someone else makes the rename fail instead of being used.
func CreateDir(tmpRoot, id string, uid, gid int) (*Dir, bool, error) {
	return CreateDirLeased(tmpRoot, id, uid, gid, nil)
}

// CreateDirLeased is CreateDir for a run whose uid is one of a range
// leased per run: a leftover directory owned by leased(owner), an earlier
// run's of another id of the range (kept, or left by a dead run), is
// removed as one of uid's would be.
func CreateDirLeased(tmpRoot, id string, uid, gid int, leased func(owner uint32) bool) (*Dir, bool, error) {
	a, err := prepareAnchor(tmpRoot, DirName(id), uid, gid)
	if err != nil {
		return nil, false, err
	}
	return a.Claim(tmpRoot, id, leased)
}

// Claim gives the anchor its run's name: the run directory of id in
// tmpRoot (the anchor's own, or another on its file system: a rename
// moves it there), which it is from then on (the anchor is spent,
// whatever the outcome). A leftover directory at that name is removed as
// CreateDirLeased removes one; one held by a live run is ErrBusy, and the
// anchor is removed. Another file system's tmpRoot is ErrOtherDevice, the
// anchor left for Discard: the caller makes the run's with CreateDir.
func (a *Anchor) Claim(tmpRoot, id string, leased func(owner uint32) bool) (*Dir, bool, error) {
	from, tmp, lock := a.parent, a.tmp, a.lock
	if from == nil {
		return nil, false, errors.New("bug: an anchor claimed twice")
	}
	parent := from
	if tmpRoot != a.tmpRoot {
		var err error
		if parent, err = os.OpenFile(tmpRoot, unix.O_DIRECTORY|unix.O_RDONLY, 0); err != nil {
			return nil, false, fmt.Errorf("open tmp-root %s: %w", tmpRoot, err)
		}
	}
	d := &Dir{path: filepath.Join(tmpRoot, DirName(id)), parent: parent, name: DirName(id)}
	pfd, ffd := int(parent.Fd()), int(from.Fd())
	cleanedStale := false
	for attempt := 0; ; attempt++ {
		err := unix.Renameat2(ffd, tmp, pfd, d.name, unix.RENAME_NOREPLACE)
		if errors.Is(err, unix.EXDEV) && attempt == 0 {
			parent.Close()
			return nil, false, ErrOtherDevice
		}
		if err == nil {
			break
		}
		if errors.Is(err, unix.EEXIST) && attempt < staleBusyTries {
			var busy, removed bool
			if busy, removed, err = d.removeStale(a.uid, leased); err == nil {
				cleanedStale = cleanedStale || removed
				if busy {
					// Held: a live run, or a sweep removing a dead
					// one; the latter lets go within moments.
					time.Sleep(staleBusyWait)
				}
				continue
			}
		}
		if err == nil || errors.Is(err, unix.EEXIST) {
			err = fmt.Errorf("%w: a run with this ID is still in progress (%s is held by a live scidex-jail); wait for it or choose another ID", ErrBusy, d.path)
		}
		a.parent, a.lock = nil, nil
		lock.Close()
		unix.Unlinkat(ffd, tmp, unix.AT_REMOVEDIR)
		if parent != from {
			parent.Close()
		}
		from.Close()
		if errors.Is(err, ErrBusy) || errors.Is(err, ErrBadSpec) {
			return nil, false, err
		}
		return nil, false, fmt.Errorf("rename run directory into place at %s: %w", d.path, err)
	}
	a.parent, a.lock = nil, nil
	if parent != from {
		from.Close()
	}
	d.lock = lock
	return d, cleanedStale, nil
}

// How long a run waits for a run directory of its ID that another process
// holds: a sweep (another run's, or gc) takes and removes a dead one within
// moments; a live run holds it for its whole run.
const (
	staleBusyTries = 25
	staleBusyWait  = 20 * time.Millisecond
)

// newLockedDir makes .<name>.<hex>.new in pfd, locked, marked and owned by
// uid:gid. A sweep takes an unlocked .new directory for a dead jail's: if
// one took ours in the moment between the mkdir and the lock, we see it
// (the lock is held, or the directory is already unlinked) and start again
// under another name.
func newLockedDir(pfd int, name string, uid, gid int) (string, *os.File, error) {
	for attempt := 0; attempt < 10; attempt++ {
		tmp := newDirName(name)
		if err := unix.Mkdirat(pfd, tmp, 0o700); err != nil {
			return "", nil, err
		}
		lock, err := openDirAt(pfd, tmp)
		if errors.Is(err, unix.ENOENT) {
			continue // a sweep removed it already
		}
		if err != nil {
			unix.Unlinkat(pfd, tmp, unix.AT_REMOVEDIR)
			return "", nil, err
		}
		if unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
			lock.Close() // a sweep holds it and removes it
			continue
		}
		var st unix.Stat_t
		if unix.Fstat(int(lock.Fd()), &st) != nil || st.Nlink == 0 {
			lock.Close() // a sweep removed it already
			continue
		}
		if err := prepareDir(lock, uid, gid); err != nil {
			lock.Close()
			unix.Unlinkat(pfd, tmp, unix.AT_REMOVEDIR)
			return "", nil, err
		}
		return tmp, lock, nil
	}
	return "", nil, fmt.Errorf("another process keeps taking the new run directory")
}

func openDirAt(dirfd int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

// prepareDir marks, chowns and chmods a new, locked run directory. The
// mark comes first: from then on, with or without its owner changed, a
// sweep knows the directory for a jail's (sweep.go). A file system without
// extended attributes gets no mark: such a directory, left by a killed
// jail, is removed only by a later run with the same ID.
func prepareDir(f *os.File, uid, gid int) error {
	fd := int(f.Fd())
	markRunDir(fd)
	if os.Geteuid() == 0 {
		if err := unix.Fchown(fd, uid, gid); err != nil {
			return fmt.Errorf("chown run directory to %d:%d: %w", uid, gid, err)
		}
	}
	// Fchmod after mkdir: the umask may have taken bits we do not want
	// anyway, but we want exactly 0700, never more.
	if err := unix.Fchmod(fd, 0o700); err != nil {
		return fmt.Errorf("chmod run directory: %w", err)
	}
	return nil
}

// removeStale removes what sits at the run directory's name if, and only if,
// it is a directory left by a dead run: a real directory (not a link),
// owned by us, by the analysis uid or by another id of its leased range,
// and not locked by a live supervisor.
// busy says it is locked (a live run, or a sweep taking it); removed, that
// this call removed it.
func (d *Dir) removeStale(uid int, leased func(uint32) bool) (busy, removed bool, err error) {
	pfd := int(d.parent.Fd())
	f, err := openDirAt(pfd, d.name)
	if err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, false, nil // taken by a sweep meanwhile
		}
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return false, false, fmt.Errorf("%w: %s already exists and is not a directory (a symlink or file planted there?); refusing to use it: remove it by hand", ErrBadSpec, d.path)
		}
		return false, false, fmt.Errorf("inspect existing %s: %w", d.path, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return false, false, fmt.Errorf("stat existing %s: %w", d.path, err)
	}
	if int(st.Uid) != os.Geteuid() && int(st.Uid) != uid && (leased == nil || !leased(st.Uid)) {
		return false, false, fmt.Errorf("%w: %s already exists and belongs to uid %d, not to this jail; refusing to use or remove it: remove it by hand", ErrBadSpec, d.path, st.Uid)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return true, false, nil
		}
		return false, false, fmt.Errorf("lock existing %s: %w", d.path, err)
	}
	if err := removeTree(d.parent, d.name); err != nil {
		return false, false, fmt.Errorf("remove leftover run directory %s: %w", d.path, err)
	}
	return false, true, nil
}

// Remove deletes the run directory without following links, then drops the
// lock. Called once, on every path out of a run.
func (d *Dir) Remove() error {
	err := removeTree(d.parent, d.name)
	d.Close()
	if err != nil {
		return fmt.Errorf("remove run directory %s: %w", d.path, err)
	}
	return nil
}

// Keep leaves the run directory in place for the caller: its mark goes, so
// no sweep takes it (only a later run with the same ID replaces it), then
// the lock.
func (d *Dir) Keep() error {
	var err error
	if d.lock != nil {
		if e := unix.Fremovexattr(int(d.lock.Fd()), runDirMark()); e != nil && !errors.Is(e, unix.ENODATA) && !errors.Is(e, unix.EOPNOTSUPP) {
			err = fmt.Errorf("unmark kept run directory %s (a sweep may take it): %w", d.path, e)
		}
	}
	d.Close()
	return err
}

// Close drops the lock and the tmp-root without removing anything: a run
// directory left so is a leftover the next sweep takes.
func (d *Dir) Close() {
	if d.lock != nil {
		d.lock.Close()
		d.lock = nil
	}
	d.parent.Close()
}

// removeTree removes parent/name and everything below it. os.Root keeps every
// step inside parent and never follows a symbolic link: a link planted by the
// target is removed as a link, its target untouched.
func removeTree(parent *os.File, name string) error {
	root, err := os.OpenRoot(parent.Name())
	if err != nil {
		return err
	}
	defer root.Close()
	return root.RemoveAll(name)
}
