package jail

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/limits"
)

// The run's limits are declared once, in the table of jail/limits: their
// rule (none, what 0 means, bounds), their flags and profile fields. This
// file only says where each one is stored, in a Spec and in a Profile, and
// checks the one rule that spans two limits: a tmpfs is memory. A Spec
// stores a switched-off limit as 0; the report names every limit that is
// off in limits.none.

// limitSlots are the places of the table's limits in s, in table order.
func (s *Spec) limitSlots() []limits.Slot {
	return []limits.Slot{
		limits.IntSlot(limits.Timeout, &s.Timeout), limits.IntSlot(limits.Grace, &s.Grace),
		limits.IntSlot(limits.Memory, &s.Resources.MemoryBytes), limits.IntSlot(limits.Swap, &s.Resources.SwapBytes),
		limits.CPUSlot(limits.CPUQuota, &s.Resources.CPUs), limits.IntSlot(limits.PIDs, &s.Resources.PIDs),
		limits.IntSlot(limits.Disk, &s.DiskBytes), limits.IntSlot(limits.Shm, &s.ShmBytes),
		limits.IntSlot(limits.OutputEntries, &s.Outputs.Entries), limits.IntSlot(limits.OutputBytes, &s.Outputs.Bytes),
		limits.IntSlot(limits.OutputFileBytes, &s.Outputs.FileBytes), limits.IntSlot(limits.OutputTime, &s.Outputs.Time),
	}
}

// SetLimit puts a value read by l.Parse in s, given as a flag: the
// messages about it then name the flag.
func (s *Spec) SetLimit(l *limits.Limit, a limits.Amount) {
	for _, sl := range s.limitSlots() {
		if sl.Limit == l {
			sl.Set(a)
			s.LimitsFrom = s.LimitsFrom.WithFlag(l)
		}
	}
}

// offLimits names the limits of s that are switched off, for the report.
func (s *Spec) offLimits() []string {
	off := []string{}
	for _, sl := range s.limitSlots() {
		if sl.Limit.None && sl.Get().IsZero() {
			off = append(off, sl.Limit.Name)
		}
	}
	return off
}

// machineMemory is the machine's RAM in bytes (0 if it cannot be read).
func machineMemory() int64 {
	var si unix.Sysinfo_t
	if err := unix.Sysinfo(&si); err != nil {
		return 0
	}
	return int64(si.Totalram) * int64(si.Unit)
}

// validateLimits checks every limit against the table's rule, naming it
// as the user gave it (LimitsFrom), and the tmpfs sizes against the
// memory they take: a tmpfs (the run directory's budget, /dev/shm) is
// memory, so it can never be larger than the run's memory limit, or
// without one, the machine's memory.
func (s *Spec) validateLimits() error {
	from := s.LimitsFrom
	for _, sl := range s.limitSlots() {
		if err := sl.Limit.Check(sl.Get()); err != nil {
			return fmt.Errorf("%w: %s %w", ErrBadSpec, from.Name(sl.Limit), err)
		}
	}
	mem := s.Resources.MemoryBytes
	budget, what := mem, fmt.Sprintf("the run's memory limit (%s %s)", from.Name(limits.Memory), limits.FormatSize(mem))
	if budget == 0 {
		budget = machineMemory()
		what = fmt.Sprintf("this machine's memory (%s)", limits.FormatSize(budget))
	}
	for _, sl := range s.limitSlots() {
		l, size := sl.Limit, sl.Get().Int()
		if l.Tmpfs == "" || budget <= 0 || size <= budget {
			continue
		}
		fix := "e.g. " + strings.TrimPrefix(l.Give, "a size such as ")
		if l.None {
			fix = fmt.Sprintf("or %s none for %s (%s)", from.Name(l), l.Off, l.TmpfsOff)
		}
		return fmt.Errorf("%w: %s %s is larger than %s, which %s counts toward: give at most %s, %s",
			ErrBadSpec, from.Name(l), limits.FormatSize(size), what, l.Tmpfs, limits.FormatSize(budget), fix)
	}
	return nil
}
