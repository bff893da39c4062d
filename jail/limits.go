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

// slot is where one limit's value is stored.
type slot struct {
	limit *limits.Limit
	get   func() limits.Amount
	set   func(limits.Amount)
}

func intSlot[T ~int64](l *limits.Limit, p *T) slot {
	return slot{l, func() limits.Amount { return limits.Int(*p) }, func(a limits.Amount) { *p = T(a.Int()) }}
}

func cpuSlot(l *limits.Limit, p *float64) slot {
	return slot{l, func() limits.Amount { return limits.Float(*p) }, func(a limits.Amount) { *p = a.Float() }}
}

// limitSlots are the places of the table's limits in s, in table order.
func (s *Spec) limitSlots() []slot {
	return []slot{
		intSlot(limits.Timeout, &s.Timeout), intSlot(limits.Grace, &s.Grace),
		intSlot(limits.Memory, &s.Resources.MemoryBytes), intSlot(limits.Swap, &s.Resources.SwapBytes),
		cpuSlot(limits.CPUQuota, &s.Resources.CPUs), intSlot(limits.PIDs, &s.Resources.PIDs),
		intSlot(limits.Disk, &s.DiskBytes), intSlot(limits.Shm, &s.ShmBytes),
		intSlot(limits.OutputEntries, &s.Outputs.Entries), intSlot(limits.OutputBytes, &s.Outputs.Bytes),
		intSlot(limits.OutputFileBytes, &s.Outputs.FileBytes), intSlot(limits.OutputTime, &s.Outputs.Time),
	}
}

// limitSlots are the places of the table's limits in p, in table order.
func (p *Profile) limitSlots() []slot {
	return []slot{
		intSlot(limits.Timeout, &p.Timeout), intSlot(limits.Grace, &p.Grace),
		intSlot(limits.Memory, &p.Memory), intSlot(limits.Swap, &p.Swap),
		cpuSlot(limits.CPUQuota, &p.CPUs), intSlot(limits.PIDs, &p.PIDs),
		intSlot(limits.Disk, &p.Disk), intSlot(limits.Shm, &p.Shm),
		intSlot(limits.OutputEntries, &p.Outputs.Entries), intSlot(limits.OutputBytes, &p.Outputs.Bytes),
		intSlot(limits.OutputFileBytes, &p.Outputs.FileBytes), intSlot(limits.OutputTime, &p.Outputs.Time),
	}
}

// SetLimit puts a value read by l.Parse in s, given as a flag: the
// messages about it then name the flag.
func (s *Spec) SetLimit(l *limits.Limit, a limits.Amount) {
	for _, sl := range s.limitSlots() {
		if sl.limit == l {
			sl.set(a)
			s.LimitsFrom = s.LimitsFrom.WithFlag(l)
		}
	}
}

// offLimits names the limits of s that are switched off, for the report.
func (s *Spec) offLimits() []string {
	off := []string{}
	for _, sl := range s.limitSlots() {
		if sl.limit.None && sl.get().IsZero() {
			off = append(off, sl.limit.Name)
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
		if err := sl.limit.Check(sl.get()); err != nil {
			return fmt.Errorf("%w: %s %w", ErrBadSpec, from.Name(sl.limit), err)
		}
	}
	mem := s.Resources.MemoryBytes
	budget, what := mem, fmt.Sprintf("the run's memory limit (%s %s)", from.Name(limits.Memory), limits.FormatSize(mem))
	if budget == 0 {
		budget = machineMemory()
		what = fmt.Sprintf("this machine's memory (%s)", limits.FormatSize(budget))
	}
	for _, sl := range s.limitSlots() {
		l, size := sl.limit, sl.get().Int()
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
