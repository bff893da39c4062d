package view

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// meminfoViewFmt is MeminfoView as it was written with fmt and
// strings.Split (before issue 36's served runs made it on every run's
// path): the reference its appended bytes are held to.
func meminfoViewFmt(host string, limit, swap, used int64) string {
	lines, hostKB := parseMeminfoSplit(host)
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
			fmt.Fprintf(&b, "%-16s%8d\n", l.key+":", 0)
		default:
			fmt.Fprintf(&b, "%-16s%8d kB\n", l.key+":", 0)
		}
	}
	return b.String()
}

func parseMeminfoSplit(host string) ([]meminfoLine, map[string]int64) {
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

// TestMeminfoViewBytes: MeminfoView writes every byte fmt's version
// wrote, for this host's file and odd ones.
func TestMeminfoViewBytes(t *testing.T) {
	this, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatalf("read /proc/meminfo: %v", err)
	}
	cases := []struct {
		name string
		host string
	}{
		{"this host", string(this)},
		{"the test's host", hostMeminfo},
		{"empty", ""},
		{"readers' lines missing", "Cached: 5 kB\nHugePages_Total:       0\n"},
		{"long key, no kB, extra fields", "AVeryLongMeminfoKeyName: 12 kB\nCount: 7\nOdd: 3 kB more\n"},
		{"non-ASCII key and blanks", "Mém: 12 kB\nX:\u00a01\u00a0kB\nMemTotal:\t100 kB\r\n"},
		{"no final newline, duplicate", "MemTotal: 100 kB\nMemTotal: 200 kB\nMemFree: 50 kB"},
		{"kept geometry line as it is", "Hugepagesize:    2048 kB  \nDirectMap2M: 10 kB\n"},
	}
	for _, c := range cases {
		for _, a := range [][3]int64{{2 << 30, 0, 8 << 20}, {16 << 20, 4 << 30, 32 << 20}, {1 << 10, 0, 0}} {
			got, want := MeminfoView(c.host, a[0], a[1], a[2]), meminfoViewFmt(c.host, a[0], a[1], a[2])
			if got != want {
				t.Errorf("%s: MeminfoView(%d, %d, %d) =\n%q\nwant fmt's\n%q", c.name, a[0], a[1], a[2], got, want)
			}
		}
	}
}
