package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// A leaf's owner holds an exclusive flock on the leaf's first directory for
// as long as the Leaf is not removed. When the owner dies without removing
// it (a jail killed with SIGKILL cannot clean up), the kernel drops the lock:
// an unlocked leaf of some age is a leftover that RemoveStale may take.

func (l *Leaf) lock(dir string) error {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cgroupfs: open leaf %s: %w", dir, err)
	}
	if err := unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB); err != nil {
		unix.Close(fd)
		return fmt.Errorf("cgroupfs: lock leaf %s: %w", dir, err)
	}
	l.lockFD = fd
	return nil
}

func (l *Leaf) unlock() {
	if l.lockFD >= 0 {
		unix.Close(l.lockFD)
		l.lockFD = -1
	}
}

// RemoveStale removes leaves named prefix* below the parent of c (as Create
// would place c's leaf) that no live owner holds and that are older than
// minAge: leftovers of owners that died. The age keeps it off a leaf another
// process has just made and not yet locked. A leftover that still holds
// processes is left alone. It returns the directories it removed. It reads
// the host afresh; [Host.RemoveStale] uses one already read.
func RemoveStale(c Config, prefix string, minAge time.Duration) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	h, err := ReadHost()
	if err != nil {
		return nil, err
	}
	return h.RemoveStale(c, prefix, minAge)
}

func checkPrefix(prefix string) error {
	if prefix == "" || strings.ContainsAny(prefix, "/.") {
		return fmt.Errorf("cgroupfs: remove stale: bad prefix %q", prefix)
	}
	return nil
}

// RemoveStale is [RemoveStale] on h. A run calls it before [Host.Create]
// with the same Host and Config.
func (h Host) RemoveStale(c Config, prefix string, minAge time.Duration) ([]string, error) {
	if err := checkPrefix(prefix); err != nil {
		return nil, err
	}
	// Every controller: a leftover may have had limits this caller has not.
	info, v1dirs, err := h.h.choose(c.Parent, every())
	if err != nil {
		info, v1dirs, err = h.h.choose(c.Parent, c.Limits)
	}
	if err != nil {
		return nil, err
	}
	parents := info.Parents
	if info.Version == 1 {
		parents = parents[:0]
		for _, d := range v1dirs {
			parents = append(parents, d.parent)
		}
	}
	if len(parents) == 0 {
		return nil, nil
	}
	// Create makes the leaf in parents in this order and locks the first.
	es, err := os.ReadDir(parents[0])
	if err != nil {
		return nil, fmt.Errorf("cgroupfs: remove stale: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range es {
		// The shared supervisor leaf is never a leftover: jails move
		// themselves into it without a lock.
		if !e.IsDir() || !strings.HasPrefix(e.Name(), prefix) || e.Name() == supervisorLeaf {
			continue
		}
		dirs, err := takeStale(parents, e.Name(), minAge)
		removed = append(removed, dirs...)
		if err != nil {
			errs = append(errs, err)
		}
	}
	return removed, errors.Join(errs...)
}

// takeStale removes name from every parent if it is unlocked, old enough and
// empty. Not being able to take it is not an error: it is in use.
func takeStale(parents []string, name string, minAge time.Duration) ([]string, error) {
	first := filepath.Join(parents[0], name)
	fd, err := unix.Open(first, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, nil // gone meanwhile
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || time.Since(time.Unix(st.Ctim.Unix())) < minAge {
		return nil, nil
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return nil, nil // a live owner
	}
	var dirs []string
	for _, p := range parents {
		dirs = append(dirs, filepath.Join(p, name))
	}
	if pids, err := procsOf(existing(dirs)); err != nil || len(pids) > 0 {
		return nil, nil
	}
	var removed []string
	for i := len(dirs) - 1; i >= 0; i-- {
		err := unix.Rmdir(dirs[i])
		if err == nil {
			removed = append(removed, dirs[i])
			continue
		}
		if !errors.Is(err, unix.ENOENT) {
			return removed, fmt.Errorf("cgroupfs: remove stale leaf %s: %w", dirs[i], err)
		}
	}
	return removed, nil
}

func existing(dirs []string) []string {
	var out []string
	for _, d := range dirs {
		if _, err := os.Stat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}
