package view

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
)

// hostMeminfo is the head and tail of a real /proc/meminfo (6.18, 23 GiB).
const hostMeminfo = `MemTotal:       24573984 kB
MemFree:        10123456 kB
MemAvailable:   20123456 kB
Buffers:          523412 kB
Cached:          9123456 kB
SwapTotal:       1048572 kB
SwapFree:        1048572 kB
Shmem:             12345 kB
HugePages_Total:       0
HugePages_Free:        0
Hugepagesize:       2048 kB
DirectMap4k:      301952 kB
DirectMap2M:    10123264 kB
`

// meminfoKB reads key's number from a meminfo text; -1 if absent.
func meminfoKB(text, key string) int64 {
	for _, l := range strings.Split(text, "\n") {
		if k, rest, ok := strings.Cut(l, ":"); ok && k == key {
			f := strings.Fields(rest)
			n, _ := strconv.ParseInt(f[0], 10, 64)
			return n
		}
	}
	return -1
}

func TestMeminfoView(t *testing.T) {
	cases := []struct {
		name              string
		host              string
		limit, swap, used int64
		want              map[string]int64
		firstKey          string
	}{
		{"2 GiB limit, 8 MiB used", hostMeminfo, 2 << 30, 0, 8 << 20, map[string]int64{
			"MemTotal": 2 << 20, "MemFree": 2<<20 - 8<<10, "MemAvailable": 2<<20 - 8<<10,
			"SwapTotal": 0, "SwapFree": 0, "Buffers": 0, "Cached": 0, "Shmem": 0,
			"HugePages_Total": 0, "Hugepagesize": 2048, "DirectMap2M": 10123264,
		}, "MemTotal"},
		{"limit above the host's memory", hostMeminfo, 64 << 30, 0, 0, map[string]int64{
			"MemTotal": 24573984, "MemFree": 10123456, "MemAvailable": 20123456,
		}, "MemTotal"},
		{"swap, as far as the host has it", hostMeminfo, 1 << 30, 4 << 30, 0, map[string]int64{
			"SwapTotal": 1048572, "SwapFree": 1048572,
		}, "MemTotal"},
		{"used over the limit", hostMeminfo, 16 << 20, 0, 32 << 20, map[string]int64{
			"MemTotal": 16 << 10, "MemFree": 0, "MemAvailable": 0,
		}, "MemTotal"},
		{"no host file", "", 1 << 30, 0, 1 << 20, map[string]int64{
			"MemTotal": 1 << 20, "MemFree": 1<<20 - 1<<10, "MemAvailable": 1<<20 - 1<<10, "SwapTotal": 0, "SwapFree": 0,
		}, "MemTotal"},
		{"garbage lines dropped", "junk\nMemTotal 5 kB\nCached:  x kB\nMemTotal:  100 kB\n", 1 << 30, 0, 0, map[string]int64{
			"MemTotal": 100, "Cached": -1,
		}, "MemFree"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := MeminfoView(c.host, c.limit, c.swap, c.used)
			for k, v := range c.want {
				if n := meminfoKB(got, k); n != v {
					t.Errorf("meminfoView: %s = %d, want %d\n%s", k, n, v, got)
				}
			}
			if k, _, _ := strings.Cut(got, ":"); k != c.firstKey {
				t.Errorf("meminfoView: first line %q, want %s first\n%s", k, c.firstKey, got)
			}
		})
	}
}

// FuzzMeminfoView: whatever the host's file holds, the view has every
// line readers need, once, with MemAvailable never above MemTotal.
func FuzzMeminfoView(f *testing.F) {
	f.Add(hostMeminfo, int64(2<<30), int64(0), int64(8<<20))
	f.Add("MemTotal: 1 kB\nMemTotal: 2 kB\n", int64(1<<20), int64(1), int64(0))
	f.Add("MemTotal:\u00a05 kB\nCached: 5\u0085kB\nBuffers: 1 kB \u00a0x\nÄ: 3\vkB\n", int64(1<<20), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, host string, limit, swap, used int64) {
		if limit <= 0 || swap < 0 || used < 0 || limit > 1<<50 || swap > 1<<50 || used > 1<<50 {
			t.Skip("the supervisor passes a positive limit and non-negative amounts")
		}
		got := MeminfoView(host, limit, swap, used)
		if want := fmtMeminfoView(host, limit, swap, used); got != want {
			t.Fatalf("MeminfoView(%q) = %q, want fmt's %q", host, got, want)
		}
		for _, k := range meminfoNeed {
			if n := strings.Count("\n"+got, "\n"+k+":"); n != 1 {
				t.Fatalf("MeminfoView(%q): %s appears %d times, want once\n%s", host, k, n, got)
			}
		}
		if tot, av := meminfoKB(got, "MemTotal"), meminfoKB(got, "MemAvailable"); av < 0 || av > tot || tot > limit/1024 {
			t.Fatalf("MeminfoView(%q): MemTotal %d, MemAvailable %d, want 0 <= available <= total <= limit %d kB", host, tot, av, limit/1024)
		}
	})
}

// fmtMeminfoView is MeminfoView as it was written with fmt: the
// reference its appends must equal byte for byte.
func fmtMeminfoView(host string, limit, swap, used int64) string {
	lines, hostKB := splitParseMeminfo(host)
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

func TestMeminfoViewAsFmt(t *testing.T) {
	host, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name              string
		host              string
		limit, swap, used int64
	}{
		{"this host", string(host), 256 << 20, 0, 3 << 20},
		{"a test host, swap", hostMeminfo, 1 << 30, 4 << 30, 0},
		{"lines missing", "Cached:  5 kB\n", 1 << 30, 0, 0},
		{"wide keys and numbers", "AVeryLongKeyOfMeminfo: 123456789012 kB\nÄöü: 7\nMemTotal: 99999999999 kB\n", 1 << 50, 1 << 49, 1 << 40},
		{"used over the limit", hostMeminfo, 16 << 20, 0, 32 << 20},
		{"unicode spaces", "MemTotal:\u00a05 kB\nCached: 5\u0085kB\nBuffers: 1 kB \u00a0x\nShmem: 1\vkB\r\n", 1 << 30, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, want := MeminfoView(c.host, c.limit, c.swap, c.used), fmtMeminfoView(c.host, c.limit, c.swap, c.used)
			if got != want {
				t.Errorf("MeminfoView(%q, %d, %d, %d) = %q, want %q", c.host, c.limit, c.swap, c.used, got, want)
			}
		})
	}
}

func BenchmarkMeminfoView(b *testing.B) {
	host, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		MeminfoView(string(host), 256<<20, 0, 3<<20)
	}
}

// splitParseMeminfo is parseMeminfo as it was written, by strings.Split
// and strings.Fields: fmtMeminfoView's.
func splitParseMeminfo(host string) ([]meminfoLine, map[string]int64) {
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

func BenchmarkFmtMeminfoView(b *testing.B) {
	host, _ := os.ReadFile("/proc/meminfo")
	for b.Loop() {
		fmtMeminfoView(string(host), 256<<20, 0, 3<<20)
	}
}
