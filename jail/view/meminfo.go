package view

import (
	"slices"
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
	// The five amounts of meminfoNeed, in its order.
	value := [...]int64{total, atMost(free, hostKB["MemFree"]), atMost(free, hostKB["MemAvailable"]),
		swapKB, atMost(swapKB, hostKB["SwapFree"])}
	b := make([]byte, 0, len(host)+64)
	for _, l := range lines {
		switch i := slices.Index(meminfoNeed, l.key); {
		case i >= 0:
			b = appendRow(b, l.key, value[i], true)
		case meminfoKeep[l.key]:
			b = append(append(append(append(b, l.key...), ':'), l.rest...), '\n')
		default:
			b = appendRow(b, l.key, 0, l.hasKB) // !hasKB: a count, e.g. of pages
		}
	}
	return string(b)
}

// appendRow appends fmt's "%-16s%8d kB\n" of key+":" and n to b ("%-16s%8d\n"
// when !kB): each run's view is made on its request's path, and fmt's
// Fprintf of its ~55 rows was most of a served run's 0.05 ms here. Widths
// in runes, as fmt counts them.
func appendRow(b []byte, key string, n int64, kB bool) []byte {
	b = append(append(b, key...), ':')
	for w := utf8.RuneCountInString(key) + 1; w < 16; w++ {
		b = append(b, ' ')
	}
	var num [20]byte
	d := strconv.AppendInt(num[:0], n, 10)
	for w := len(d); w < 8; w++ {
		b = append(b, ' ')
	}
	b = append(b, d...)
	if kB {
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
	// Sized for the kernel's ~55 lines, read line by line: the growth of
	// the map and of a strings.Split of the file were most of its cost.
	lines := make([]meminfoLine, 0, 64)
	hostKB := make(map[string]int64, 64)
	for rest := host; rest != ""; {
		var l string
		l, rest, _ = strings.Cut(rest, "\n")
		key, val, ok := strings.Cut(l, ":")
		if !ok || key == "" || strings.ContainsAny(key, " \t") {
			continue
		}
		num, unit, ok := firstFields(val)
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(num, 10, 64)
		if err != nil || n < 0 {
			continue
		}
		if _, dup := hostKB[key]; dup {
			continue
		}
		hostKB[key] = n
		lines = append(lines, meminfoLine{key: key, rest: val, kb: n, hasKB: unit == "kB"})
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

// firstFields is strings.Fields(s)'s first field and, when it has exactly
// two, its second ("" otherwise); ok: it has one at least. An ASCII line,
// the kernel's, is split in place, with Fields' ASCII spaces; any other,
// by Fields itself.
func firstFields(s string) (first, second string, ok bool) {
	var f [3]string
	n := 0
	for i := 0; i < len(s) && n < len(f); {
		if s[i] >= utf8.RuneSelf {
			return fieldsOf(strings.Fields(s))
		}
		if asciiSpace(s[i]) {
			i++
			continue
		}
		j := i
		for j < len(s) && !asciiSpace(s[j]) {
			if s[j] >= utf8.RuneSelf {
				return fieldsOf(strings.Fields(s))
			}
			j++
		}
		f[n], n, i = s[i:j], n+1, j
	}
	if n < len(f) {
		// Scanned to its end: f[:n] are all of its fields.
		return fieldsOf(f[:n])
	}
	// Three fields, all ASCII up to the third's end: Fields' first three
	// too (what follows can only split into more), so more than two.
	return f[0], "", true
}

// fieldsOf is firstFields of a line's fields f.
func fieldsOf(f []string) (first, second string, ok bool) {
	switch len(f) {
	case 0:
		return "", "", false
	case 2:
		return f[0], f[1], true
	}
	return f[0], "", true
}

// asciiSpace is strings.Fields' space among ASCII bytes.
func asciiSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// atMost is n, or the host's figure when it has one that is smaller; never
// below 0.
func atMost(n, host int64) int64 {
	if host >= 0 && host < n {
		return host
	}
	return max(n, 0)
}
