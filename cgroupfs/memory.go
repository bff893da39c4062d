package cgroupfs

import (
	"path/filepath"
	"strconv"
)

// The memory controller: always on, for peak and OOM accounting.

// The keys of Limits the memory controller writes.
const (
	MemoryKey = "memory" // memory.max / memory.limit_in_bytes, bytes; 0 = no limit
	// SwapKey: v2 memory.swap.max, bytes (0 = no swap); v1
	// memory.memsw.limit_in_bytes = memory + swap when the file exists.
	SwapKey = "swap"
)

// memorySettings: v2 memory.max when limited, and memory.swap.max always
// (its default is "max", so no swap must be written out as 0). v1
// memory.limit_in_bytes, then memory.memsw.limit_in_bytes (RAM+swap),
// which must never be below limit_in_bytes, so it comes second.
func memorySettings(version int, l Limits) []Setting {
	memory, swap := l[MemoryKey].N, l[SwapKey].N
	mem := strconv.FormatInt(memory, 10)
	if version == 2 {
		var out []Setting
		if memory > 0 {
			out = append(out, Setting{File: "memory.max", Value: mem})
		}
		return append(out, Setting{File: "memory.swap.max", Value: strconv.FormatInt(swap, 10), IfPresent: true})
	}
	if memory == 0 {
		return nil
	}
	return []Setting{
		{File: "memory.limit_in_bytes", Value: mem},
		{File: "memory.memsw.limit_in_bytes", Value: strconv.FormatInt(memory+swap, 10), IfPresent: true},
	}
}

// statMemory reads the peak, the limit hits and the OOM kills. v2:
// memory.peak (5.19+), memory.events. v1: memory.max_usage_in_bytes,
// memory.failcnt plus memory.memsw.failcnt (with swap accounting the
// RAM+swap counter is charged first; when it is the one at its limit only
// it counts the hit), memory.oom_control's oom_kill (4.13+).
func statMemory(read reader, version int, dir string, u *Usage) error {
	if version == 2 {
		peak, err := intOptional(read, filepath.Join(dir, "memory.peak"))
		if err != nil {
			return err
		}
		ev, err := keyedOptional(read, filepath.Join(dir, "memory.events"))
		if err != nil {
			return err
		}
		u.PeakMemoryBytes, u.OOMKills, u.MemoryLimitHits = peak, ev["oom_kill"], ev["max"]
		return nil
	}
	var err error
	if u.PeakMemoryBytes, err = readInt(read, filepath.Join(dir, "memory.max_usage_in_bytes")); err != nil {
		return err
	}
	if u.MemoryLimitHits, err = readInt(read, filepath.Join(dir, "memory.failcnt")); err != nil {
		return err
	}
	memsw, err := intOptional(read, filepath.Join(dir, "memory.memsw.failcnt"))
	if err != nil {
		return err
	}
	u.MemoryLimitHits += memsw
	oom, err := keyedOptional(read, filepath.Join(dir, "memory.oom_control"))
	u.OOMKills = oom["oom_kill"]
	return err
}
