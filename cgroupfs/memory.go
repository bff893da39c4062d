package cgroupfs

import "strconv"

// The memory controller: always on, for peak and OOM accounting.

func isMemorySet(Limits) bool { return true }

// memorySettings: v2 memory.max when limited, and memory.swap.max always
// (its default is "max", so no swap must be written out as 0). v1
// memory.limit_in_bytes, then memory.memsw.limit_in_bytes (RAM+swap),
// which must never be below limit_in_bytes, so it comes second.
func memorySettings(version int, l Limits) []Setting {
	mem := strconv.FormatInt(l.MemoryBytes, 10)
	if version == 2 {
		var out []Setting
		if l.MemoryBytes > 0 {
			out = append(out, Setting{Controller: "memory", File: "memory.max", Value: mem})
		}
		return append(out, Setting{Controller: "memory", File: "memory.swap.max", Value: strconv.FormatInt(l.SwapBytes, 10), IfPresent: true})
	}
	if l.MemoryBytes == 0 {
		return nil
	}
	return []Setting{
		{Controller: "memory", File: "memory.limit_in_bytes", Value: mem},
		{Controller: "memory", File: "memory.memsw.limit_in_bytes", Value: strconv.FormatInt(l.MemoryBytes+l.SwapBytes, 10), IfPresent: true},
	}
}
