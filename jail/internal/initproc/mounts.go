package initproc

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
	"github.com/scidex/scidex-jail/jail/internal/protocol"
)

// devices bound from the host into the private /dev.
var devices = []string{"null", "zero", "full", "random", "urandom", "tty"}

// newRoot is where the init builds the view. It mounts its tmpfs over the
// host's /tmp inside its own mount namespace only; every bind source is
// opened as an O_PATH fd before that, so sources under /tmp stay reachable.
const newRoot = "/tmp"

// buildMountView runs in the init, with CAP_SYS_ADMIN over its own user and
// mount namespaces. On return the process is inside the new root, cwd /.
//
// online is the text of /sys/devices/system/cpu/online in the view: the
// CPUs the target may run on (pinCPUs).
//
// held, for a view built ahead of its run (ahead.go), keeps what the run
// completes: the meminfo file open, and the root writable.
func buildMountView(p *protocol.Mounts, online string, held *heldView) error {
	// Nothing we mount may propagate back to the host (systemd makes / shared).
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return wrap.Error("make / private", err)
	}
	// Every source is opened before the new root covers /tmp (where a run
	// directory or a bound path may lie).
	binds, err := openSources(p)
	defer func() {
		for _, b := range binds {
			unix.Close(b.fd)
		}
	}()
	if err != nil {
		return err
	}
	if err := layRoot(p, binds, online, held); err != nil {
		return err
	}
	if err := placeFiles(p.Files); err != nil {
		return err
	}
	if err := placeNames(p.Names); err != nil { // sockets.go
		return err
	}
	if err := sealAndPivot(); err != nil {
		return err
	}
	if held != nil {
		return nil // sealRoot once the run is named
	}
	return sealRoot()
}

// bind is one host object to bind into the view, opened as O_PATH. The
// descriptors are plain ints: an *os.File would ask the kernel for the
// flags of each and set up a finalizer, for nothing.
type bind struct {
	fd   int
	src  string // the host path, for errors
	dst  string
	attr uint64
}

// openSources opens every bind source of the view: system dirs, read-only
// and writable paths, the run directory when it is bound from the host, and
// the devices.
func openSources(p *protocol.Mounts) ([]bind, error) {
	var binds []bind
	open := func(path string, attr uint64) error {
		fd, err := unix.Open(path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EACCES) {
			return wrap.Around("open "+path+": ", err, ": the analysis' uid must be able to reach it: give every directory above it search permission for others (chmod o+x)")
		}
		if err != nil {
			return wrap.Error("open "+path, err)
		}
		binds = append(binds, bind{fd, path, path, attr})
		return nil
	}
	const ro = unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV
	var paths []struct {
		path string
		attr uint64
	}
	add := func(attr uint64, ps ...string) {
		for _, p := range ps {
			paths = append(paths, struct {
				path string
				attr uint64
			}{p, attr})
		}
	}
	for _, e := range p.System {
		if e.Symlink == "" {
			add(ro, e.Path)
		}
	}
	add(ro|unix.MOUNT_ATTR_NOEXEC, p.ReadOnly...)
	if p.RunDirBytes == 0 {
		add(unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, p.RunDir)
	}
	add(unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, p.ReadWrite...)
	for _, e := range paths {
		if err := open(e.path, e.attr); err != nil {
			return binds, err
		}
	}
	for _, d := range devices {
		fd, err := unix.Open("/dev/"+d, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // e.g. no /dev/tty without a controlling terminal device
		}
		binds = append(binds, bind{fd, "/dev/" + d, "/dev/" + d, unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NOEXEC})
	}
	return binds, nil
}

// layRoot builds the view on a fresh tmpfs at newRoot: the system links,
// a private /dev, every bind, the run directory and the scratch, the CPU
// list and the meminfo of the run's limits,
// /dev's own entries, a fresh /proc, and empty socket directories.
func layRoot(p *protocol.Mounts, binds []bind, online string, held *heldView) error {
	if err := unix.Mount("tmpfs", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return wrap.Error("mount new root tmpfs", err)
	}
	for _, e := range p.System {
		if e.Symlink != "" {
			if err := symlink(e.Symlink, newRoot+e.Path); err != nil {
				return wrap.Error("recreate symlink "+e.Path, err)
			}
		}
	}
	// /dev first: device binds land below it.
	dev := newRoot + "/dev"
	if err := mkdirMount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return err
	}
	for _, b := range binds {
		if err := bindAt(b, newRoot+b.dst); err != nil {
			return err
		}
	}
	// The disk budget (runspace.go): writes past it fail with ENOSPC
	// inside, and nothing the analysis writes reaches the host's disk.
	// The supervisor reads the outputs through /proc/<init>/root.
	if err := mountRunSpace(p); err != nil {
		return err
	}
	if err := makeLinks(p); err != nil {
		return err
	}
	if err := populateDev(dev, p.ShmBytes); err != nil {
		return err
	}
	if err := mountProc(); err != nil {
		return err
	}
	// After /proc: the meminfo is bound over the fresh one (limits.go).
	if err := writeLimitsView(online, p.Meminfo, held); err != nil {
		return err
	}
	if err := mountCgroupView(p.Cgroup); err != nil {
		return err
	}
	// Socket directories of the host (PostgreSQL's /var/run/postgresql,
	// D-Bus, ...) are not bound: these stay empty, read-only directories.
	for _, d := range []string{"/run", "/var/run", "/var/tmp"} {
		if err := mkdirAll(newRoot + d); err != nil {
			return wrap.Error("create "+d, err)
		}
	}
	return nil
}

// mkdirAll is os.MkdirAll (mode 0755) for the new root, which holds only
// what the init made: one mkdir where the parent exists, a climb only where
// it does not, instead of a stat of every level first.
func mkdirAll(dir string) error {
	err := unix.Mkdir(dir, 0o755)
	if errors.Is(err, unix.ENOENT) && dir != "/" {
		if err = mkdirAll(filepath.Dir(dir)); err != nil {
			return err
		}
		err = unix.Mkdir(dir, 0o755)
	}
	if errors.Is(err, unix.EEXIST) {
		var st unix.Stat_t
		if err = unix.Stat(dir, &st); err == nil && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			err = unix.ENOTDIR
		}
	}
	if err != nil {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// mkfile makes an empty regular file at path (an existing one will do),
// and its parents where they are missing.
func mkfile(path string) error {
	err := unix.Mknod(path, unix.S_IFREG|0o644, 0)
	if errors.Is(err, unix.ENOENT) {
		if err = mkdirAll(filepath.Dir(path)); err != nil {
			return err
		}
		err = unix.Mknod(path, unix.S_IFREG|0o644, 0)
	}
	if err != nil && !errors.Is(err, unix.EEXIST) {
		return &fs.PathError{Op: "mknod", Path: path, Err: err}
	}
	return nil
}

func symlink(target, link string) error {
	if err := unix.Symlink(target, link); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: link, Err: err}
	}
	return nil
}

func mkdirMount(src, dst, fstype string, flags uintptr, data string) error {
	if err := mkdirAll(dst); err != nil {
		return wrap.Error("create "+dst, err)
	}
	if err := unix.Mount(src, dst, fstype, flags, data); err != nil {
		return wrap.Error("mount "+fstype+" on "+dst, err)
	}
	return nil
}

// bindAt bind-mounts b's object at dst (created as a directory or an empty
// file to match) and sets b's attributes on the whole bound tree.
func bindAt(b bind, dst string) error {
	var st unix.Stat_t
	if err := unix.Fstat(b.fd, &st); err != nil {
		return wrap.Error("stat "+b.src, err)
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		if err := mkdirAll(dst); err != nil {
			return wrap.Error("create mount point "+dst, err)
		}
	} else if err := mkfile(dst); err != nil {
		return wrap.Error("create mount point "+dst, err)
	}
	// A bind through /proc/self/fd reaches the object even when its path is
	// now hidden under the new root tmpfs.
	srcPath := "/proc/self/fd/" + strconv.Itoa(b.fd)
	if err := unix.Mount(srcPath, dst, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return wrap.Error("bind "+b.src+" on "+dst, err)
	}
	// mount_setattr only adds flags: the locked flags a user namespace
	// inherits from the host mount (nosuid, nodev, ...) stay as they were,
	// which a MS_REMOUNT|MS_BIND would have to repeat or fail with EPERM.
	if b.attr != 0 {
		if err := unix.MountSetattr(unix.AT_FDCWD, dst, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: b.attr}); err != nil {
			return wrap.Error("set mount attributes on "+dst, err)
		}
	}
	return nil
}

func populateDev(dev string, shmBytes int64) error {
	for _, l := range [][2]string{
		{"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"}, {"/proc/self/fd/1", "stdout"},
		{"/proc/self/fd/2", "stderr"}, {"pts/ptmx", "ptmx"},
	} {
		if err := symlink(l[0], dev+"/"+l[1]); err != nil {
			return wrap.Error("create /dev/"+l[1], err)
		}
	}
	if err := mkdirMount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return err
	}
	shm := "mode=1777,size=" + strconv.FormatInt(shmBytes, 10)
	if err := mkdirMount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, shm); err != nil {
		return err
	}
	return nil
}

// pivotInto makes dir the root. pivot_root(".", ".") stacks the old root
// under the new one; the detach then drops it, so no path leads back.
func pivotInto(dir string) error {
	if err := unix.Chdir(dir); err != nil {
		return wrap.Error("chdir to new root", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return wrap.Error("pivot_root", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return wrap.Error("detach old root", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return wrap.Error("chdir /", err)
	}
	return nil
}

// mountProc mounts a fresh /proc for the run's pid namespace.
func mountProc() error {
	err := mkdirMount("proc", newRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, "")
	if errors.Is(err, unix.EPERM) {
		// The kernel mounts a new proc in a user namespace only where
		// an existing one is fully visible (mount_too_revealing):
		// container runtimes mask parts of theirs.
		return wrap.Around("", err, ": a fresh /proc for the run's pid namespace is refused while parts of the /proc the jail sees are masked or read-only (as container runtimes do by default): the container must leave /proc unmasked (Kubernetes securityContext.procMount: Unmasked, docker --security-opt systempaths=unconfined)")
	}
	return err
}

// sealAndPivot makes /dev read-only and moves into the new root.
func sealAndPivot() error {
	if err := unix.MountSetattr(unix.AT_FDCWD, newRoot+"/dev", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return wrap.Error("make /dev read-only", err)
	}
	return pivotInto(newRoot)
}

// sealRoot makes the root, where the init now is, read-only: it holds
// only directories and links.
func sealRoot() error {
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return wrap.Error("make new root read-only", err)
	}
	return nil
}
