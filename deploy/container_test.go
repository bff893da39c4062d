package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"syscall"

	"golang.org/x/sys/unix"
)

// A container built from plain namespaces, as a container runtime makes
// one: its init is this test binary, re-executed with containerEnv set
// (TestMain calls containerMain), in new user, mount, pid, uts, ipc and
// network namespaces and born in a delegated cgroup. It then makes its own
// cgroup namespace (rooted at that cgroup), makes the whole root read-only,
// mounts its volumes, a fresh /proc and its cgroup2, and runs a script as
// the container's root.
const containerEnv = "SCIDEX_TEST_CONTAINER"

// containerSpec is what the test asks of the container.
type containerSpec struct {
	Tmp      string // host directory mounted writable at /tmp ("" = none: /tmp stays read-only)
	CgroupRO bool   // mount the container's cgroup2 read-only, as container runtimes do
	MaskProc bool   // mask parts of /proc, as runtimes do by default
	Script   string // run by /bin/sh as the container's root
}

// containerMain is the container's init. It never returns.
func containerMain() {
	var c containerSpec
	fail := func(step string, err error) {
		fmt.Fprintf(os.Stderr, "container init: %s: %v\n", step, err)
		os.Exit(120)
	}
	if err := json.Unmarshal([]byte(os.Getenv(containerEnv)), &c); err != nil {
		fail("read the spec", err)
	}
	// The cgroup namespace is per thread until exec: unshare it on the
	// thread that will exec, so the script's cgroup root is the delegated
	// cgroup the init was born in.
	runtime.LockOSThread()
	if err := unix.Unshare(unix.CLONE_NEWCGROUP); err != nil {
		fail("unshare the cgroup namespace", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		fail("make mounts private", err)
	}
	if c.Tmp != "" {
		if err := unix.Mount(c.Tmp, "/tmp", "", unix.MS_BIND, ""); err != nil {
			fail("mount the /tmp volume", err)
		}
	}
	if err := unix.MountSetattr(-1, "/", unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		fail("make the root read-only", err)
	}
	if c.Tmp != "" {
		if err := unix.MountSetattr(-1, "/tmp", 0, &unix.MountAttr{Attr_clr: unix.MOUNT_ATTR_RDONLY}); err != nil {
			fail("make the /tmp volume writable", err)
		}
	}
	if err := unix.Mount("proc", "/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fail("mount /proc", err)
	}
	if c.MaskProc {
		// What runc does by default: /dev/null over files, read-only
		// binds over directories.
		if err := unix.Mount("/dev/null", "/proc/kcore", "", unix.MS_BIND, ""); err != nil {
			fail("mask /proc/kcore", err)
		}
		if err := unix.Mount("/proc/sys", "/proc/sys", "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			fail("bind /proc/sys", err)
		}
		if err := unix.Mount("", "/proc/sys", "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
			fail("make /proc/sys read-only", err)
		}
	}
	// A fresh sysfs for the container's network namespace, read-only as
	// runtimes mount it; the same cgroup2 superblock cannot be mounted
	// again on the root of the host's mount at /sys/fs/cgroup.
	if err := unix.Mount("sysfs", "/sys", "sysfs", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fail("mount /sys", err)
	}
	flags := uintptr(unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC)
	if c.CgroupRO {
		flags |= unix.MS_RDONLY
	}
	if err := unix.Mount("cgroup2", "/sys/fs/cgroup", "cgroup2", flags, ""); err != nil {
		fail("mount cgroup2", err)
	}
	if err := unix.Sethostname([]byte("container")); err != nil {
		fail("set the hostname", err)
	}
	if err := os.Chdir("/"); err != nil {
		fail("chdir /", err)
	}
	err := syscall.Exec("/bin/sh", []string{"/bin/sh", "-c", c.Script}, []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/"})
	fail("exec the script", err)
}
