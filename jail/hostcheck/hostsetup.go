package hostcheck

import (
	"github.com/scidex/scidex-jail/cgroupfs"
	"github.com/scidex/scidex-jail/jail/option"

	"fmt"
	"slices"
	"strings"
)

// The host settings a deployment needs beyond the kernel features the
// layers probe for themselves: user namespaces allowed by the sysctls a
// distribution may set (Debian's unprivileged_userns_clone, Ubuntu 24.04's
// AppArmor restriction), and on cgroup v2 a delegated cgroup (what systemd's
// Delegate=yes, a container's cgroup namespace or a chown'd subtree gives)
// that holds no other processes. CheckHostSetup judges a snapshot of them;
// `scidex-jail check` gathers the snapshot and prints the verdicts.

// Where the Debian package puts what the fixes name.
const (
	ExampleRunnerUnit = "/usr/share/doc/scidex-jail/examples/systemd/scidex-jail-runner.service"
	ExampleAppArmor   = "/usr/share/doc/scidex-jail/examples/apparmor/scidex-jail"
	DelegateHelper    = "/usr/libexec/scidex-jail/delegate"
)

// HostSetup is what the host looks like to the jail, as gathered by the
// caller. Sysctls holds the user namespace sysctls by name
// ("user.max_user_namespaces"); a missing key means the file is absent.
type HostSetup struct {
	EUID          int
	Sysctls       map[string]string
	AppArmorLabel string // this process's AppArmor label; "" without AppArmor
	Cgroup        CgroupSetup
}

// CgroupSetup describes the cgroup runs would make their leaves in.
type CgroupSetup struct {
	Version     int      // 2 or 1; 0 when no usable cgroup was found
	Dir         string   // the parent directory (v2)
	Own         bool     // Dir is this process's own cgroup (no --cgroup-parent)
	Root        bool     // Dir is the root of the hierarchy, where processes and controllers mix
	NotWritable []string // Dir's entries ("." for the directory) this process may not write
	OtherPIDs   []int    // processes in Dir other than this one
	// V1Writable: on v1, every parent is writable by this process (root
	// made it a subtree: V1Fix's recipe).
	V1Writable bool
	// V1Fix: on v1, how this account gets cgroups, or does without
	// (RootlessV1Fix).
	V1Fix string
}

// SetupCheck is one verdict: what was found and, when not OK, the fix.
type SetupCheck struct {
	Name  string
	OK    bool
	Found string
	Fix   string
}

// Sysctl names CheckHostSetup reads.
const (
	SysctlMaxUserNS        = "user.max_user_namespaces"
	SysctlUnprivUserNS     = "kernel.unprivileged_userns_clone"
	SysctlAppArmorRestrict = "kernel.apparmor_restrict_unprivileged_userns"
)

// CheckHostSetup judges h: one verdict each for the user namespace
// sysctls, AppArmor's user namespace rule and cgroup delegation.
func CheckHostSetup(h HostSetup) []SetupCheck {
	return []SetupCheck{checkUsernsSysctls(h), checkAppArmorUserns(h), checkDelegation(h)}
}

func checkUsernsSysctls(h HostSetup) SetupCheck {
	c := SetupCheck{Name: "userns sysctls"}
	max, ok := h.Sysctls[SysctlMaxUserNS]
	if !ok {
		c.Found = SysctlMaxUserNS + " is absent: the kernel has no user namespaces"
		c.Fix = "run a kernel built with CONFIG_USER_NS=y"
		return c
	}
	found := []string{SysctlMaxUserNS + " = " + max}
	if max == "0" {
		c.Found = strings.Join(found, ", ") + ": no user namespace may be created"
		c.Fix = "sysctl -w " + SysctlMaxUserNS + "=15000, and persist it in /etc/sysctl.d/90-scidex-jail.conf"
		return c
	}
	if v, ok := h.Sysctls[SysctlUnprivUserNS]; ok {
		found = append(found, SysctlUnprivUserNS+" = "+v)
		if v == "0" && h.EUID != 0 {
			c.Found = strings.Join(found, ", ") + ": only root may create user namespaces, and this process runs as uid " + fmt.Sprint(h.EUID)
			c.Fix = "sysctl -w " + SysctlUnprivUserNS + "=1, and persist it in /etc/sysctl.d/90-scidex-jail.conf; or run the jail as root"
			return c
		}
	}
	c.OK = true
	c.Found = strings.Join(found, ", ") + ": user namespaces allowed"
	if h.EUID == 0 {
		c.Found += " (running as root)"
	} else {
		c.Found += fmt.Sprintf(" for uid %d", h.EUID)
	}
	return c
}

func checkAppArmorUserns(h HostSetup) SetupCheck {
	c := SetupCheck{Name: "apparmor userns"}
	v, ok := h.Sysctls[SysctlAppArmorRestrict]
	switch {
	case !ok:
		c.OK, c.Found = true, SysctlAppArmorRestrict+" is absent: AppArmor does not restrict user namespaces on this kernel"
	case v == "0":
		c.OK, c.Found = true, SysctlAppArmorRestrict+" = 0: AppArmor does not restrict user namespaces"
	case h.EUID == 0:
		c.OK, c.Found = true, SysctlAppArmorRestrict+" = "+v+": applies to unprivileged users only; running as root"
	case h.AppArmorLabel != "" && h.AppArmorLabel != "unconfined":
		c.OK = true
		c.Found = fmt.Sprintf("%s = %s; this binary runs under the AppArmor profile %q, which must grant userns (the example profile %s does)", SysctlAppArmorRestrict, v, h.AppArmorLabel, ExampleAppArmor)
	default:
		c.Found = fmt.Sprintf("%s = %s and this binary is unconfined: AppArmor lets it create user namespaces without any capability in them, so the jail cannot set up its mounts (Ubuntu 24.04's default)", SysctlAppArmorRestrict, v)
		c.Fix = fmt.Sprintf("install an AppArmor profile that grants userns to this binary: cp %s /etc/apparmor.d/scidex-jail && apparmor_parser -r /etc/apparmor.d/scidex-jail (edit its path if the binary is not /usr/bin/scidex-jail); or sysctl -w %s=0 for every program", ExampleAppArmor, SysctlAppArmorRestrict)
	}
	return c
}

func checkDelegation(h HostSetup) SetupCheck {
	c := SetupCheck{Name: "cgroup delegation"}
	cg := h.Cgroup
	switch {
	case cg.Version == 0:
		c.Found = "no usable cgroup parent was found"
		c.Fix = "see the cgroup line above"
		return c
	case cg.Version == 1 && h.EUID == 0:
		c.OK, c.Found = true, "cgroup v1 (a hybrid host): not delegated, written as root"
		return c
	case cg.Version == 1 && cg.V1Writable:
		c.OK, c.Found = true, fmt.Sprintf("cgroup v1 (a hybrid host): the parents are writable by uid %d (a subtree root made for it)", h.EUID)
		return c
	case cg.Version == 1:
		c.Found = fmt.Sprintf("cgroup v1 (a hybrid host) and uid %d: on v1 an account cannot make cgroups unless root makes it a subtree in every hierarchy", h.EUID)
		c.Fix = cg.V1Fix
		if c.Fix == "" {
			c.Fix = "run the jail as root, or boot with systemd.unified_cgroup_hierarchy=1 (cgroup v2) and run under a unit with Delegate=yes (" + ExampleRunnerUnit + "); " + cgroupfs.FixOptOut
		}
		return c
	}
	if len(cg.NotWritable) > 0 {
		files := slices.Clone(cg.NotWritable)
		for i, f := range files {
			if f == "." {
				files[i] = "the directory itself"
			}
		}
		c.Found = fmt.Sprintf("%s is not delegated to uid %d: cannot write %s", cg.Dir, h.EUID, strings.Join(files, ", "))
		c.Fix = fmt.Sprintf("run under a systemd service with Delegate=yes (example: %s), or give uid %d a subtree: mkdir it, chown it and its cgroup.procs, cgroup.subtree_control and cgroup.threads, and pass it as %s", ExampleRunnerUnit, h.EUID, cgroupParent())
		return c
	}
	if cg.Own && !cg.Root && len(cg.OtherPIDs) > 0 {
		c.Found = fmt.Sprintf("%s is writable, but it is this process's own cgroup and holds other processes %v: cgroup v2 passes controllers down only from cgroups without processes, so runs would be refused", cg.Dir, cg.OtherPIDs)
		c.Fix = fmt.Sprintf("start the process that runs the jail through %s (it moves itself into <cgroup>/runner and makes <cgroup>/jails for %s), or pass %[2]s to a delegated cgroup without processes", DelegateHelper, cgroupParent())
		return c
	}
	c.OK = true
	who := "root"
	if h.EUID != 0 {
		who = fmt.Sprintf("uid %d", h.EUID)
	}
	c.Found = fmt.Sprintf("%s is writable by %s", cg.Dir, who)
	switch {
	case cg.Root:
		c.Found += " (the root of the hierarchy)"
	case cg.Own:
		c.Found += " and holds no other process"
	default:
		c.Found += " (" + cgroupParent() + ")"
	}
	if strings.Contains(cg.Dir, "/scidex-jail.slice/") {
		c.Found += ", inside scidex-jail.slice"
	}
	return c
}

// cgroupParent is the option that names a delegated cgroup, as check's
// advice gives it: the command line's flag.
func cgroupParent() string { return option.Origin{}.Name(option.CgroupParent) }
