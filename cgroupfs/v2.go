package cgroupfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// The cgroup v2 backend.

// supervisorLeaf is where the calling process moves itself when its own
// cgroup is the parent and holds processes (see enableV2).
const supervisorLeaf = "scidex-supervisor"

func (l *Leaf) createV2(h host, parent string, c Config) error {
	need := c.Limits.controllersOn(2)
	if err := l.enableV2(h, parent, need); err != nil {
		return err
	}
	if err := l.makeV2(parent, c); err != nil {
		return err
	}
	for _, ctl := range need {
		l.role[ctl] = l.dirs[0]
	}
	return nil
}

// makeV2 creates the leaf in parent, whose subtree_control already passes
// down the controllers c.Limits needs, writes the limits and opens the fd.
func (l *Leaf) makeV2(parent string, c Config) error {
	leaf := filepath.Join(parent, c.Name)
	if err := l.mkLeaf(leaf); err != nil {
		return err
	}
	if err := l.apply(Settings(2, c.Limits), func(string) string { return leaf }); err != nil {
		return err
	}
	// CLONE_INTO_CGROUP takes a directory fd of the target cgroup; O_PATH
	// would do for the kernel too, O_RDONLY|O_DIRECTORY is what clone3(2)
	// documents.
	fd, err := unix.Open(leaf, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("cgroupfs: open leaf %s: %w", leaf, err)
	}
	l.fd = fd
	return nil
}

// enableV2 enables the needed controllers in the parent's
// cgroup.subtree_control, so that the leaf gets their files.
func (l *Leaf) enableV2(h host, parent string, need []string) error {
	file := filepath.Join(parent, "cgroup.subtree_control")
	data, err := sysfile.Read(file)
	if err != nil {
		return fmt.Errorf("cgroupfs: read %s: %w", file, err)
	}
	have := parseList(string(data))
	var add []string
	for _, c := range need {
		if !slices.Contains(have, c) {
			add = append(add, "+"+c)
		}
	}
	if len(add) == 0 {
		return nil
	}
	value := strings.Join(add, " ")
	err = sysfile.Write(file, value)
	if errors.Is(err, unix.EBUSY) {
		// "No internal processes": a non-root cgroup that holds processes
		// cannot pass controllers down. The jail's own cgroup holds the jail.
		if err := l.moveSelf(h, parent); err != nil {
			return err
		}
		err = sysfile.Write(file, value)
	}
	if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) {
		return &UnsupportedError{Feature: "write access to " + file, Found: err.Error(), Fix: fixDelegateV2}
	}
	if err != nil {
		return fmt.Errorf("cgroupfs: enable controllers: %w", err)
	}
	l.written[file] = value
	return nil
}

// moveSelf moves the calling process from parent into parent's supervisor
// leaf. It is the one move this package makes and it stays inside the
// delegated subtree; it is refused when the parent also holds processes
// that are not ours, since moving those is not ours to do.
func (l *Leaf) moveSelf(h host, parent string) error {
	procsFile := filepath.Join(parent, "cgroup.procs")
	data, err := sysfile.Read(procsFile)
	if err != nil {
		return fmt.Errorf("cgroupfs: read %s: %w", procsFile, err)
	}
	pids, err := parsePIDs(procsFile, string(data))
	if err != nil {
		return fmt.Errorf("cgroupfs: %w", err)
	}
	self := os.Getpid()
	own, _ := h.v2.ownDir()
	if own != parent || len(pids) != 1 || pids[0] != self {
		return &UnsupportedError{
			Feature: "cgroup v2 controllers below " + parent,
			Found: fmt.Sprintf("it holds processes %v (this process is %d, in %s), and cgroup v2 passes controllers down only from cgroups without processes",
				pids, self, own),
			Fix: "pass a parent that holds no processes, or run the jail as the only process of its cgroup (systemd-run --scope -p Delegate=yes)",
		}
	}
	sup := filepath.Join(parent, supervisorLeaf)
	if err := os.Mkdir(sup, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("cgroupfs: create supervisor leaf: %w", err)
	}
	supProcs := filepath.Join(sup, "cgroup.procs")
	if err := sysfile.Write(supProcs, fmt.Sprint(self)); err != nil {
		return fmt.Errorf("cgroupfs: move supervisor: %w", err)
	}
	l.written[supProcs] = fmt.Sprint(self)
	return nil
}

// usageV2 reads each controller's counters from the leaf (its files
// are there whether or not the controller limits anything).
func (l *Leaf) usageV2() (Usage, error) {
	var u Usage
	for _, c := range controllers {
		if c.name == "" {
			continue // v1 only (cpuacct)
		}
		if err := c.stat(l.counters.read, 2, l.dirs[0], &u); err != nil {
			return u, fmt.Errorf("cgroupfs: usage: %w", err)
		}
	}
	return u, nil
}

// killV2 writes cgroup.kill (5.14+), which kills every process in the leaf
// at once, forks in flight included.
func (l *Leaf) killV2(deadline time.Time) error {
	err := sysfile.Write(filepath.Join(l.dirs[0], "cgroup.kill"), "1")
	switch {
	case err == nil:
		return waitEmpty(l.dirs, deadline)
	case errors.Is(err, fs.ErrNotExist):
		return l.killFrozen(deadline)
	}
	return fmt.Errorf("cgroupfs: kill: %w", err)
}

// killFrozen is Kill before cgroup.kill: freeze the leaf (5.2+) so nothing
// forks between listing and signalling, SIGKILL every process (v2 lets fatal
// signals through to frozen tasks), thaw, and loop until empty.
func (l *Leaf) killFrozen(deadline time.Time) error {
	dir := l.dirs[0]
	freeze := filepath.Join(dir, "cgroup.freeze")
	frozen := sysfile.Write(freeze, "1") == nil
	if frozen {
		for wait := time.Millisecond; time.Now().Before(deadline); wait = min(2*wait, 50*time.Millisecond) {
			ev, err := keyedOptional(readOptional, filepath.Join(dir, "cgroup.events"))
			if err != nil || ev["frozen"] == 1 {
				break
			}
			time.Sleep(wait)
		}
		pids, err := procsOf(l.dirs)
		if err == nil {
			err = signalListed(l.dirs, pids)
		}
		if terr := sysfile.Write(freeze, "0"); terr != nil {
			return fmt.Errorf("cgroupfs: kill: thaw: %w", errors.Join(err, terr))
		}
		if err != nil {
			return fmt.Errorf("cgroupfs: kill: %w", err)
		}
	}
	return killLoop(l.dirs, deadline)
}
