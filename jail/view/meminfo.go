package view

import (
	"strconv"
	"strings"
	"unicode/utf8"
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

// HostMeminfo is the host's /proc/meminfo as it is now, read through a
// descriptor opened once a process: the kernel makes the file at each
// read from its start (a seq_file read at offset 0 starts over), and a
// served run's config read it by path for every run.
func HostMeminfo() ([]byte, error) { return meminfoFile.read() }

var meminfoFile = &keptFile{path: "/proc/meminfo"}

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
	value := func(key string) (int64, bool) {
		switch key {
		case "MemTotal":
			return total, true
		case "MemFree":
			return atMost(free, hostKB["MemFree"]), true
		case "MemAvailable":
			return atMost(free, hostKB["MemAvailable"]), true
		case "SwapTotal":
			return swapKB, true
		case "SwapFree":
			return atMost(swapKB, hostKB["SwapFree"]), true
		}
		return 0, false
	}
	// Appended by hand, as fmt's "%-16s%8d kB" would write each line (a
	// test holds every byte to it): made for every served run's config,
	// fmt took ~50 us of it (BenchmarkMeminfoView).
	b := make([]byte, 0, len(host)+64)
	for _, l := range lines {
		switch v, set := value(l.key); {
		case set:
			b = appendLine(b, l.key, v, true)
		case meminfoKeep[l.key]:
			b = append(append(append(append(b, l.key...), ':'), l.rest...), '\n')
		default:
			b = appendLine(b, l.key, 0, l.hasKB) // without kB: a count, e.g. of pages
		}
	}
	return string(b)
}

// appendLine appends "key:" padded to 16 columns, n right-aligned in 8,
// then " kB" when kb, and a newline: fmt's "%-16s%8d kB\n" (its widths
// count runes).
func appendLine(b []byte, key string, n int64, kb bool) []byte {
	b = append(append(b, key...), ':')
	for w := utf8.RuneCountInString(key) + 1; w < 16; w++ {
		b = append(b, ' ')
	}
	var d [20]byte
	num := strconv.AppendInt(d[:0], n, 10)
	for w := len(num); w < 8; w++ {
		b = append(b, ' ')
	}
	b = append(b, num...)
	if kb {
		b = append(b, " kB"...)
	}
	return append(b, '\n')
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
	lines := make([]meminfoLine, len(meminfoNeed), 64)
	hostKB := make(map[string]int64, 64)
	for l := range strings.Lines(host) {
		l = strings.TrimSuffix(l, "\n")
		key, rest, ok := strings.Cut(l, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		// strings.Fields' fields, without its slice: the first, and
		// whether the only other is kB.
		var first, second string
		fields := 0
		for f := range strings.FieldsSeq(rest) {
			switch fields {
			case 0:
				first = f
			case 1:
				second = f
			}
			fields++
		}
		if fields == 0 {
			continue
		}
		n, err := strconv.ParseInt(first, 10, 64)
		if err != nil || n < 0 {
			continue
		}
		if _, dup := hostKB[key]; dup {
			continue
		}
		hostKB[key] = n
		lines = append(lines, meminfoLine{key: key, rest: rest, kb: n, hasKB: fields == 2 && second == "kB"})
	}
	// The lines readers need that the host's file lacks go first, in
	// the kernel's order, in the room left for them.
	missing := 0
	for _, k := range meminfoNeed {
		if _, ok := hostKB[k]; !ok {
			hostKB[k] = -1
			lines[missing] = meminfoLine{key: k, hasKB: true}
			missing++
		}
	}
	return append(lines[:missing], lines[len(meminfoNeed):]...), hostKB
}

// atMost is n, or the host's figure when it has one that is smaller; never
// below 0.
func atMost(n, host int64) int64 {
	if host >= 0 && host < n {
		return host
	}
	return max(n, 0)
}
