package cgroupfs

import (
	"path/filepath"
	"strconv"
)

// The pids controller: pids.max, on both versions (it counts threads).

// PIDsKey is the key of Limits of pids.max (it counts threads); 0 = no
// limit.
const PIDsKey = "pids"

func pidsSettings(_ int, l Limits) []Setting {
	return []Setting{{File: "pids.max", Value: strconv.FormatInt(l[PIDsKey].N, 10)}}
}

// statPids reads how often a fork failed at the limit: pids.events max.
func statPids(read reader, _ int, dir string, u *Usage) error {
	ev, err := keyedOptional(read, filepath.Join(dir, "pids.events"))
	u.PIDsLimitHits = ev["max"]
	return err
}
