package uidlease

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// LeaseDir holds one lock file per leased id. It is a fixed path, not a
// setting: every jail of the host must meet in the same place, or two
// could lease one id.
const LeaseDir = "/run/scidex-jail-uids"

// FixDir is the fix for a lease directory that cannot be had (other than
// a full range): where it must be, and the way around it, which the
// caller ends with the options that fix the ids, as the user gives them
// (" with --uid and --gid").
const FixDir = "the jail keeps its leases in " + LeaseDir + ": give it a writable /run (in a container with a read-only root, a volume there), or fixed ids"

// ErrFull is wrapped when every id of the range is leased.
var ErrFull = errors.New("every id of the uid range is leased")

// A Lease is one id held until Release.
type Lease struct {
	id   uint32
	dir  int // LeaseDir
	lock int // the id's lock file, flocked
}

// ID is the leased uid (and gid).
func (l *Lease) ID() int { return int(l.id) }

// Acquire leases an id of r: it draws a random one and probes on from
// it, so that concurrent jails seldom meet on one file.
func Acquire(r Range) (*Lease, error) { return acquire(LeaseDir, 0, r) }

// acquire is Acquire with the directory and its owner as arguments: the
// unit tests lease in a directory of their own, as any user.
func acquire(path string, owner uint32, r Range) (*Lease, error) {
	dir, err := openDir(path, owner)
	if err != nil {
		return nil, err
	}
	start := rand.Uint64N(r.Size())
	for i := uint64(0); i < r.Size(); i++ {
		id := uint32(uint64(r.First) + (start+i)%r.Size())
		lock, err := tryLock(dir, path, strconv.FormatUint(uint64(id), 10))
		if err != nil {
			unix.Close(dir)
			return nil, err
		}
		if lock >= 0 {
			return &Lease{id: id, dir: dir, lock: lock}, nil
		}
	}
	unix.Close(dir)
	return nil, fmt.Errorf("%w: %s (%d ids), each held by a running jail (lock files in %s)", ErrFull, r, r.Size(), path)
}

// Release gives the id back: the lock file is removed while still
// locked, so that a jail that opened it meanwhile sees it gone (tryLock)
// and never holds a lock nobody else can find. nil is a no-op.
func (l *Lease) Release() {
	if l == nil {
		return
	}
	unix.Unlinkat(l.dir, strconv.FormatUint(uint64(l.id), 10), 0)
	unix.Close(l.lock)
	unix.Close(l.dir)
}

// openDir opens (making it if needed) the lease directory without
// following a link, and refuses it unless owner (root) owns it and no one
// else may write in it: who could, could lock every id, or swap a lock
// file under a holder.
func openDir(path string, owner uint32) (int, error) {
	if err := unix.Mkdir(path, 0o700); err != nil && !errors.Is(err, unix.EEXIST) {
		return -1, fmt.Errorf("make the uid lease directory %s: %w", path, err)
	}
	dir, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open the uid lease directory %s: %w (a link there is refused)", path, err)
	}
	var st unix.Stat_t
	if err := unix.Fstat(dir, &st); err != nil {
		unix.Close(dir)
		return -1, fmt.Errorf("stat the uid lease directory %s: %w", path, err)
	}
	if st.Uid != owner || st.Mode&0o022 != 0 {
		unix.Close(dir)
		return -1, fmt.Errorf("%w: the uid lease directory %s is owned by uid %d, mode %#o: want uid %d's and not writable by group or others; remove it (it holds only lock files)", ErrRange, path, st.Uid, st.Mode&0o7777, owner)
	}
	return dir, nil
}

// tryLock locks the id's file in dir: its descriptor, or -1 when another
// jail holds it.
func tryLock(dir int, path, name string) (int, error) {
	for {
		fd, err := unix.Openat(dir, name, unix.O_RDWR|unix.O_CREAT|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
		if err != nil {
			return -1, fmt.Errorf("open the uid lock %s/%s: %w", path, name, err)
		}
		err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
		if errors.Is(err, unix.EWOULDBLOCK) {
			unix.Close(fd)
			return -1, nil
		}
		if err != nil {
			unix.Close(fd)
			return -1, fmt.Errorf("lock the uid lock %s/%s: %w", path, name, err)
		}
		// The holder may have released (removed) the file between our
		// open and our lock: then the lock is on a file no one else
		// finds, and a third jail could lock a new one. Hold only a file
		// still at its name.
		var held, named unix.Stat_t
		if unix.Fstat(fd, &held) == nil && unix.Fstatat(dir, name, &named, unix.AT_SYMLINK_NOFOLLOW) == nil &&
			held.Dev == named.Dev && held.Ino == named.Ino {
			return fd, nil
		}
		unix.Close(fd)
	}
}

// Sweep removes the lock files no jail holds (left by jails that were
// killed) from LeaseDir, for gc, and returns their paths. A missing
// directory holds none. It locks each file before removing it, as Release
// does, so that a lease taken meanwhile is never lost.
func Sweep() ([]string, error) {
	if _, err := os.Lstat(LeaseDir); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return sweep(LeaseDir, 0)
}

func sweep(path string, owner uint32) ([]string, error) {
	dir, err := openDir(path, owner)
	if err != nil {
		return nil, err
	}
	defer unix.Close(dir)
	names, err := os.ReadDir(path)
	if err != nil {
		return nil, fmt.Errorf("read the uid lease directory %s: %w", path, err)
	}
	var removed []string
	for _, e := range names {
		if _, err := strconv.ParseUint(e.Name(), 10, 32); err != nil || !e.Type().IsRegular() {
			continue // not a lock file of ours: left alone
		}
		lock, err := tryLock(dir, path, e.Name())
		if err != nil {
			return removed, err
		}
		if lock < 0 {
			continue // held by a live jail
		}
		if unix.Unlinkat(dir, e.Name(), 0) == nil {
			removed = append(removed, filepath.Join(path, e.Name()))
		}
		unix.Close(lock)
	}
	return removed, nil
}
