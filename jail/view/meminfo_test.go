package view

import (
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

// FuzzMeminfoView: whatever the host's file holds, the view is fmt's
// version's (meminfo_fmt_test.go) and has every line readers need, once,
// with MemAvailable never above MemTotal.
func FuzzMeminfoView(f *testing.F) {
	f.Add(hostMeminfo, int64(2<<30), int64(0), int64(8<<20))
	f.Add("MemTotal: 1 kB\nMemTotal: 2 kB\n", int64(1<<20), int64(1), int64(0))
	f.Fuzz(func(t *testing.T, host string, limit, swap, used int64) {
		if limit <= 0 || swap < 0 || used < 0 || limit > 1<<50 || swap > 1<<50 || used > 1<<50 {
			t.Skip("the supervisor passes a positive limit and non-negative amounts")
		}
		got := MeminfoView(host, limit, swap, used)
		if want := meminfoViewFmt(host, limit, swap, used); got != want {
			t.Fatalf("MeminfoView(%q) =\n%q\nwant fmt's\n%q", host, got, want)
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
