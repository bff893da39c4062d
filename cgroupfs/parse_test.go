package cgroupfs

import (
	"maps"
	"slices"
	"strings"
	"testing"
)

// Fixtures: /proc/self/cgroup and the cgroup lines of /proc/self/mountinfo
// on the kinds of host we meet.
const (
	// The development machines: hybrid, cpu and cpuacct mounted apart.
	hybridCgroup = `9:name=systemd:/
8:pids:/
6:freezer:/
4:memory:/process_api/5e44
2:cpuacct:/
1:cpu:/
0::/
`
	hybridMounts = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
37 31 0:34 / /sys/fs/cgroup/freezer rw,relatime - cgroup cgroup rw,freezer
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`
	// systemd hybrid with cpu,cpuacct co-mounted (Ubuntu 20.04 style).
	comountCgroup = "5:cpu,cpuacct:/user.slice\n3:memory:/user.slice/user-1000.slice\n2:pids:/user.slice\n0::/user.slice\n"
	comountMounts = `30 25 0:26 / /sys/fs/cgroup/unified rw,nosuid shared:10 - cgroup2 cgroup2 rw,nsdelegate
33 25 0:29 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid shared:15 - cgroup cgroup rw,cpu,cpuacct
34 25 0:30 / /sys/fs/cgroup/memory rw,nosuid shared:16 - cgroup cgroup rw,memory
35 25 0:31 / /sys/fs/cgroup/pids rw,nosuid shared:17 - cgroup cgroup rw,pids
`
	// Pure cgroup v2 under systemd.
	unifiedCgroup = "0::/system.slice/scidex.service\n"
	unifiedMounts = "35 24 0:30 / /sys/fs/cgroup rw,nosuid,nodev shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot\n"
	// A container without a cgroup namespace: the mount shows its own subtree.
	containerCgroup = "0::/docker/abc\n"
	containerMounts = "700 690 0:30 /docker/abc /sys/fs/cgroup ro,nosuid - cgroup2 cgroup ro\n"
	// A mount point with a space, escaped by the kernel.
	escapedCgroup = "0::/a\n"
	escapedMounts = `50 24 0:30 / /mnt/my\040cg rw - cgroup2 cgroup2 rw` + "\n"
)

func TestParseHost(t *testing.T) {
	tests := []struct {
		name          string
		self, mounts  string
		wantV2Own     string            // own cgroup2 directory, "" if unreachable
		wantV1Own     map[string]string // controller -> own directory
		wantV2Missing bool
	}{
		{"hybrid", hybridCgroup, hybridMounts, "/sys/fs/cgroup/unified", map[string]string{
			"memory": "/sys/fs/cgroup/memory/process_api/5e44", "cpu": "/sys/fs/cgroup/cpu",
			"cpuacct": "/sys/fs/cgroup/cpuacct", "pids": "/sys/fs/cgroup/pids", "freezer": "/sys/fs/cgroup/freezer",
		}, false},
		{"comounted", comountCgroup, comountMounts, "/sys/fs/cgroup/unified/user.slice", map[string]string{
			"memory": "/sys/fs/cgroup/memory/user.slice/user-1000.slice", "cpu": "/sys/fs/cgroup/cpu,cpuacct/user.slice",
			"cpuacct": "/sys/fs/cgroup/cpu,cpuacct/user.slice", "pids": "/sys/fs/cgroup/pids/user.slice",
		}, false},
		{"unified", unifiedCgroup, unifiedMounts, "/sys/fs/cgroup/system.slice/scidex.service", map[string]string{}, false},
		{"container", containerCgroup, containerMounts, "/sys/fs/cgroup", map[string]string{}, false},
		{"escaped", escapedCgroup, escapedMounts, "/mnt/my cg/a", map[string]string{}, false},
		{"outside namespace", "0::/../x\n", unifiedMounts, "", map[string]string{}, false},
		{"no cgroup2", "4:memory:/x\n", "35 31 0:32 / /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory\n", "",
			map[string]string{"memory": "/sys/fs/cgroup/memory/x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, err := parseHost(tt.self, tt.mounts)
			if err != nil {
				t.Fatalf("parseHost() = %v, want nil", err)
			}
			if (h.v2 == nil) != tt.wantV2Missing {
				t.Fatalf("parseHost().v2 = %+v, want missing=%v", h.v2, tt.wantV2Missing)
			}
			if h.v2 != nil {
				if got, err := h.v2.ownDir(); got != tt.wantV2Own || (err != nil) != (tt.wantV2Own == "") {
					t.Errorf("v2.ownDir() = %q, %v, want %q (an error if empty)", got, err, tt.wantV2Own)
				}
			}
			got := map[string]string{}
			for c, hier := range h.v1 {
				if d, err := hier.ownDir(); err == nil {
					got[c] = d
				} else {
					t.Errorf("v1[%s].ownDir() = %v", c, err)
				}
			}
			if !maps.Equal(got, tt.wantV1Own) {
				t.Errorf("v1 own dirs = %v, want %v", got, tt.wantV1Own)
			}
		})
	}
}

func TestParentDir(t *testing.T) {
	h := &hierarchy{mount: "/sys/fs/cgroup", root: "/", own: "/system.slice/scidex.service"}
	tests := []struct {
		name, parent, want string
		wantErr            bool
	}{
		{"own cgroup", "", "/sys/fs/cgroup/system.slice/scidex.service", false},
		{"absolute directory", "/sys/fs/cgroup/jobs", "/sys/fs/cgroup/jobs", false},
		{"mount itself", "/sys/fs/cgroup", "/sys/fs/cgroup", false},
		{"cgroup path", "/jobs/a", "/sys/fs/cgroup/jobs/a", false},
		{"relative cgroup path", "jobs", "/sys/fs/cgroup/jobs", false},
		{"prefix lookalike", "/sys/fs/cgroupx", "/sys/fs/cgroup/sys/fs/cgroupx", false},
		{"dotdot", "/sys/fs/cgroup/../../etc", "", true},
		{"dotdot relative", "../x", "", true},
	}
	moved := &hierarchy{mount: "/sys/fs/cgroup", root: "/", own: "/system.slice/scidex.service/" + supervisorLeaf}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := h.parentDir(tt.parent)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Errorf("parentDir(%q) = %q, %v, want %q, error %v", tt.parent, got, err, tt.want, tt.wantErr)
			}
		})
	}
	// A process that moved itself into its supervisor leaf (v2) makes its
	// next leaves where it made the first, beside that leaf.
	if got, err := moved.parentDir(""); got != "/sys/fs/cgroup/system.slice/scidex.service" || err != nil {
		t.Errorf("parentDir(\"\") from %s = %q, %v, want /sys/fs/cgroup/system.slice/scidex.service", moved.own, got, err)
	}
}

func TestParseKeyed(t *testing.T) {
	tests := []struct {
		name, data string
		want       map[string]int64
		wantErr    bool
	}{
		{"memory.events", "low 0\nhigh 0\nmax 12\noom 1\noom_kill 1\noom_group_kill 0\n",
			map[string]int64{"low": 0, "high": 0, "max": 12, "oom": 1, "oom_kill": 1, "oom_group_kill": 0}, false},
		{"v1 oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n",
			map[string]int64{"oom_kill_disable": 0, "under_oom": 0, "oom_kill": 3}, false},
		{"pids.events", "max 7\n", map[string]int64{"max": 7}, false},
		{"empty", "", map[string]int64{}, false},
		{"no value", "max\n", nil, true},
		{"max as value", "pids max\n", nil, true},
		{"three fields", "a 1 2\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKeyed(tt.name, tt.data)
			if (err != nil) != tt.wantErr || (!tt.wantErr && !maps.Equal(got, tt.want)) {
				t.Errorf("parseKeyed(%q) = %v, %v, want %v, error %v", tt.data, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseProcCgroup(t *testing.T) {
	tests := []struct {
		name, data string
		want       []procCgroup
		wantErr    bool
	}{
		{"v2", "0::/a/b\n", []procCgroup{{ID: 0, Path: "/a/b"}}, false},
		{"v1 comounted", "5:cpu,cpuacct:/x\n", []procCgroup{{ID: 5, Controllers: []string{"cpu", "cpuacct"}, Path: "/x"}}, false},
		{"colon in path", "0::/a:b\n", []procCgroup{{ID: 0, Path: "/a:b"}}, false},
		{"named", "1:name=systemd:/\n", []procCgroup{{ID: 1, Controllers: []string{"name=systemd"}, Path: "/"}}, false},
		{"two fields", "0:/a\n", nil, true},
		{"bad id", "x::/a\n", nil, true},
		{"relative path", "0::a\n", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseProcCgroup(tt.data)
			eq := slices.EqualFunc(got, tt.want, func(a, b procCgroup) bool {
				return a.ID == b.ID && a.Path == b.Path && slices.Equal(a.Controllers, b.Controllers)
			})
			if (err != nil) != tt.wantErr || !eq {
				t.Errorf("parseProcCgroup(%q) = %+v, %v, want %+v, error %v", tt.data, got, err, tt.want, tt.wantErr)
			}
		})
	}
}

func TestParseMountinfoErrors(t *testing.T) {
	for _, data := range []string{"1 2 3\n", "36 35 98:0 /a /b rw shared:1 ext4 /dev/x rw\n", "36 35 98:0 /a /b rw - cgroup2\n"} {
		if got, err := parseMountinfo(data); err == nil {
			t.Errorf("parseMountinfo(%q) = %+v, nil, want an error", data, got)
		}
	}
}

// Fuzzing: the parsers must never panic, and what they accept must be
// consistent with the input.

func FuzzParseKeyed(f *testing.F) {
	for _, s := range []string{"max 3\n", "nr_periods 10\nnr_throttled 2\nthrottled_usec 500\n", "a -1\n", "x\n", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		m, err := parseKeyed("fuzz", data)
		if err == nil && len(m) > strings.Count(data, "\n")+1 {
			t.Errorf("parseKeyed(%q) = %d keys, want at most one a line", data, len(m))
		}
	})
}

func FuzzParseProcCgroup(f *testing.F) {
	for _, s := range []string{hybridCgroup, comountCgroup, unifiedCgroup, "0::/a:b\n", "x\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		lines, err := parseProcCgroup(data)
		if err != nil {
			return
		}
		for _, l := range lines {
			if !strings.HasPrefix(l.Path, "/") || l.ID < 0 {
				t.Errorf("parseProcCgroup(%q) gave %+v, want absolute path, id >= 0", data, l)
			}
		}
	})
}

func FuzzParseHost(f *testing.F) {
	f.Add(hybridCgroup, hybridMounts)
	f.Add(comountCgroup, comountMounts)
	f.Add(unifiedCgroup, unifiedMounts)
	f.Add(containerCgroup, containerMounts)
	f.Add(escapedCgroup, escapedMounts)
	f.Add("0::/../../x\n", unifiedMounts)
	f.Fuzz(func(t *testing.T, self, mounts string) {
		h, err := parseHost(self, mounts)
		if err != nil {
			return
		}
		// A leaf's parent must never resolve outside the mount.
		for _, hier := range append(slices.Collect(maps.Values(h.v1)), h.v2) {
			if hier == nil {
				continue
			}
			d, err := hier.ownDir()
			if err == nil && d != hier.mount && !strings.HasPrefix(d, strings.TrimSuffix(hier.mount, "/")+"/") {
				t.Errorf("ownDir() = %q, outside mount %q", d, hier.mount)
			}
		}
	})
}

func FuzzParsePIDs(f *testing.F) {
	for _, s := range []string{"1\n22\n", "", "0\n", "-3\n", "12a\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		pids, err := parsePIDs("fuzz", data)
		for _, p := range pids {
			if err == nil && p <= 0 {
				t.Errorf("parsePIDs(%q) = %v, want positive pids", data, pids)
			}
		}
	})
}
