package bench

import (
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseStatusKB(t *testing.T) {
	tests := []struct {
		name   string
		status string
		want   map[string]int64
	}{
		{"kernel 6.x", "Name:\tscidex-jail\nVmHWM:\t    5120 kB\nVmRSS:\t    4800 kB\nRssAnon:\t    1200 kB\nThreads:\t5\n",
			map[string]int64{"VmHWM": 5120, "VmRSS": 4800, "RssAnon": 1200}},
		{"no kB lines", "Name:\tx\nPid:\t1\n", map[string]int64{}},
		{"garbage", "VmRSS:\tlots kB\n:\n", map[string]int64{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := parseStatusKB(tt.status); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseStatusKB(%q) = %v, want %v", tt.status, got, tt.want)
			}
		})
	}
}

func TestLeaks(t *testing.T) {
	base := hostState{Mounts: []string{"m1"}, Cgroups: []string{"/sys/fs/cgroup/x/scidex-old"}}
	tests := []struct {
		name  string
		after hostState
		want  []string
	}{
		{"clean", base, nil},
		{"everything", hostState{RunDirs: []string{"scidex-analysis-c-1"}, Mounts: []string{"m1", "m2"},
			Cgroups: []string{"/sys/fs/cgroup/x/scidex-old", "/sys/fs/cgroup/x/scidex-c-1"}},
			[]string{"run directory left in the tmp-root: scidex-analysis-c-1", "new mount: m2", "cgroup left: /sys/fs/cgroup/x/scidex-c-1"}},
		{"a mount gone is no leak", hostState{}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := leaks(base, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("leaks(%+v) = %q, want %q", tt.after, got, tt.want)
			}
		})
	}
}

func TestPercentile(t *testing.T) {
	ds := func(ms ...int) []time.Duration {
		var out []time.Duration
		for _, m := range ms {
			out = append(out, time.Duration(m)*time.Millisecond)
		}
		return out
	}
	tests := []struct {
		name string
		in   []time.Duration
		p    int
		want time.Duration
	}{
		{"empty", nil, 50, 0},
		{"one", ds(7), 95, 7 * time.Millisecond},
		{"median of odd, unsorted", ds(5, 1, 3), 50, 3 * time.Millisecond},
		{"p95 of 20", ds(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20), 95, 19 * time.Millisecond},
		{"p100", ds(4, 9, 2), 100, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %d) = %v, want %v", tt.in, tt.p, got, tt.want)
			}
		})
	}
}

func TestMetricUnit(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", "mounts", "mounts-us/op"},
		{"plus", "outputs+cleanup", "outputs+cleanup-us/op"},
		{"space and slash", "a b/c", "a_b_c-us/op"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := metricUnit(tt.in, "us"); got != tt.want {
				t.Errorf("metricUnit(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

// The parsers read what the kernel hands us; they must not panic on any of
// it.
func FuzzParseStatusKB(f *testing.F) {
	f.Add("VmRSS:\t  4800 kB\n")
	f.Fuzz(func(t *testing.T, status string) {
		parseStatusKB(status)
	})
}

func TestVariants(t *testing.T) {
	var got []string
	for _, v := range variants() {
		got = append(got, v.Name+" "+strings.Join(v.Args, " "))
	}
	want := []string{"all ",
		"no-landlock --unsafe-disable landlock", "no-seccomp --unsafe-disable seccomp", "no-cgroup --unsafe-disable cgroup",
		"net-loopback --net loopback", "net-host --net host"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("variants() = %q, want %q", got, want)
	}
}
