package testutil

import (
	"os"
	"reflect"
	"slices"
	"testing"
)

// hybridMountinfo is this project's development hosts: v1 controllers plus
// a cgroup2 mount holding nothing.
const hybridMountinfo = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,relatime - cgroup cgroup rw,cpu,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime shared:9 - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`

func mustMounts(t *testing.T, mountinfo string) []Mount {
	t.Helper()
	ms, err := ParseMountinfo(mountinfo)
	if err != nil {
		t.Fatalf("ParseMountinfo(%q) = %v, want nil", mountinfo, err)
	}
	return ms
}

// allDirs is every directory of cgs, once, in order: what the benchmarks'
// leak walk visits.
func allDirs(cgs []Cgroup) []string {
	var out []string
	for _, c := range cgs {
		for _, d := range c.Dirs {
			if !slices.Contains(out, d) {
				out = append(out, d)
			}
		}
	}
	return out
}

// TestPlaceCgroupsDirs: the directories a process's cgroups show up at
// (formerly bench's TestCgroupDirs).
func TestPlaceCgroupsDirs(t *testing.T) {
	tests := []struct {
		name       string
		mountinfo  string
		procCgroup string
		want       []string
	}{
		{"hybrid", hybridMountinfo,
			"9:name=systemd:/\n4:memory:/process_api/65f2\n1:cpu,cpuacct:/\n0::/\n",
			[]string{"/sys/fs/cgroup/systemd", "/sys/fs/cgroup/memory/process_api/65f2", "/sys/fs/cgroup/cpu,cpuacct", "/sys/fs/cgroup/unified"}},
		{"v2 only", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw,nsdelegate\n",
			"0::/system.slice/runner.service\n",
			[]string{"/sys/fs/cgroup/system.slice/runner.service"}},
		{"container: mount root below ours", "30 23 0:26 /kubepods/pod1 /sys/fs/cgroup ro - cgroup2 cgroup2 rw\n",
			"0::/kubepods/pod1/c1\n",
			[]string{"/sys/fs/cgroup/c1"}},
		{"our cgroup outside the mounted root", "30 23 0:26 /a /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"0::/b\n", nil},
		{"controller not mounted", hybridMountinfo, "8:pids:/\n", nil},
		{"sibling with a common prefix is outside", "30 23 0:26 /a /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"0::/ab\n", nil},
		{"outside the cgroup namespace", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n",
			"0::/../x\n", nil},
		{"mount point with a space", `30 23 0:26 / /mnt/cg\040two rw - cgroup2 cgroup2 rw` + "\n",
			"0::/s\n", []string{"/mnt/cg two/s"}},
		{"bind-mounted twice", "30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n31 23 0:26 /s /mnt/s rw - cgroup2 cgroup2 rw\n",
			"0::/s/t\n", []string{"/sys/fs/cgroup/s/t", "/mnt/s/t"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cgs, err := PlaceCgroups(tt.procCgroup, mustMounts(t, tt.mountinfo))
			if got := allDirs(cgs); err != nil || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("PlaceCgroups(%q) dirs = %q, %v, want %q, nil", tt.procCgroup, got, err, tt.want)
			}
		})
	}
}

func TestPlaceCgroups(t *testing.T) {
	got, err := PlaceCgroups("9:name=systemd:/\n4:memory:/m\n1:cpu,cpuacct:/\n0::/\n", mustMounts(t, hybridMountinfo))
	want := []Cgroup{
		{Version: 1, Controllers: []string{"name=systemd"}, Path: "/", Dirs: []string{"/sys/fs/cgroup/systemd"}},
		{Version: 1, Controllers: []string{"memory"}, Path: "/m", Dirs: []string{"/sys/fs/cgroup/memory/m"}},
		{Version: 1, Controllers: []string{"cpu", "cpuacct"}, Path: "/", Dirs: []string{"/sys/fs/cgroup/cpu,cpuacct"}},
		{Version: 2, Path: "/", Dirs: []string{"/sys/fs/cgroup/unified"}},
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("PlaceCgroups(hybrid) = %+v, %v, want %+v, nil", got, err, want)
	}
	named := []bool{true, false, false, false}
	for i, c := range got {
		if c.Named() != named[i] {
			t.Errorf("%+v.Named() = %v, want %v", c, c.Named(), named[i])
		}
	}
}

func TestPlaceCgroupsErrors(t *testing.T) {
	for _, in := range []string{"garbage", "0::", "4:memory"} {
		if got, err := PlaceCgroups(in, nil); err == nil {
			t.Errorf("PlaceCgroups(%q) = %+v, nil, want an error", in, got)
		}
	}
}

func TestCgroup2Mount(t *testing.T) {
	tests := []struct{ name, mountinfo, want string }{
		{"hybrid", hybridMountinfo, "/sys/fs/cgroup/unified"},
		{"only a subtree", "30 23 0:26 /a /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", ""},
		{"none", "31 23 0:28 / /sys/fs/cgroup rw - tmpfs tmpfs rw\n", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Cgroup2Mount(mustMounts(t, tt.mountinfo)); got != tt.want {
				t.Errorf("Cgroup2Mount(%q) = %q, want %q", tt.mountinfo, got, tt.want)
			}
		})
	}
}

// TestOwnCgroups: every cgroup of this process on a controller hierarchy
// is found at a directory that exists.
func TestOwnCgroups(t *testing.T) {
	cgs, err := OwnCgroups()
	if err != nil || len(cgs) == 0 {
		t.Fatalf("OwnCgroups() = %+v, %v, want at least one cgroup", cgs, err)
	}
	for _, c := range cgs {
		for _, d := range c.Dirs {
			if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
				t.Errorf("OwnCgroups() %+v: directory %s: %v, want it to exist", c, d, err)
			}
		}
	}
}

// FuzzPlaceCgroups: the kernel's cgroup and mount lines must not make the
// oracle panic.
func FuzzPlaceCgroups(f *testing.F) {
	f.Add(hybridMountinfo, "4:memory:/a\n0::/\n")
	f.Add("1 2 3 4 5 - cgroup", "::")
	f.Fuzz(func(t *testing.T, mountinfo, procCgroup string) {
		ms, _ := ParseMountinfo(mountinfo)
		PlaceCgroups(procCgroup, ms)
	})
}
