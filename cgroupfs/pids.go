package cgroupfs

import "strconv"

// The pids controller: pids.max, on both versions (it counts threads).

func isPidsSet(l Limits) bool { return l.PIDs > 0 }

func pidsSettings(_ int, l Limits) []Setting {
	return []Setting{{Controller: "pids", File: "pids.max", Value: strconv.FormatInt(l.PIDs, 10)}}
}
