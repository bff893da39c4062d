package cgroupfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/sysfile"
)

// MinCPUs is the smallest CPU quota the kernel takes: 1 ms per 100 ms
// period (cpu.max, cpu.cfs_quota_us).
const MinCPUs = 0.01

// Limits are the resource limits of a leaf by key. The list of
// controllers (controllers.go) declares each key with the form of its
// value, and its controller's file says what it writes (memory.go:
// MemoryKey and SwapKey; cpu.go: CPUsKey; pids.go: PIDsKey), so that a new
// limit is a row of the list, or a key of one, and its file. A key left
// out, or 0, is no limit, except SwapKey, where 0 is no swap.
type Limits map[string]Value

// Value is one limit, in the form its key's [Kind] says: a whole number
// (bytes, processes: Whole), a CPU quota in CPUs (Quota), or one value per
// block device (PerDevice: io.max's form). The fields of other forms stay
// zero.
type Value struct {
	N       int64
	CPUs    float64
	Devices []DeviceValue
}

// Usage is what a leaf used, read back after (or during) a run. Counters a
// kernel does not provide stay zero. The run's report gives them under
// names of its own (jail/report's CgroupUsage): this package has no JSON.
type Usage struct {
	PeakMemoryBytes int64 // v2 memory.peak (5.19+); v1 memory.max_usage_in_bytes
	OOMKills        int64 // v2 memory.events oom_kill; v1 memory.oom_control oom_kill (4.13+)
	MemoryLimitHits int64 // v2 memory.events max; v1 memory.failcnt + memory.memsw.failcnt (0 on some kernels, e.g. 6.18)
	PIDsLimitHits   int64 // pids.events max

	CPUUsageUsec  int64 // v2 cpu.stat; v1 cpuacct
	CPUUserUsec   int64
	CPUSystemUsec int64
	NrPeriods     int64 // cpu.stat
	NrThrottled   int64
	ThrottledUsec int64
}

// Config says where a leaf goes and what it may use.
type Config struct {
	// Parent is the delegated cgroup the leaf goes in; "" means the calling
	// process's own cgroup (in each hierarchy on v1). On v2 it is a
	// directory under the cgroup2 mount or a cgroup path relative to it;
	// on v1 a cgroup path, taken in every hierarchy.
	Parent string
	// Name is the leaf's name, e.g. "scidex-<id>-<random>": letters,
	// digits, '.', '_' and '-', not starting with '.', at most 200 bytes.
	Name   string
	Limits Limits
}

// cpuPeriodUsec is the CFS period both versions use; the quota is CPUs times it.
const cpuPeriodUsec = 100000

// drainTimeout bounds how long Kill and Remove wait for a leaf to empty. A
// SIGKILLed process normally leaves within milliseconds; the margin is for
// slow VMs and processes stuck in uninterruptible I/O.
const drainTimeout = 15 * time.Second

// validName checks a leaf name: letters, digits, '.', '_', '-', not starting
// with '.', 1-200 bytes. A loop, not a regexp: a bounded repetition compiles
// into a large program at init, which every run of the binary paid for.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 200 || s[0] == '.' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func (c Config) validate() error {
	if !validName(c.Name) {
		return fmt.Errorf("cgroupfs: leaf name %q: want letters, digits, '.', '_', '-', not starting with '.', 1-200 bytes", c.Name)
	}
	return c.Limits.validate()
}

// validate checks every limit against the controller that declares it:
// its value's form, then the controller's own checks.
func (l Limits) validate() error {
	for key, v := range l {
		ctl, kind := controllerOf(key)
		if ctl == nil {
			return fmt.Errorf("cgroupfs: limits: key %q: no controller declares it; known: %s", key, strings.Join(Keys(), ", "))
		}
		if err := v.validate(key, kind); err != nil {
			return err
		}
		if ctl.check != nil {
			if err := ctl.check(l); err != nil {
				return err
			}
		}
	}
	return nil
}

// validate checks that v has the form kind and no negative amount.
func (v Value) validate(key string, kind Kind) error {
	if kind != Whole && v.N != 0 || kind != Quota && v.CPUs != 0 || kind != PerDevice && v.Devices != nil {
		return fmt.Errorf("cgroupfs: bug: limits: key %q: a value of another form than its key's: %+v", key, v)
	}
	if v.N < 0 {
		return fmt.Errorf("cgroupfs: limits: %s %d: negative", key, v.N)
	}
	seen := map[Device]bool{}
	for _, d := range v.Devices {
		if d.N < 0 || seen[d.Device] {
			return fmt.Errorf("cgroupfs: limits: %s: device %s: a negative value or the device twice", key, d.Device)
		}
		seen[d.Device] = true
	}
	return nil
}

// Leaf is one run's cgroup: a directory on v2, one per hierarchy on v1.
// Its methods are safe for concurrent use.
type Leaf struct {
	version int
	dirs    []string          // leaf directories, in creation order
	role    map[string]string // controller -> leaf directory serving it
	fd      int               // v2: O_RDONLY|O_DIRECTORY fd of the leaf; -1 on v1
	written map[string]string // file -> value as written

	lockFD int // flock'ed fd of the first directory: the leaf is in use (see stale.go)
	// counters are Usage's files, kept open until Remove (counters.go).
	counters counters

	mu      sync.Mutex
	removed bool
}

// Create probes the host, creates the leaf and writes its limits, before
// anything runs in it. On error nothing it created is left behind. It reads
// the host afresh; [Host.Create] uses one already read.
func Create(c Config) (*Leaf, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	h, err := ReadHost()
	if err != nil {
		return nil, err
	}
	return h.Create(c)
}

// Create is [Create] on h.
func (h Host) Create(c Config) (*Leaf, error) {
	if err := c.validate(); err != nil {
		return nil, err
	}
	info, v1dirs, err := h.h.choose(c.Parent, c.Limits)
	if err != nil {
		return nil, err
	}
	if err := h.h.checkWritable(info); err != nil {
		return nil, err
	}
	l := &Leaf{version: info.Version, role: map[string]string{}, fd: -1, lockFD: -1, written: map[string]string{}}
	if info.Version == 2 {
		err = l.createV2(h.h, info.Parents[0], c)
	} else {
		err = l.createV1(v1dirs, c)
	}
	if err != nil {
		if rerr := l.Remove(); rerr != nil {
			err = errors.Join(err, rerr)
		}
		return nil, err
	}
	// Its counter files are opened now, with the leaf, not at its first
	// Usage (counters.go): a served run's leaf is made ahead, in its
	// slot, and the run's reads of it (the base when it takes the slot,
	// its end) then open nothing on the request's path. A file that
	// cannot be read now is read (and its error met) by Usage.
	l.Usage()
	return l, nil
}

// Version is 2 or 1: the cgroup version the leaf lives in.
func (l *Leaf) Version() int { return l.version }

// Paths are the leaf's directories: one on v2, one per hierarchy on v1.
func (l *Leaf) Paths() []string { return append([]string(nil), l.dirs...) }

// Written is every file Create wrote, with the value as written, for the report.
func (l *Leaf) Written() map[string]string {
	m := make(map[string]string, len(l.written))
	for k, v := range l.written {
		m[k] = v
	}
	return m
}

// FD is a directory fd of the v2 leaf for SysProcAttr.CgroupFD
// (CLONE_INTO_CGROUP, Linux 5.7+); ok is false on v1. It stays open until
// Remove.
func (l *Leaf) FD() (fd int, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.fd, l.version == 2 && l.fd >= 0
}

// EnterThread moves the calling OS thread, alone, into the v1 leaf, in
// every hierarchy: what it forks then is born there, as with
// CLONE_INTO_CGROUP on v2. A thread that moves itself ("0" written to
// tasks) spares the kernel the global lock that moving a whole process
// (AddProcess) takes, whose every write waits for an RCU grace period
// (here 5-7 ms unless another move just happened, against 0.2-0.4 ms),
// holding up every fork and exit on the host meanwhile. The caller holds
// the thread (runtime.LockOSThread) and lets it end in the leaf, running
// nothing else: it never moves back out (package internal/osthread). The
// thread counts against pids.max while it lives. On v2 it is an error: use
// FD.
func (l *Leaf) EnterThread() error {
	if l.version != 1 {
		return fmt.Errorf("cgroupfs: enter thread: a v%d leaf: use FD (CLONE_INTO_CGROUP)", l.version)
	}
	for _, d := range l.dirs {
		if err := sysfile.Write(filepath.Join(d, "tasks"), "0"); err != nil {
			return fmt.Errorf("cgroupfs: move this thread into the leaf: %w", err)
		}
	}
	return nil
}

// AddProcess moves pid (the whole thread group) into the leaf, in every
// hierarchy on v1. On v2 prefer FD and CLONE_INTO_CGROUP.
func (l *Leaf) AddProcess(pid int) error {
	if pid <= 0 {
		return fmt.Errorf("cgroupfs: add process %d: bad pid", pid)
	}
	for _, d := range l.dirs {
		if err := sysfile.Write(filepath.Join(d, "cgroup.procs"), fmt.Sprint(pid)); err != nil {
			return fmt.Errorf("cgroupfs: add process %d: %w", pid, err)
		}
	}
	return nil
}

// Usage reads the leaf's counters. Their files are opened once (by
// Create) and stay open until Remove: every call reads them again,
// fresh, without opening them (counters.go).
func (l *Leaf) Usage() (Usage, error) {
	if l.version == 2 {
		return l.usageV2()
	}
	return l.usageV1()
}

// Kill sends SIGKILL to every process in the leaf and waits, up to
// drainTimeout, until it is empty.
func (l *Leaf) Kill() error {
	deadline := time.Now().Add(drainTimeout)
	if len(l.dirs) == 0 {
		return nil // Create failed before making a directory
	}
	if l.version == 2 {
		return l.killV2(deadline)
	}
	return killLoop(l.dirs, deadline)
}

// Remove kills whatever is left in the leaf, waits until it is empty and
// removes its directories. Removing twice is not an error.
func (l *Leaf) Remove() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.removed {
		return nil
	}
	// First, whatever follows: a leaf left in place for gc holds none.
	l.counters.close()
	pids, err := procsOf(l.dirs)
	if err != nil {
		return fmt.Errorf("cgroupfs: remove: %w", err)
	}
	if len(pids) > 0 {
		if err := l.Kill(); err != nil {
			return fmt.Errorf("cgroupfs: remove: %w", err)
		}
	}
	deadline := time.Now().Add(drainTimeout)
	for i := len(l.dirs) - 1; i >= 0; i-- {
		if err := rmdir(l.dirs[i], deadline); err != nil {
			return fmt.Errorf("cgroupfs: remove: %w", err)
		}
	}
	if l.fd >= 0 {
		unix.Close(l.fd)
		l.fd = -1
	}
	l.unlock()
	l.removed = true
	return nil
}

// rmdir removes a leaf directory. EBUSY means the kernel still counts a
// task in it (an exit still in progress): retry until deadline.
func rmdir(dir string, deadline time.Time) error {
	for wait := time.Millisecond; ; wait = min(2*wait, 100*time.Millisecond) {
		err := unix.Rmdir(dir)
		if err == nil || errors.Is(err, unix.ENOENT) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return &os.PathError{Op: "rmdir", Path: dir, Err: err}
		}
		time.Sleep(wait)
	}
}

// mkLeaf creates a leaf directory and records it so that a failed Create
// removes it. It refuses to adopt an existing directory: that one is not ours.
func (l *Leaf) mkLeaf(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		if errors.Is(err, unix.EACCES) || errors.Is(err, unix.EPERM) || errors.Is(err, unix.EROFS) {
			return &UnsupportedError{Feature: "write access to cgroup " + filepath.Dir(dir), Found: err.Error(), Fix: accessFix(l.version, err, RootlessV1Fix)}
		}
		return fmt.Errorf("cgroupfs: create leaf: %w", err)
	}
	l.dirs = append(l.dirs, dir)
	if len(l.dirs) == 1 {
		return l.lock(dir)
	}
	return nil
}

// set writes value to a file and records it in Written.
func (l *Leaf) set(file, value string) error {
	if err := sysfile.Write(file, value); err != nil {
		return fmt.Errorf("cgroupfs: set limit: %w", err)
	}
	l.written[file] = value
	return nil
}
