package jail

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/scidex/scidex-jail/cgroupfs"
	"golang.org/x/sys/unix"
)

// One rule for every limit, for the command line and the profiles file
// alike (README, "Limits"):
//
//   - the word none switches a limit off; only timeout, memory, cpus, pids
//     and disk can be switched off;
//   - 0 means none for timeout, memory and disk, as it always has;
//   - for cpus and pids 0 is refused: a zero there is a typo or a value
//     that slipped through a template, and the PID limit is what stops a
//     fork bomb, so switching it off must be written out as none;
//   - swap is an amount (0 = no swap), grace a duration (0 = SIGKILL at
//     once), shm a size (more than 0): none of them can be "none".
//
// A Spec stores a switched-off limit as 0; the report names every limit
// that is off in limits.none.

// NoLimit is the word that switches a limit off.
const NoLimit = "none"

// Bounds of the numeric limits.
const (
	// MaxCPUs bounds the CPU quota: far above any machine this runs on,
	// far below what would overflow the kernel's quota arithmetic.
	MaxCPUs = 4096
	// MinCPUs is the kernel's smallest quota (1 ms per 100 ms period).
	MinCPUs = cgroupfs.MinCPUs
	// MaxPIDs is the kernel's PID_MAX_LIMIT: pids.max refuses more.
	MaxPIDs = 1 << 22
)

// ParseCPUs reads a CPU quota: a positive decimal number of CPUs, or none.
func ParseCPUs(s string) (float64, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) || strings.ContainsAny(t, "xXpP_") {
		return 0, fmt.Errorf("%q is not a number of CPUs: give a decimal number such as 0.5 or 2, or none for no quota", s)
	}
	if v == 0 {
		return 0, fmt.Errorf("0 CPUs is refused: give a quota such as 0.5 or 2, or write none for no quota")
	}
	return v, checkCPUs(v)
}

func checkCPUs(v float64) error {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return fmt.Errorf("%v is not a number of CPUs: give a decimal number such as 0.5 or 2, or none for no quota", v)
	case v < 0:
		return fmt.Errorf("%g CPUs is negative: give a quota such as 0.5 or 2, or none for no quota", v)
	case v > 0 && v < MinCPUs:
		return fmt.Errorf("%g CPUs is below the kernel's smallest quota of %g: give at least %g, or none for no quota", v, MinCPUs, MinCPUs)
	case v > MaxCPUs:
		return fmt.Errorf("%g CPUs is above %d: give the CPUs the run may use, e.g. 2, or none for no quota", v, MaxCPUs)
	}
	return nil
}

// ParsePIDs reads a limit on processes and threads: a whole number, or none.
func ParsePIDs(s string) (int64, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	v, err := strconv.ParseInt(t, 10, 64)
	if err != nil && !isRangeErr(err) {
		return 0, fmt.Errorf("%q is not a whole number: give a limit such as 512, or none for no limit", s)
	}
	if err != nil || v > MaxPIDs {
		return 0, fmt.Errorf("%s is above the kernel's limit of %d processes: give e.g. 512, or none for no limit", t, MaxPIDs)
	}
	if v == 0 {
		return 0, fmt.Errorf("0 processes is refused: give a limit such as 512, or write none for no limit")
	}
	return v, checkPIDs(v)
}

func isRangeErr(err error) bool {
	ne, ok := err.(*strconv.NumError)
	return ok && ne.Err == strconv.ErrRange
}

func checkPIDs(v int64) error {
	switch {
	case v < 0:
		return fmt.Errorf("%d is negative: give a limit such as 512, or none for no limit", v)
	case v > 0 && v < minPIDs:
		return fmt.Errorf("%d is below %d: the limit counts threads, the jail's init alone holds up to 8 and the analysis' runtime more; give e.g. 256", v, minPIDs)
	case v > MaxPIDs:
		return fmt.Errorf("%d is above the kernel's limit of %d processes: give e.g. 512, or none for no limit", v, MaxPIDs)
	}
	return nil
}

// ParseSizeLimit reads a size that may be switched off (memory, disk): a
// size as ParseSize reads it, where none and 0 both mean no limit.
func ParseSizeLimit(s string) (int64, error) {
	if strings.TrimSpace(s) == NoLimit {
		return 0, nil
	}
	return ParseSize(s)
}

// ParseTimeout reads the wall-clock budget: a duration (90s, 30m, 1.5s),
// where none and 0 both mean no timeout.
func ParseTimeout(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	if t == NoLimit {
		return 0, nil
	}
	d, err := time.ParseDuration(t)
	if err != nil {
		return 0, fmt.Errorf("%q is not a duration: give e.g. 90s, 30m or 1.5s, or none for no timeout", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("%s is negative: give a duration such as 90s or 30m, or none for no timeout", t)
	}
	return d, nil
}

// offLimits names the limits of s that are switched off, for the report.
func (s *Spec) offLimits() []string {
	off := []string{}
	for _, l := range []struct {
		name string
		off  bool
	}{
		{"timeout", s.Timeout == 0}, {"memory", s.Resources.MemoryBytes == 0}, {"cpus", s.Resources.CPUs == 0},
		{"pids", s.Resources.PIDs == 0}, {"disk", s.DiskBytes == 0},
	} {
		if l.off {
			off = append(off, l.name)
		}
	}
	return append(off, s.Outputs.off()...)
}

// machineMemory is the machine's RAM in bytes (0 if it cannot be read).
func machineMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// validateResources checks every limit against the rule above and against
// the machine: a tmpfs (the run directory's budget, /dev/shm) is memory, so
// it can never be larger than the run's memory limit, or without one, the
// machine's memory.
func (s *Spec) validateResources() error {
	r := s.Resources
	if r.MemoryBytes < 0 || r.SwapBytes < 0 {
		return fmt.Errorf("%w: --memory and --swap must not be negative", ErrBadSpec)
	}
	if r.MemoryBytes > 0 && r.MemoryBytes < 8<<20 {
		return fmt.Errorf("%w: --memory %d bytes is below 8M: not even the jail's init fits; give e.g. 512M or 2G", ErrBadSpec, r.MemoryBytes)
	}
	if err := checkPIDs(r.PIDs); err != nil {
		return fmt.Errorf("%w: --pids %w", ErrBadSpec, err)
	}
	if err := checkCPUs(r.CPUs); err != nil {
		return fmt.Errorf("%w: --cpus %w", ErrBadSpec, err)
	}
	if s.DiskBytes < 0 || s.ShmBytes < 0 {
		return fmt.Errorf("%w: --disk and --shm sizes must not be negative", ErrBadSpec)
	}
	if s.DiskBytes > 0 && s.DiskBytes < 64<<10 {
		return fmt.Errorf("%w: --disk %d bytes is too small to be useful; give at least 64K (or 0 for no budget)", ErrBadSpec, s.DiskBytes)
	}
	if s.ShmBytes == 0 {
		return fmt.Errorf("%w: --shm 0: /dev/shm is always a private tmpfs and cannot be switched off; give its size, e.g. 64M", ErrBadSpec)
	}
	budget, what := r.MemoryBytes, fmt.Sprintf("the run's memory limit (--memory %s)", FormatSize(r.MemoryBytes))
	if budget == 0 {
		budget, what = machineMemory(), fmt.Sprintf("this machine's memory (%s)", FormatSize(machineMemory()))
	}
	if budget > 0 && s.DiskBytes > budget {
		return fmt.Errorf("%w: --disk %s is larger than %s, which the run directory's tmpfs counts toward: give at most %s, or --disk 0 for no budget (the run directory then lives on --tmp-root's filesystem)",
			ErrBadSpec, FormatSize(s.DiskBytes), what, FormatSize(budget))
	}
	if budget > 0 && s.ShmBytes > budget {
		return fmt.Errorf("%w: --shm %s is larger than %s, which /dev/shm counts toward: give at most %s, e.g. 64M",
			ErrBadSpec, FormatSize(s.ShmBytes), what, FormatSize(budget))
	}
	return nil
}
