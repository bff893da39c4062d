package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// procsOf is the union of cgroup.procs of dirs. A directory already gone
// holds nothing. The calling process is never listed: on cgroup v1 one of
// its threads may still sit in a leaf it spawned from (EnterThread), and a
// kill of the leaf must never reach the jail itself (that thread only
// keeps the leaf busy until it ends; rmdir waits for it).
func procsOf(dirs []string) ([]int, error) {
	var all []int
	for _, d := range dirs {
		file := filepath.Join(d, "cgroup.procs")
		data, err := sysfile.Read(file)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("list processes: %w", err)
		}
		pids, err := parsePIDs(file, string(data))
		if err != nil {
			return nil, err
		}
		all = append(all, pids...)
	}
	all = slices.DeleteFunc(all, func(pid int) bool { return pid == os.Getpid() })
	slices.Sort(all)
	return slices.Compact(all), nil
}

// killLoop sends SIGKILL to every process listed in dirs until none is left.
// Each round catches the children forked before the previous round's
// signals landed; a process with a pending SIGKILL forks no more.
func killLoop(dirs []string, deadline time.Time) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		pids, err := procsOf(dirs)
		if err != nil {
			return fmt.Errorf("cgroupfs: kill: %w", err)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroupfs: kill: %v still holds processes %v after %v", dirs, pids, drainTimeout)
		}
		if err := signalListed(dirs, pids); err != nil {
			return fmt.Errorf("cgroupfs: kill: %w", err)
		}
		time.Sleep(wait)
	}
}

// waitEmpty waits until no process is listed in dirs. Zombies are not
// listed: the kernel drops a task from cgroup.procs when it exits, before
// it is reaped.
func waitEmpty(dirs []string, deadline time.Time) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		pids, err := procsOf(dirs)
		if err != nil {
			return fmt.Errorf("cgroupfs: wait for leaf to empty: %w", err)
		}
		if len(pids) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("cgroupfs: wait for leaf to empty: %v still holds processes %v after %v", dirs, pids, drainTimeout)
		}
		time.Sleep(wait)
	}
}

// signalListed sends SIGKILL to pids, read from dirs' cgroup.procs. A pid
// may be recycled by an unrelated process between that read and the
// signal, so each is pinned with a pidfd (5.3+) first and signalled only if
// it is still listed afterwards: then the pidfd is either that process or
// one that has since died, never a stranger.
func signalListed(dirs []string, pids []int) error {
	fds := map[int]int{}
	defer func() {
		for _, fd := range fds {
			unix.Close(fd)
		}
	}()
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		switch {
		case err == nil:
			fds[pid] = fd
		case errors.Is(err, unix.ESRCH):
			// Gone already.
		case errors.Is(err, unix.ENOSYS):
			// Before 5.3: a plain kill, accepting the recycling race.
			if err := unix.Kill(pid, unix.SIGKILL); err != nil && !errors.Is(err, unix.ESRCH) {
				return fmt.Errorf("kill %d: %w", pid, err)
			}
		default:
			return fmt.Errorf("pidfd_open %d: %w", pid, err)
		}
	}
	if len(fds) == 0 {
		return nil
	}
	still, err := procsOf(dirs)
	if err != nil {
		return err
	}
	for _, pid := range still {
		fd, ok := fds[pid]
		if !ok {
			continue // forked after the first read: the next round gets it
		}
		if err := unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0); err != nil && !errors.Is(err, unix.ESRCH) {
			return fmt.Errorf("pidfd_send_signal %d: %w", pid, err)
		}
	}
	return nil
}
