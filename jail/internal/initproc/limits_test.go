package initproc

import (
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

func cpuSet(cpus ...int) unix.CPUSet {
	var s unix.CPUSet
	for _, c := range cpus {
		s.Set(c)
	}
	return s
}

func TestCPUList(t *testing.T) {
	cases := []struct {
		name string
		set  unix.CPUSet
		want string
	}{
		{"none", cpuSet(), ""},
		{"one", cpuSet(0), "0"},
		{"range", cpuSet(0, 1, 2, 3), "0-3"},
		{"mixed", cpuSet(0, 1, 2, 3, 5, 7, 8), "0-3,5,7-8"},
		{"high", cpuSet(1023), "1023"},
	}
	for _, c := range cases {
		if got := cpuList(c.set); got != c.want {
			t.Errorf("%s: cpuList = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestPickCPUs(t *testing.T) {
	cases := []struct {
		name    string
		set     unix.CPUSet
		n, from int
		want    string
	}{
		{"one from the current", cpuSet(0, 1), 1, 1, "1"},
		{"one from 0", cpuSet(0, 1), 1, 0, "0"},
		{"wraps around", cpuSet(0, 1, 2, 3), 2, 3, "0,3"},
		{"skips CPUs not allowed", cpuSet(2, 5, 9), 2, 3, "5,9"},
		{"current not allowed", cpuSet(4, 6), 1, 5, "6"},
		{"all", cpuSet(0, 1), 2, 1, "0-1"},
	}
	for _, c := range cases {
		if got := cpuList(pickCPUs(c.set, c.n, c.from)); got != c.want {
			t.Errorf("%s: pickCPUs(%s, %d, %d) = %q, want %q", c.name, cpuList(c.set), c.n, c.from, got, c.want)
		}
	}
}

func TestV1Hierarchies(t *testing.T) {
	const split = "9:name=systemd:/\n8:pids:/\n7:blkio:/\n4:memory:/\n2:cpuacct:/\n1:cpu:/\n0::/\n"
	const comounted = "12:cpu,cpuacct:/\n11:memory:/\n3:pids:/\n1:name=systemd:/\n0::/\n"
	cases := []struct {
		name, data string
		want       []string
		got        []string
	}{
		{"separate hierarchies", split, []string{"memory", "cpu", "cpuacct", "pids"}, []string{"pids", "memory", "cpuacct", "cpu"}},
		{"co-mounted cpu,cpuacct", comounted, []string{"cpu", "cpuacct", "memory", "pids"}, []string{"cpu,cpuacct", "memory", "pids"}},
		{"memory only", comounted, []string{"memory"}, []string{"memory"}},
		{"v2 only", "0::/\n", []string{"memory"}, nil},
	}
	for _, c := range cases {
		if got := v1Hierarchies(c.data, c.want); !slices.Equal(got, c.got) {
			t.Errorf("%s: v1Hierarchies(%q, %q) = %q, want %q", c.name, c.data, c.want, got, c.got)
		}
	}
}
