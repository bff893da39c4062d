package cgroupfs

import (
	"fmt"
	"os"
	"slices"
	"strings"
)

// An account on cgroup v1 (a hybrid host) cannot make cgroups of its own:
// v1 has no delegation the kernel vouches for (the owner of a subtree may
// write its root's knobs). What works, and what the fixes below say, is a
// subtree root makes for it: the same name in every hierarchy the jail
// reads (one --cgroup-parent, a cgroup path, is found in each mount; on a
// hybrid host the cgroup2 mount is read too, for its controllers), owned
// by the account. Tested as written: TestRootlessHybridMessages.

// FixOptOut is how a run does without a cgroup, and what that costs: the
// words every fix for a missing cgroup ends with.
const FixOptOut = `or run without a cgroup: --unsafe-disable cgroup (Python: unsafe_disable=("cgroup",)), ` +
	"which costs the memory, CPU and pids limits and their accounting; " +
	"the run's processes are still all killed at its end (its pid namespace)"

// SubtreeName is the cgroup the v1 recipe makes for uid.
func SubtreeName(uid int) string { return fmt.Sprintf("scidex-%d", uid) }

// fixAccessV1Rootless is the v1 recipe for uid: root makes and chowns
// SubtreeName(uid) in each of h's mounts, the account passes it as
// --cgroup-parent.
func (h host) fixAccessV1Rootless(uid int) string {
	var mounts []string
	for _, c := range controllers {
		if hier := h.v1[c.v1]; hier != nil && !slices.Contains(mounts, hier.mount) {
			mounts = append(mounts, hier.mount)
		}
	}
	if h.v2 != nil {
		mounts = append(mounts, h.v2.mount)
	}
	name := SubtreeName(uid)
	return fmt.Sprintf("cgroup v1 cannot be delegated as v2 can: an account gets cgroups only from root, as a subtree of one name in every hierarchy. "+
		"As root: `for d in %s; do mkdir -p $d/%s && chown -R %d $d/%s; done`, then run with --cgroup-parent /%s "+
		"(Python: cgroup_parent=\"/%s\"); or run the jail as root, or under systemd with Delegate=yes on a cgroup v2 host "+
		"(boot with systemd.unified_cgroup_hierarchy=1); %s",
		strings.Join(mounts, " "), name, uid, name, name, name, FixOptOut)
}

// RootlessV1Fix is the v1 recipe for this process's euid on this host, or
// "" when the host has no cgroup v1 memory hierarchy.
func RootlessV1Fix() string {
	h, err := readHost()
	if err != nil || h.v1["memory"] == nil {
		return ""
	}
	return h.fixAccessV1Rootless(os.Geteuid())
}
