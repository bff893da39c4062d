package main

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/scidex/scidex-jail/jail/hostcheck"
	"github.com/scidex/scidex-jail/jail/limits"
	"github.com/scidex/scidex-jail/jail/profile"
)

// profileSnippet is a profile written out in an advice: a JSON object.
var profileSnippet = regexp.MustCompile(`\{[^{}]*\}`)

// TestCheckControllersAdvice: for a parent that lacks controllers, on
// either version, the controllers line's fix is valid as written: the
// kernel's words from cgroupfs, and, for a controller only a limit needs,
// a profile that the real profiles parser reads and that switches that
// limit off; never a 0 the parser refuses.
func TestCheckControllersAdvice(t *testing.T) {
	nolimits, err := profile.ParseProfiles([]byte(`{"profiles": {"nolimits": {"cpus": "none", "pids": "none"}}}`), profile.Builtins())
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name    string
		profile profile.Profile
		info    hostcheck.CgroupInfo
		missing string
		fix     string          // in the fix
		off     []*limits.Limit // switched off by the fix's profile; nil: the fix has none
	}{
		{"v2 no cpu", profile.Builtins()["tool"], hostcheck.CgroupInfo{Version: 2, Parents: []string{"/nonexistent/p"}, Controllers: []string{"memory", "pids"}},
			"cpu", "cgroup_no_v1=all (the kernel needs CONFIG_CFS_BANDWIDTH)", []*limits.Limit{limits.CPUQuota}},
		{"v2 no cpu nor pids", profile.Builtins()["default"], hostcheck.CgroupInfo{Version: 2, Parents: []string{"/nonexistent/p"}, Controllers: []string{"memory"}},
			"cpu, pids", "systemd.unified_cgroup_hierarchy=1 or cgroup_no_v1=all (the kernel needs CONFIG_CFS_BANDWIDTH, CONFIG_CGROUP_PIDS)", []*limits.Limit{limits.CPUQuota, limits.PIDs}},
		{"v1 no pids", profile.Builtins()["default"], hostcheck.CgroupInfo{Version: 1, Parents: []string{"/sys/fs/cgroup/memory"}, Controllers: []string{"cpu", "cpuacct", "memory"}},
			"pids", "mkdir /sys/fs/cgroup/pids && mount -t cgroup -o pids cgroup /sys/fs/cgroup/pids; the kernel needs CONFIG_CGROUP_PIDS", []*limits.Limit{limits.PIDs}},
		{"v2 no memory: no profile helps", nolimits["nolimits"], hostcheck.CgroupInfo{Version: 2, Parents: []string{"/nonexistent/p"}, Controllers: []string{"cpu", "pids"}},
			"memory", "(the kernel needs CONFIG_MEMCG)", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pl, done, _ := (&checkCmd{jailFlags: jailFlags{TmpRoot: t.TempDir()}, uid: 65534, gid: 65534}).probePlan(c.profile)
			t.Cleanup(done)
			if pl == nil || pl.Cgroup == nil {
				t.Fatalf("probePlan(%s) = %+v, want a plan with a cgroup leaf", c.profile.Name, pl)
			}
			l := checkControllers(c.profile, pl.Cgroup, c.info, true)
			t.Logf("%s: %s\nfix: %s", l.Name, l.Text, l.Fix)
			if l.State != stateMissing || !strings.Contains(l.Text, "missing "+c.missing+" (") || !strings.Contains(l.Fix, c.fix) {
				t.Fatalf("checkControllers(%s, %+v) = %s %q, fix %q, want missing %s, fix holding %q", c.profile.Name, c.info, l.State, l.Text, l.Fix, c.missing, c.fix)
			}
			if strings.Contains(l.Fix, " 0 ") || strings.Contains(l.Fix, "to 0") {
				t.Errorf("fix %q advises a 0, which the profiles parser refuses for cpus and pids", l.Fix)
			}
			snippets := profileSnippet.FindAllString(l.Fix, -1)
			if c.off == nil {
				if len(snippets) != 0 {
					t.Errorf("fix %q offers a profile %q, want none: no limit's switch drops the need for %s", l.Fix, snippets, c.missing)
				}
				return
			}
			if len(snippets) != 1 {
				t.Fatalf("fix %q holds profiles %q, want one", l.Fix, snippets)
			}
			file := fmt.Sprintf(`{"profiles": {"advised": %s}}`, snippets[0])
			ps, err := profile.ParseProfiles([]byte(file), profile.Builtins())
			if err != nil {
				t.Fatalf("ParseProfiles(%s) = %v, want the advice valid as written", file, err)
			}
			for _, r := range c.off {
				if got := ps["advised"].Limits.Get(r); !got.IsZero() || c.profile.Limits.Get(r).IsZero() {
					t.Errorf("advised profile %s: %s = %s (was %s), want it switched off", snippets[0], r.Field, r.Format(got), r.Format(c.profile.Limits.Get(r)))
				}
			}
		})
	}
}
