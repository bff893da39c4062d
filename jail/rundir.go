package jail

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// ErrBusy is wrapped when another live run holds the same analysis ID.
var ErrBusy = errors.New("analysis ID in use")

// runDir is the analysis' own directory, created fresh and held by an
// exclusive flock on its own fd for the lifetime of the supervisor.
//
// Why the lock lives on the directory: a run whose jail died (SIGKILL, crash,
// reboot) leaves the directory behind but not the lock, because the kernel
// drops a flock when its last fd closes. So "exists and unlocked" means a
// leftover that is safe to clean, and "exists and locked" means a live run.
type runDir struct {
	path   string
	parent *os.File // the tmp-root, opened once; every later step is relative to it
	name   string
	lock   *os.File // the directory itself, flock'ed LOCK_EX
}

// createRunDir makes <tmp-root>/scidex-analysis-<id> fresh, mode 0700, owned
// by uid:gid (when we may chown), without following any link.
//
// The directory is born under a random temporary name, locked, chowned, and
// only then renamed into place with RENAME_NOREPLACE: no other party ever
// sees it unlocked, and a link or directory planted at the final name by
// someone else makes the rename fail instead of being used.
func createRunDir(tmpRoot, id string, uid, gid int) (*runDir, bool, error) {
	parent, err := os.OpenFile(tmpRoot, unix.O_DIRECTORY|unix.O_RDONLY, 0)
	if err != nil {
		return nil, false, fmt.Errorf("open tmp-root %s: %w", tmpRoot, err)
	}
	d := &runDir{path: filepath.Join(tmpRoot, DirPrefix+id), parent: parent, name: DirPrefix + id}
	ok := false
	defer func() {
		if !ok {
			parent.Close()
		}
	}()

	tmp := "." + d.name + "." + randomSuffix() + ".new"
	pfd := int(parent.Fd())
	if err := unix.Mkdirat(pfd, tmp, 0o700); err != nil {
		return nil, false, fmt.Errorf("create run directory in %s: %w", tmpRoot, err)
	}
	lock, err := openDirAt(pfd, tmp)
	if err == nil {
		err = prepareDir(lock, uid, gid)
	}
	if err != nil {
		if lock != nil {
			lock.Close()
		}
		unix.Unlinkat(pfd, tmp, unix.AT_REMOVEDIR)
		return nil, false, err
	}

	cleanedStale := false
	for attempt := 0; ; attempt++ {
		err = unix.Renameat2(pfd, tmp, pfd, d.name, unix.RENAME_NOREPLACE)
		if err == nil {
			break
		}
		if !errors.Is(err, unix.EEXIST) || attempt > 0 {
			lock.Close()
			unix.Unlinkat(pfd, tmp, unix.AT_REMOVEDIR)
			return nil, false, fmt.Errorf("rename run directory into place at %s: %w", d.path, err)
		}
		if err = d.removeStale(uid); err != nil {
			lock.Close()
			unix.Unlinkat(pfd, tmp, unix.AT_REMOVEDIR)
			return nil, false, err
		}
		cleanedStale = true
	}
	d.lock = lock
	ok = true
	return d, cleanedStale, nil
}

func openDirAt(dirfd int, name string) (*os.File, error) {
	fd, err := unix.Openat(dirfd, name, unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	return os.NewFile(uintptr(fd), name), nil
}

func prepareDir(f *os.File, uid, gid int) error {
	fd := int(f.Fd())
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		return fmt.Errorf("lock new run directory: %w", err)
	}
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
// owned by us or by the analysis uid, and not locked by a live supervisor.
func (d *runDir) removeStale(uid int) error {
	pfd := int(d.parent.Fd())
	f, err := openDirAt(pfd, d.name)
	if err != nil {
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return fmt.Errorf("%w: %s already exists and is not a directory (a symlink or file planted there?); refusing to use it: remove it by hand", ErrBadSpec, d.path)
		}
		return fmt.Errorf("inspect existing %s: %w", d.path, err)
	}
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(f.Fd()), &st); err != nil {
		return fmt.Errorf("stat existing %s: %w", d.path, err)
	}
	if int(st.Uid) != os.Geteuid() && int(st.Uid) != uid {
		return fmt.Errorf("%w: %s already exists and belongs to uid %d, not to this jail; refusing to use or remove it: remove it by hand", ErrBadSpec, d.path, st.Uid)
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		if errors.Is(err, unix.EWOULDBLOCK) {
			return fmt.Errorf("%w: a run with this ID is still in progress (%s is held by a live scidex-jail); wait for it or choose another --id", ErrBusy, d.path)
		}
		return fmt.Errorf("lock existing %s: %w", d.path, err)
	}
	if err := removeTree(d.parent, d.name); err != nil {
		return fmt.Errorf("remove leftover run directory %s: %w", d.path, err)
	}
	return nil
}

// remove deletes the run directory without following links, then drops the
// lock. Called once, on every path out of a run.
func (d *runDir) remove() error {
	err := removeTree(d.parent, d.name)
	d.close()
	if err != nil {
		return fmt.Errorf("remove run directory %s: %w", d.path, err)
	}
	return nil
}

func (d *runDir) close() {
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

func randomSuffix() string {
	var b [6]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
