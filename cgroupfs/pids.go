package cgroupfs

import (
	"path/filepath"
	"strconv"
)

// The pids controller: pids.max, on both versions (it counts threads).

// PIDsKey is the key of Limits of pids.max (it counts threads); 0 = no
// limit.
const PIDsKey = "pids"

var _ = register(controller{name: "pids", order: 3, keys: []string{PIDsKey},
	isSet: func(l Limits) bool { return l[PIDsKey].N > 0 }, set: pidsSettings, stat: statPids})

func pidsSettings(_ int, l Limits) []Setting {
	return []Setting{{Controller: "pids", File: "pids.max", Value: strconv.FormatInt(l[PIDsKey].N, 10)}}
}

// statPids reads how often a fork failed at the limit: pids.events max.
func statPids(_ int, dir string, u *Usage) error {
	ev, err := keyedOptional(filepath.Join(dir, "pids.events"))
	u.PIDsLimitHits = ev["max"]
	return err
}
