package jail

import (
	"syscall"

	"golang.org/x/sys/unix"
)

// initCaps are what the init needs for its setup, in its own namespaces
// only: mounts, pivot_root and sethostname (SYS_ADMIN), the drop to the
// target's identity (SETUID, SETGID, SETPCAP for the bounding set), bringing
// up lo (NET_ADMIN), and binding the egress mode's DNS stub to port 53
// (NET_BIND_SERVICE: over the run's own network namespace only; in the
// host mode's, the host's, the init's namespace gives it nothing). Every
// mode's init has the same set, so that an init started ahead of its run
// (a slot, keyed by what it was born with) serves any mode.
var initCaps = []uintptr{unix.CAP_SYS_ADMIN, unix.CAP_SETUID, unix.CAP_SETGID, unix.CAP_SETPCAP, unix.CAP_NET_ADMIN, unix.CAP_NET_BIND_SERVICE}

// ProcAttr is how the init is born for plan p: in its namespaces, with its
// ID mapping and the capabilities its setup needs (the cgroup fd is the
// supervisor's to add). check spawns its probe with it.
func (p *Plan) ProcAttr() *syscall.SysProcAttr {
	var flags uintptr
	for _, ns := range p.Namespaces {
		flags |= ns.Flag
	}
	ids := p.IDs
	attr := &syscall.SysProcAttr{
		Cloneflags:                 flags,
		UidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: ids.HostUID, Size: 1}},
		GidMappings:                []syscall.SysProcIDMap{{ContainerID: InsideUID, HostID: ids.HostGID, Size: 1}},
		GidMappingsEnableSetgroups: ids.Setgroups,
		// The init runs as an unmapped uid until it drops to InsideUID:
		// an execve by a non-root uid would empty its capability sets, so
		// the ones setup needs cross the exec as ambient capabilities.
		// dropIdentity clears them all.
		AmbientCaps: initCaps,
		// Mapped from the start: files the init creates in its tmpfs need
		// a mapped owner (an unmapped one fails with EOVERFLOW).
		Credential: &syscall.Credential{Uid: InsideUID, Gid: InsideUID, NoSetGroups: !ids.Setgroups},
		// If the supervisor dies, even of SIGKILL, the kernel kills the
		// init, and with PID 1 gone, every process of its namespace.
		Pdeathsig: unix.SIGKILL,
		// Own process group: a terminal's Ctrl-C reaches the supervisor
		// only, which forwards it once.
		Setpgid: true,
	}
	return attr
}
