// Command vmtest-init is /init of the throw-away VM that cmd/vmtest boots:
// a static Go program (CGO_ENABLED=0) in an initramfs, started by the kernel
// as PID 1 (rdinit=/init). It never returns; whatever happens, it ends by
// resetting the VM, and QEMU, started with -no-reboot, exits.
//
// In order, each step needing the one before:
//
//  1. load the kernel modules listed in /modules (virtio, 9p, overlay and
//     their dependencies, in load order, uncompressed) with finit_module;
//  2. mount the job share (9p tag vmjob.Tag) and keep only a directory fd
//     to it, so that errors from here on reach the host and the command
//     never sees the share in its file tree;
//  3. build the root: the host's / over 9p (tag vmjob.HostRootTag,
//     read-only) under an overlayfs whose upper layer is a tmpfs, so the
//     command can write anywhere and nothing reaches the host;
//  4. MS_MOVE the overlay onto / and chroot into it (switch_root's way:
//     rootfs itself cannot be pivot_root'ed away, but a sandbox started
//     inside can pivot_root out of the overlay);
//  5. mount /proc, /sys, /dev, /dev/pts, /dev/shm, a fresh /run, a fresh
//     /tmp (keeping the job's Keep paths visible), securityfs and cgroup2
//     on /sys/fs/cgroup with every controller enabled for children;
//  6. bring up lo, set the hostname;
//  7. write the started file (the runner's boot watchdog waits for it) and
//     run the job's command with its environment and directory, its
//     stdout and stderr going straight to files on the job share;
//  8. write the exit status, sync, reboot.
//
// See package vmjob for the files it reads and writes.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/cmd/vmtest/vmjob"
	"github.com/scidex/scidex-jail/internal/netif"
)

func main() {
	if os.Getpid() != 1 {
		fmt.Fprintln(os.Stderr, "vmtest-init: not PID 1; this program is the /init of the vmtest VM")
		os.Exit(2)
	}
	job, err := run()
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtest-init: %v\n", err)
		if job != nil {
			_ = job.WriteFile(vmjob.InitErrorFile, []byte(err.Error()+"\n"), 0o644)
		}
	}
	if job != nil {
		_ = job.Close()
	}
	unix.Sync()
	// With reboot=t the kernel resets through a triple fault; -no-reboot
	// turns any reset into QEMU's exit.
	_ = unix.Reboot(unix.LINUX_REBOOT_CMD_RESTART)
	select {} // PID 1 must not exit: that would be a kernel panic
}

// run does steps 1-8. It returns the job share once mounted, so that main can
// report a failure there.
func run() (*os.Root, error) {
	// On the serial console, this line tells a hang in the kernel's boot
	// from one in the steps below (the kernel itself is quiet).
	fmt.Fprintln(os.Stderr, "vmtest-init: up")
	if err := loadModules("/modules", "/lib/modules"); err != nil {
		return nil, err
	}
	job, err := mountJobShare("/job")
	if err != nil {
		return nil, err
	}
	b, err := job.ReadFile(vmjob.JobFile)
	if err != nil {
		return job, fmt.Errorf("read job: %w", err)
	}
	j, err := vmjob.Parse(b)
	if err != nil {
		return job, err
	}
	if err := mountRoot("/mnt"); err != nil {
		return job, err
	}
	if err := mountSystem(j.Keep); err != nil {
		return job, err
	}
	if err := enableControllers("/sys/fs/cgroup"); err != nil {
		return job, err
	}
	if err := netif.LoopbackUp(); err != nil {
		return job, err
	}
	if j.Hostname != "" {
		if err := unix.Sethostname([]byte(j.Hostname)); err != nil {
			return job, fmt.Errorf("sethostname %q: %w", j.Hostname, err)
		}
	}
	if err := job.WriteFile(vmjob.StartedFile, nil, 0o644); err != nil {
		return job, fmt.Errorf("write %s: %w", vmjob.StartedFile, err)
	}
	code, err := runJob(job, j)
	if err != nil {
		return job, err
	}
	if err := job.WriteFile(vmjob.ExitFile, []byte(strconv.Itoa(code)+"\n"), 0o644); err != nil {
		return job, fmt.Errorf("write exit status: %w", err)
	}
	return job, nil
}

// loadModules loads, in order, the modules named in list (one file name per
// line, dependencies first). Modules already present (EEXIST) are fine.
func loadModules(list, dir string) error {
	b, err := os.ReadFile(list)
	if err != nil {
		return fmt.Errorf("read module list: %w", err)
	}
	for _, name := range splitLines(string(b)) {
		p := filepath.Join(dir, name)
		f, err := os.Open(p)
		if err != nil {
			return fmt.Errorf("open module: %w", err)
		}
		err = unix.FinitModule(int(f.Fd()), "", 0)
		f.Close()
		if err != nil && err != unix.EEXIST {
			return fmt.Errorf("finit_module %s: %w", p, err)
		}
	}
	return nil
}

func splitLines(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == '\n' {
			if i > start {
				out = append(out, s[start:i])
			}
			start = i + 1
		}
	}
	return out
}
