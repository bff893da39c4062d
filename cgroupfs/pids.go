package cgroupfs

import (
	"path/filepath"
	"strconv"
)

// The pids controller: pids.max, on both versions (it counts threads).

func isPidsSet(l Limits) bool { return l.PIDs > 0 }

func pidsSettings(_ int, l Limits) []Setting {
	return []Setting{{Controller: "pids", File: "pids.max", Value: strconv.FormatInt(l.PIDs, 10)}}
}

// statPids reads how often a fork failed at the limit: pids.events max.
func statPids(_ int, dir string, u *Usage) error {
	ev, err := keyedOptional(filepath.Join(dir, "pids.events"))
	u.PIDsLimitHits = ev["max"]
	return err
}
