package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/jail/hostcheck"
)

// checkHostSetup gathers what hostcheck.CheckHostSetup judges (the user
// namespace sysctls, the AppArmor label, the delegated cgroup) and turns
// its verdicts into check lines.
func checkHostSetup(cgroupParent string, info hostcheck.CgroupInfo) []checkLine {
	h := hostcheck.HostSetup{EUID: os.Geteuid(), Sysctls: map[string]string{}, AppArmorLabel: appArmorLabel()}
	for _, name := range []string{hostcheck.SysctlMaxUserNS, hostcheck.SysctlUnprivUserNS, hostcheck.SysctlAppArmorRestrict} {
		if b, err := os.ReadFile("/proc/sys/" + strings.ReplaceAll(name, ".", "/")); err == nil {
			h.Sysctls[name] = strings.TrimSpace(string(b))
		}
	}
	h.Cgroup = cgroupSetup(cgroupParent, info)
	var out []checkLine
	for _, c := range hostcheck.CheckHostSetup(h) {
		l := checkLine{Name: c.Name, State: stateOK, Text: c.Found}
		if !c.OK {
			l.State, l.Fix = stateMissing, c.Fix
		}
		out = append(out, l)
	}
	return out
}

// appArmorLabel is this process's AppArmor label, "" without AppArmor
// (the files then fail with EINVAL or do not exist).
func appArmorLabel() string {
	for _, f := range []string{"/proc/self/attr/apparmor/current", "/proc/self/attr/current"} {
		if b, err := os.ReadFile(f); err == nil {
			return strings.TrimSpace(strings.TrimRight(string(b), "\x00"))
		}
	}
	return ""
}

// cgroupSetup describes the v2 parent the cgroup probe found: what this
// process may write there and who else lives in it.
func cgroupSetup(cgroupParent string, info hostcheck.CgroupInfo) hostcheck.CgroupSetup {
	cg := hostcheck.CgroupSetup{Version: info.Version, Own: cgroupParent == ""}
	if info.Version == 1 {
		cg.V1Writable = len(info.Parents) > 0
		for _, p := range info.Parents {
			cg.V1Writable = cg.V1Writable && unix.Access(p, unix.W_OK|unix.X_OK) == nil
		}
		cg.V1Fix = hostcheck.RootlessV1Fix()
	}
	if info.Version != 2 || len(info.Parents) != 1 {
		return cg
	}
	cg.Dir = info.Parents[0]
	// Only the root cgroup has no cgroup.type: it may hold processes and
	// pass controllers down at once.
	if _, err := os.Stat(filepath.Join(cg.Dir, "cgroup.type")); os.IsNotExist(err) {
		cg.Root = true
	}
	for _, f := range []string{".", "cgroup.procs", "cgroup.subtree_control"} {
		mode := uint32(unix.W_OK)
		if f == "." {
			mode |= unix.X_OK
		}
		if err := unix.Access(filepath.Join(cg.Dir, f), mode); err != nil {
			cg.NotWritable = append(cg.NotWritable, f)
		}
	}
	if b, err := os.ReadFile(filepath.Join(cg.Dir, "cgroup.procs")); err == nil {
		for _, f := range strings.Fields(string(b)) {
			if pid, err := strconv.Atoi(f); err == nil && pid != os.Getpid() {
				cg.OtherPIDs = append(cg.OtherPIDs, pid)
			}
		}
	}
	return cg
}
