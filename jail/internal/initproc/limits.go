package initproc

import (
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

// The run's limits as the analysis sees them: its CPUs and its memory.

// pinCPUs narrows this thread's CPU affinity, which the target inherits
// from the fork, to n CPUs when it allows more (n 0: as it is), and
// returns the CPUs it allows as a kernel CPU list ("0-1,3"), the text of
// /sys/devices/system/cpu/online in the view.
//
// The n CPUs start at the one this thread runs on, which the scheduler
// chose: concurrent runs with a quota of one CPU then spread over the
// machine instead of all taking CPU 0. The price of pinning: the run
// cannot move to another CPU that falls idle while it runs; its quota
// caps it at n CPUs' worth of time anyway.
func pinCPUs(n int) (string, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return "", wrap.Error("sched_getaffinity", err)
	}
	if n > 0 && set.Count() > n {
		set = pickCPUs(set, n, currentCPU())
		if err := unix.SchedSetaffinity(0, &set); err != nil {
			return "", wrap.Error("sched_setaffinity to "+cpuList(set), err)
		}
	}
	return cpuList(set), nil
}

// currentCPU is the CPU this thread runs on (getcpu(2)); 0 if unknown.
func currentCPU() int {
	var cpu uint32
	if _, _, errno := unix.RawSyscall(unix.SYS_GETCPU, uintptr(unsafe.Pointer(&cpu)), 0, 0); errno != 0 {
		return 0
	}
	return int(cpu)
}

// pickCPUs is n CPUs of set, the first at or after from, wrapping around.
func pickCPUs(set unix.CPUSet, n, from int) unix.CPUSet {
	var out unix.CPUSet
	size := len(set) * 64 // CPUSet is an array of 64-bit words
	for i, got := 0, 0; i < size && got < n; i++ {
		cpu := (from + i) % size
		if set.IsSet(cpu) {
			out.Set(cpu)
			got++
		}
	}
	return out
}

// cpuList writes set in the kernel's list format: "0-3,5,7-8".
func cpuList(set unix.CPUSet) string {
	var parts []string
	size := len(set) * 64
	for cpu := 0; cpu < size; cpu++ {
		if !set.IsSet(cpu) {
			continue
		}
		end := cpu
		for end+1 < size && set.IsSet(end+1) {
			end++
		}
		if end == cpu {
			parts = append(parts, strconv.Itoa(cpu))
		} else {
			parts = append(parts, strconv.Itoa(cpu)+"-"+strconv.Itoa(end))
		}
		cpu = end
	}
	return strings.Join(parts, ",")
}

// cpuOnline is where glibc's sysconf(_SC_NPROCESSORS_ONLN) (Python's
// os.cpu_count, OpenBLAS) reads the CPU count first; without it, /proc/stat,
// which lists every CPU of the host.
const cpuOnline = "/sys/devices/system/cpu/online"

// writeLimitsView writes the CPU list at cpuOnline in the new root (which
// the view has no /sys of its own besides) and, when meminfo is set,
// binds it read-only over the fresh /proc/meminfo. Both are files of the
// root tmpfs: the root becomes read-only, and the meminfo file is
// unlinked once bound, so that its bind is its one name.
//
// held (a view built ahead of its run) keeps the meminfo file open for
// writing: its content is the run's, written when the run comes.
func writeLimitsView(online, meminfo string, held *heldView) error {
	if err := writeFile(newRoot+cpuOnline, online+"\n"); err != nil {
		return err
	}
	if meminfo == "" {
		return nil
	}
	src := newRoot + "/.scidex-meminfo"
	if held != nil {
		fd, err := unix.Open(src, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o444)
		if err != nil {
			return wrap.Error("create "+src, err)
		}
		held.meminfo = fd
	} else if err := writeFile(src, meminfo); err != nil {
		return err
	}
	dst := newRoot + "/proc/meminfo"
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		return wrap.Error("bind the run's meminfo on /proc/meminfo", err)
	}
	attr := unix.MOUNT_ATTR_RDONLY | unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV | unix.MOUNT_ATTR_NOEXEC
	if err := unix.MountSetattr(unix.AT_FDCWD, dst, 0, &unix.MountAttr{Attr_set: uint64(attr)}); err != nil {
		return wrap.Error("make /proc/meminfo read-only", err)
	}
	if err := unix.Unlink(src); err != nil {
		return wrap.Error("remove "+src, err)
	}
	return nil
}

// writeFile creates path (and its parents) with text, mode 0444; an
// existing file is an error: the init made the whole tree.
func writeFile(path, text string) error {
	if err := mkdirAll(path[:strings.LastIndexByte(path, '/')]); err != nil {
		return err
	}
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o444)
	if err != nil {
		return wrap.Error("create "+path, err)
	}
	defer unix.Close(fd)
	for b := []byte(text); len(b) > 0; {
		n, err := unix.Write(fd, b)
		if err != nil {
			return wrap.Error("write "+path, err)
		}
		b = b[n:]
	}
	return nil
}
