package hostcheck

import (
	"strings"
	"testing"
)

func TestCheckHostSetup(t *testing.T) {
	debian := map[string]string{SysctlMaxUserNS: "96365", SysctlUnprivUserNS: "1"}
	ubuntu := map[string]string{SysctlMaxUserNS: "63000", SysctlAppArmorRestrict: "1"}
	delegated := CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup/scidex-jail.slice/runner.service/jails"}
	type want struct {
		ok         bool
		found, fix string // substrings; fix "" means no fix
	}
	for _, tc := range []struct {
		name  string
		h     HostSetup
		check string
		want  want
	}{
		{"userns allowed, root", HostSetup{EUID: 0, Sysctls: debian}, "userns sysctls",
			want{ok: true, found: "user.max_user_namespaces = 96365, kernel.unprivileged_userns_clone = 1: user namespaces allowed (running as root)"}},
		{"userns allowed, user", HostSetup{EUID: 1000, Sysctls: debian}, "userns sysctls",
			want{ok: true, found: "for uid 1000"}},
		{"no userns in the kernel", HostSetup{EUID: 1000, Sysctls: map[string]string{}}, "userns sysctls",
			want{found: "user.max_user_namespaces is absent", fix: "CONFIG_USER_NS=y"}},
		{"max_user_namespaces 0", HostSetup{EUID: 0, Sysctls: map[string]string{SysctlMaxUserNS: "0"}}, "userns sysctls",
			want{found: "user.max_user_namespaces = 0: no user namespace", fix: "sysctl -w user.max_user_namespaces=15000"}},
		{"Debian clone sysctl off, user", HostSetup{EUID: 1000, Sysctls: map[string]string{SysctlMaxUserNS: "10", SysctlUnprivUserNS: "0"}}, "userns sysctls",
			want{found: "kernel.unprivileged_userns_clone = 0: only root", fix: "sysctl -w kernel.unprivileged_userns_clone=1"}},
		{"Debian clone sysctl off, root", HostSetup{EUID: 0, Sysctls: map[string]string{SysctlMaxUserNS: "10", SysctlUnprivUserNS: "0"}}, "userns sysctls",
			want{ok: true, found: "running as root"}},

		{"no AppArmor restriction sysctl", HostSetup{EUID: 1000, Sysctls: debian}, "apparmor userns",
			want{ok: true, found: "kernel.apparmor_restrict_unprivileged_userns is absent"}},
		{"restriction off", HostSetup{EUID: 1000, Sysctls: map[string]string{SysctlMaxUserNS: "1", SysctlAppArmorRestrict: "0"}}, "apparmor userns",
			want{ok: true, found: "= 0: AppArmor does not restrict"}},
		{"Ubuntu 24.04, unconfined user", HostSetup{EUID: 1000, Sysctls: ubuntu, AppArmorLabel: "unconfined"}, "apparmor userns",
			want{found: "= 1 and this binary is unconfined", fix: "cp " + ExampleAppArmor + " /etc/apparmor.d/scidex-jail && apparmor_parser -r"}},
		{"Ubuntu 24.04, no label read", HostSetup{EUID: 1000, Sysctls: ubuntu}, "apparmor userns",
			want{found: "unconfined", fix: "kernel.apparmor_restrict_unprivileged_userns=0"}},
		{"Ubuntu 24.04, profile", HostSetup{EUID: 1000, Sysctls: ubuntu, AppArmorLabel: "scidex-jail (unconfined)"}, "apparmor userns",
			want{ok: true, found: `the AppArmor profile "scidex-jail (unconfined)"`}},
		{"Ubuntu 24.04, root", HostSetup{EUID: 0, Sysctls: ubuntu, AppArmorLabel: "unconfined"}, "apparmor userns",
			want{ok: true, found: "running as root"}},

		{"delegated parent", HostSetup{EUID: 1000, Sysctls: debian, Cgroup: delegated}, "cgroup delegation",
			want{ok: true, found: "jails is writable by uid 1000 (--cgroup-parent), inside scidex-jail.slice"}},
		{"own cgroup, alone", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup/a.service", Own: true}}, "cgroup delegation",
			want{ok: true, found: "holds no other process"}},
		{"root cgroup with processes", HostSetup{EUID: 0, Cgroup: CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup", Own: true, Root: true, OtherPIDs: []int{1, 2}}}, "cgroup delegation",
			want{ok: true, found: "writable by root (the root of the hierarchy)"}},
		{"not delegated", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup/user.slice", Own: true, NotWritable: []string{".", "cgroup.subtree_control"}}}, "cgroup delegation",
			want{found: "/sys/fs/cgroup/user.slice is not delegated to uid 1000: cannot write the directory itself, cgroup.subtree_control", fix: "Delegate=yes (example: " + ExampleRunnerUnit}},
		{"own cgroup shared with the runner", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup/r.service", Own: true, OtherPIDs: []int{42}}}, "cgroup delegation",
			want{found: "holds other processes [42]", fix: DelegateHelper}},
		{"other processes in an explicit parent are its owner's business", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 2, Dir: "/sys/fs/cgroup/p", OtherPIDs: []int{42}}}, "cgroup delegation",
			want{ok: true, found: "(--cgroup-parent)"}},
		{"v1 as root", HostSetup{EUID: 0, Cgroup: CgroupSetup{Version: 1}}, "cgroup delegation",
			want{ok: true, found: "cgroup v1 (a hybrid host): not delegated, written as root"}},
		{"v1 as a user", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 1}}, "cgroup delegation",
			want{found: "unless root makes it a subtree", fix: "--unsafe-disable cgroup"}},
		{"v1 as a user, the recipe's fix", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 1, V1Fix: "As root: `mkdir`"}}, "cgroup delegation",
			want{found: "unless root makes it a subtree", fix: "As root: `mkdir`"}},
		{"v1 as a user, a subtree made for it", HostSetup{EUID: 1000, Cgroup: CgroupSetup{Version: 1, V1Writable: true}}, "cgroup delegation",
			want{ok: true, found: "writable by uid 1000"}},
		{"no cgroup", HostSetup{EUID: 0}, "cgroup delegation",
			want{found: "no usable cgroup parent", fix: "cgroup line above"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got *SetupCheck
			all := CheckHostSetup(tc.h)
			for i := range all {
				if all[i].Name == tc.check {
					got = &all[i]
				}
			}
			if len(all) != 3 || got == nil {
				t.Fatalf("CheckHostSetup(%+v) = %+v, want 3 checks including %q", tc.h, all, tc.check)
			}
			if got.OK != tc.want.ok || !strings.Contains(got.Found, tc.want.found) {
				t.Errorf("CheckHostSetup(%+v)[%s] = ok %v, found %q; want ok %v, found containing %q", tc.h, tc.check, got.OK, got.Found, tc.want.ok, tc.want.found)
			}
			if (tc.want.fix == "") != (got.Fix == "") || !strings.Contains(got.Fix, tc.want.fix) {
				t.Errorf("CheckHostSetup(%+v)[%s].Fix = %q, want %q", tc.h, tc.check, got.Fix, tc.want.fix)
			}
		})
	}
}
