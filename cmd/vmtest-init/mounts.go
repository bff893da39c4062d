package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/vmtest/vmjob"
)

// 9p options. msize 512000 is the most virtio transports take on 6.1 and
// 6.12 (bigger is cut down with a warning). The host root is read-only and
// nobody changes it during a test, so it is cached (cache=loose: executables
// are read once); the job share is uncached so that the host sees output as
// it is written.
const (
	rootOpts = "trans=virtio,version=9p2000.L,msize=512000,cache=loose"
	jobOpts  = "trans=virtio,version=9p2000.L,msize=512000"
)

// mount is one mount of the system layout.
type mount struct {
	source, target, fstype string
	flags                  uintptr
	data                   string
}

// systemMounts is the layout inside the new root, mounted in order (a mount
// point must exist before its child). The cgroup2 options are systemd's.
var systemMounts = []mount{
	{"proc", "/proc", "proc", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
	{"sysfs", "/sys", "sysfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
	{"securityfs", "/sys/kernel/security", "securityfs", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, ""},
	{"cgroup2", "/sys/fs/cgroup", "cgroup2", unix.MS_NOSUID | unix.MS_NODEV | unix.MS_NOEXEC, "nsdelegate,memory_recursiveprot"},
	{"devtmpfs", "/dev", "devtmpfs", unix.MS_NOSUID, "mode=0755"},
	{"devpts", "/dev/pts", "devpts", unix.MS_NOSUID | unix.MS_NOEXEC, "gid=5,mode=0620,ptmxmode=0666"},
	{"tmpfs", "/dev/shm", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"},
	{"tmpfs", "/run", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=0755"},
}

// devLinks are what udev or systemd would create; bash's process
// substitution needs /dev/fd.
var devLinks = map[string]string{
	"/dev/fd":     "/proc/self/fd",
	"/dev/stdin":  "/proc/self/fd/0",
	"/dev/stdout": "/proc/self/fd/1",
	"/dev/stderr": "/proc/self/fd/2",
}

func (m mount) do() error {
	if err := os.MkdirAll(m.target, 0o755); err != nil {
		return fmt.Errorf("create mount point: %w", err)
	}
	if err := unix.Mount(m.source, m.target, m.fstype, m.flags, m.data); err != nil {
		return fmt.Errorf("mount %s on %s (%s): %w", m.fstype, m.target, m.data, err)
	}
	return nil
}

// mountJobShare mounts the job share at dir and opens it as an os.Root: the
// fd stays valid after the chroot, when dir is no longer reachable by path.
func mountJobShare(dir string) (*os.Root, error) {
	if err := (mount{vmjob.Tag, dir, "9p", 0, jobOpts}).do(); err != nil {
		return nil, err
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open job share: %w", err)
	}
	return r, nil
}

// mountRoot builds the overlay root under base and makes it the root.
func mountRoot(base string) error {
	lower, upper, root := base+"/lower", base+"/upper", base+"/root"
	steps := []mount{
		{vmjob.HostRootTag, lower, "9p", unix.MS_RDONLY, rootOpts},
		{"tmpfs", upper, "tmpfs", 0, "mode=0755"},
	}
	for _, m := range steps {
		if err := m.do(); err != nil {
			return err
		}
	}
	for _, d := range []string{upper + "/upper", upper + "/work"} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return fmt.Errorf("create overlay dir: %w", err)
		}
	}
	// 9p offers no file handles and no xattrs for overlay's extras; the
	// defaults (index=off, no metacopy) need neither.
	ovl := mount{"overlay", root, "overlay", 0,
		"lowerdir=" + lower + ",upperdir=" + upper + "/upper,workdir=" + upper + "/work"}
	if err := ovl.do(); err != nil {
		return err
	}
	if err := os.Chdir(root); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.Mount(".", "/", "", unix.MS_MOVE, ""); err != nil {
		return fmt.Errorf("move new root onto /: %w", err)
	}
	if err := unix.Chroot("."); err != nil {
		return fmt.Errorf("chroot into new root: %w", err)
	}
	if err := os.Chdir("/"); err != nil {
		return fmt.Errorf("chdir / in new root: %w", err)
	}
	return nil
}

// mountSystem mounts the system layout, then a fresh /tmp in which the keep
// paths (host paths under /tmp, seen through the overlay) stay visible.
func mountSystem(keep []string) error {
	for _, m := range systemMounts {
		if err := m.do(); err != nil {
			return err
		}
	}
	for link, target := range devLinks {
		if err := os.Symlink(target, link); err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("create %s: %w", link, err)
		}
	}
	keep = outermost(keep)
	trees := make([]int, len(keep))
	for i, p := range keep {
		// A detached copy of the subtree, taken before /tmp is covered.
		fd, err := unix.OpenTree(unix.AT_FDCWD, p, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_RECURSIVE)
		if err != nil {
			return fmt.Errorf("open_tree %s: %w", p, err)
		}
		defer unix.Close(fd)
		trees[i] = fd
	}
	if err := (mount{"tmpfs", "/tmp", "tmpfs", unix.MS_NOSUID | unix.MS_NODEV, "mode=1777"}).do(); err != nil {
		return err
	}
	for i, p := range keep {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return fmt.Errorf("create kept path in /tmp: %w", err)
		}
		if err := unix.MoveMount(trees[i], "", unix.AT_FDCWD, p, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return fmt.Errorf("move_mount %s into the new /tmp: %w", p, err)
		}
	}
	return nil
}

// outermost returns the cleaned paths under /tmp, without those inside
// another: a kept directory brings its subdirectories along.
func outermost(paths []string) []string {
	var clean []string
	for _, p := range paths {
		p = filepath.Clean(p)
		if strings.HasPrefix(p, "/tmp/") {
			clean = append(clean, p)
		}
	}
	sort.Strings(clean)
	var out []string
	for _, p := range clean {
		if n := len(out); n > 0 && (p == out[n-1] || strings.HasPrefix(p, out[n-1]+"/")) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// enableControllers enables every controller of the cgroup2 root for its
// children, one by one so that an error names the controller.
func enableControllers(root string) error {
	b, err := os.ReadFile(root + "/cgroup.controllers")
	if err != nil {
		return fmt.Errorf("read root cgroup controllers: %w", err)
	}
	for _, c := range strings.Fields(string(b)) {
		if err := os.WriteFile(root+"/cgroup.subtree_control", []byte("+"+c), 0); err != nil {
			return fmt.Errorf("enable cgroup controller %s: %w", c, err)
		}
	}
	return pinStaticKeys(root)
}

// pinStaticKeys keeps one idle cgroup with a memory controller and a CPU
// quota for the VM's whole life. The kernel flips static keys (text patched
// with int3 on every CPU) when the first such cgroup appears and when the
// last one goes: CFS bandwidth, memcg socket accounting. Under
// multi-threaded TCG that patching now and then oopses the guest
// (enqueue_entity, int3), and the tests create and remove such leaves all
// the time. Held at one from boot, the keys never flip again.
func pinStaticKeys(root string) error {
	dir := root + "/vmtest-static-keys"
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("create %s: %w", dir, err)
	}
	// A quota of 64 CPUs: bandwidth control on, nothing ever throttled.
	if err := os.WriteFile(dir+"/cpu.max", []byte("6400000 100000"), 0); err != nil {
		return fmt.Errorf("set %s/cpu.max: %w", dir, err)
	}
	return nil
}
