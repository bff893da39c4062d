package view

import (
	"fmt"
	"strconv"
	"strings"
)

// meminfoKeep are the lines of the host's /proc/meminfo the analysis sees
// as they are: the machine's geometry (huge page sizes and counts, the
// direct map, the vmalloc space), not amounts of its memory.
var meminfoKeep = map[string]bool{
	"HugePages_Total": true, "HugePages_Free": true, "HugePages_Rsvd": true, "HugePages_Surp": true,
	"Hugepagesize": true, "Hugetlb": true, "VmallocTotal": true,
	"DirectMap4k": true, "DirectMap2M": true, "DirectMap4M": true, "DirectMap1G": true,
}

// meminfoNeed are the lines every reader looks for, in the kernel's order:
// written even if the host's file lacks them.
var meminfoNeed = []string{"MemTotal", "MemFree", "MemAvailable", "SwapTotal", "SwapFree"}

// MeminfoView is /proc/meminfo as the analysis sees it under a memory
// limit of limit bytes (swap: of swap bytes more), with used bytes in use
// in its cgroup as it starts: libraries that size themselves from
// MemTotal and MemAvailable (numpy's test suite, joblib, dask, the JVM)
// then size themselves to the run, as LXCFS makes them in containers.
//
//   - MemTotal is the limit, or the host's total if that is smaller;
//   - MemFree and MemAvailable are what the limit leaves after used, or
//     the host's own figure if that is smaller: a snapshot at the start,
//     never updated (the file is generated once, not served);
//   - SwapTotal and SwapFree are the swap the run may use, as far as the
//     host has it;
//   - the machine's geometry (meminfoKeep) is the host's;
//   - every other amount (Buffers, Cached, Active, Slab, ...) is 0: the
//     host's would exceed MemTotal, and the run's own are not known at
//     its start.
//
// host is the host's /proc/meminfo; lines that are not "Key: value" are
// dropped.
func MeminfoView(host string, limit, swap, used int64) string {
	lines, hostKB := parseMeminfo(host)
	total := atMost(limit/1024, hostKB["MemTotal"])
	free := total - (used+1023)/1024
	swapKB := atMost(swap/1024, hostKB["SwapTotal"])
	value := map[string]int64{
		"MemTotal":     total,
		"MemFree":      atMost(free, hostKB["MemFree"]),
		"MemAvailable": atMost(free, hostKB["MemAvailable"]),
		"SwapTotal":    swapKB,
		"SwapFree":     atMost(swapKB, hostKB["SwapFree"]),
	}
	var b strings.Builder
	for _, l := range lines {
		switch v, set := value[l.key]; {
		case set:
			fmt.Fprintf(&b, "%-16s%8d kB\n", l.key+":", v)
		case meminfoKeep[l.key]:
			fmt.Fprintf(&b, "%s:%s\n", l.key, l.rest)
		case !l.hasKB:
			fmt.Fprintf(&b, "%-16s%8d\n", l.key+":", 0) // a count, e.g. of pages
		default:
			fmt.Fprintf(&b, "%-16s%8d kB\n", l.key+":", 0)
		}
	}
	return b.String()
}

// meminfoLine is one "Key: value" line of a meminfo file.
type meminfoLine struct {
	key, rest string
	kb        int64
	hasKB     bool
}

// parseMeminfo reads the host's meminfo: its lines in order, and each
// key's amount (-1 for a line readers need that the host's file lacks,
// which is put first, in the kernel's order).
func parseMeminfo(host string) ([]meminfoLine, map[string]int64) {
	var lines []meminfoLine
	hostKB := map[string]int64{}
	for _, l := range strings.Split(host, "\n") {
		key, rest, ok := strings.Cut(l, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			continue
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil || n < 0 {
			continue
		}
		if _, dup := hostKB[key]; dup {
			continue
		}
		hostKB[key] = n
		lines = append(lines, meminfoLine{key: key, rest: rest, kb: n, hasKB: len(f) == 2 && f[1] == "kB"})
	}
	var missing []meminfoLine
	for _, k := range meminfoNeed {
		if _, ok := hostKB[k]; !ok {
			hostKB[k] = -1
			missing = append(missing, meminfoLine{key: k, hasKB: true})
		}
	}
	return append(missing, lines...), hostKB
}

// atMost is n, or the host's figure when it has one that is smaller; never
// below 0.
func atMost(n, host int64) int64 {
	if host >= 0 && host < n {
		return host
	}
	return max(n, 0)
}
