package jail

import (
	"fmt"
	"strings"

	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/promise"
)

// A report never states a limit nothing enforced. Every limit is held by
// one layer, the table's EnforcedBy: the supervisor's clock and listing
// (timeout, grace, the output budgets) and the tmpfs sizes (disk, shm)
// on every run, the cgroup leaf for the rows that name a cgroupfs key
// (memory, swap, cpus, pids). Only the leaf can be given up by name
// (--unsafe-disable cgroup: a rootless run on a hybrid host); its rows
// are then held by nothing, and the report says so: limits.not_enforced,
// their fields 0, and a sentence in the completion notes.

// unheldLimits are the limits s asks for that no layer holds on its run:
// the cgroup leaf's rows when the leaf is given up, except those
// switched off (none asks for nothing). Swap's 0 is an amount (no swap),
// so it is asked for and unheld too.
func unheldLimits(s *Spec) []*limits.Limit {
	if !s.disabled(promise.ProtectCgroup) {
		return nil
	}
	var out []*limits.Limit
	for _, l := range limits.All {
		if l.Cgroup != "" && !(l.None && s.Limits.Get(l).IsZero()) {
			out = append(out, l)
		}
	}
	return out
}

// UnheldNote is the completion notes' sentence naming the limits no layer
// held ("" when every limit was held).
func UnheldNote(ls []*limits.Limit) string {
	if len(ls) == 0 {
		return ""
	}
	names := make([]string, len(ls))
	for i, l := range ls {
		names[i] = l.Name
	}
	return fmt.Sprintf("Not enforced on this run (no cgroup): the %s limits; the report gives them as 0, named in limits.not_enforced.", strings.Join(names, ", "))
}
