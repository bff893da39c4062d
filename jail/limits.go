package jail

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/limits"
)

// The run's limits are declared once, in the table of jail/limits: their
// rule (none, what 0 means, bounds), their flags and profile fields. This
// file checks them, by row, and the one rule that spans two limits: a
// tmpfs is memory. A Spec stores them by row (Spec.Limits), a
// switched-off limit as 0; the report names every limit that is off in
// limits.none.

// SetLimit puts a value read by l.Parse in s, given over the profile's:
// the messages about it then name it as s.From's language does (--disk,
// request field limits.disk).
func (s *Spec) SetLimit(l *limits.Limit, a limits.Amount) {
	s.Limits.Set(l, a)
	s.From = s.From.With(l)
}

// cgroupLimits are the limits the run's cgroup leaf is made with: the
// rows that name a key of cgroupfs.Limits, under it.
func cgroupLimits(v limits.Values) cgroupfs.Limits {
	out := cgroupfs.Limits{}
	for _, l := range limits.All {
		if l.Cgroup != "" {
			a := v.Get(l)
			out[l.Cgroup] = cgroupfs.Value{N: a.Int(), CPUs: a.Float()}
		}
	}
	return out
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
// as the user gave it (From), and the tmpfs sizes against the
// memory they take: a tmpfs (the run directory's budget, /dev/shm) is
// memory, so it can never be larger than the run's memory limit, or
// without one, the machine's memory.
func (s *Spec) validateLimits() error {
	from := s.From
	if err := s.Limits.Check(func(l *limits.Limit) string { return from.Name(l) }); err != nil {
		return fmt.Errorf("%w: %w", ErrBadSpec, err)
	}
	mem := s.Limits.Int(limits.Memory)
	budget := mem
	if budget == 0 {
		budget = machineMemory()
	}
	for _, l := range limits.All {
		size := s.Limits.Int(l)
		if l.Tmpfs == "" || budget <= 0 || size <= budget {
			continue
		}
		// The message's words, made only for it.
		what := fmt.Sprintf("the run's memory limit (%s %s)", from.Name(limits.Memory), limits.FormatSize(mem))
		if mem == 0 {
			what = fmt.Sprintf("this machine's memory (%s)", limits.FormatSize(budget))
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
