// Command vmtest runs one command inside a throw-away QEMU VM whose kernel
// has a pure cgroup v2 hierarchy, and exits with the command's status. It is
// how this project tests its cgroup v2 code on hosts (like its development
// machines) whose controllers sit on cgroup v1.
//
// Usage:
//
//	vmtest [flags] [--] CMD [ARGS...]
//	go test -exec /tmp/scidex-vmtest ./cgroupfs/
//	vmtest -prepare            # fetch the kernel, fill the caches, exit
//
// Build it once (go build -o /tmp/scidex-vmtest ./cmd/vmtest) and use it as
// go test's -exec program: go builds the test binary on the host and hands
// its path and flags to vmtest, which runs it in the VM with the host's
// working directory. CMD's stdout and stderr reach vmtest's while it runs.
//
// The VM (QEMU TCG, q35, 2 CPUs, 1 GiB) sees the host's / read-only over
// virtio-9p under an overlay with a tmpfs upper layer: everything is there,
// nothing written reaches the host. /tmp is a fresh tmpfs except for the
// command's own directory and working directory when those are under /tmp
// (/tmp/go-build*). cgroup2 is mounted on /sys/fs/cgroup with every
// controller enabled for children, lo is up, and the command runs as root
// with PATH (including /usr/local/go/bin), HOME=/root, SCIDEX_IN_VM=1,
// SCIDEX_REQUIRE_CGROUP2=1 and any -env K=V. The host's environment is not
// passed on.
//
// Kernels (-kernel): "backports" is Debian bookworm-backports' 6.12
// (Landlock ABI 6), downloaded on first use with a private apt
// configuration under the cache (the system's apt setup is untouched);
// "6.1" is the installed Debian kernel (Landlock ABI 2, package
// linux-image-amd64); "auto" (the default) takes backports when it can be
// had and says so on stderr either way. The cache (-cache,
// /var/cache/scidex-vmtest) holds the unpacked kernel, the vmlinux extracted
// from each bzImage (booted through its PVH entry, which skips the
// decompressor) and one initramfs per kernel and /init build.
//
// The /init is cmd/vmtest-init, built on each run with CGO_ENABLED=0 from
// the source next to this command's (or given prebuilt with -init).
//
// Exit status: the command's (128+n for signal n, 127 not found); 124 when
// -timeout killed the VM; 125 when the VM could not run the command (the
// serial console log is printed). A VM whose kernel crashes before the
// command finished, or that has not started the command after
// -boot-timeout, is booted again, up to 5 boots: multi-threaded TCG now and
// then does either, and the command never got a result.
//
// Needs: qemu-system-x86 and, for the backports kernel, apt-get, dpkg-deb,
// depmod (kmod), xz (xz-utils) and zstd. A trivial command takes about 3 s;
// code inside runs 5-20 times slower than on the host.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/scidex/scidex-jail/cmd/vmtest/vmjob"
)

// Exit statuses of vmtest itself.
const (
	exitTimeout = 124
	exitFailed  = 125
)

// basePath is the command's PATH inside: Go's toolchain first, then Debian's.
const basePath = "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// envFlags collects repeated -env K=V.
type envFlags []string

func (e *envFlags) String() string { return strings.Join(*e, " ") }

func (e *envFlags) Set(kv string) error {
	if k, _, ok := strings.Cut(kv, "="); !ok || k == "" {
		return fmt.Errorf("want K=V, got %q", kv)
	}
	*e = append(*e, kv)
	return nil
}

// options are vmtest's flags as plain values.
type options struct {
	Kernel  string
	Cache   string
	Mirror  string
	Init    string
	QEMU    string
	Mem     string
	SMP     int
	Timeout time.Duration
	Boot    time.Duration
	Env     []string
	Append  string
	Prepare bool
	Keep    bool
	Verbose bool
	Args    []string
}

func parseFlags(args []string, usage io.Writer) (options, error) {
	var o options
	var env envFlags
	fs := flag.NewFlagSet("vmtest", flag.ContinueOnError)
	fs.SetOutput(usage)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "usage: vmtest [flags] [--] CMD [ARGS...]\n       vmtest -prepare [-kernel K]\nflags:")
		fs.PrintDefaults()
	}
	fs.StringVar(&o.Kernel, "kernel", KernelAuto, "kernel: auto, backports (Debian 6.12) or 6.1 (installed)")
	fs.StringVar(&o.Cache, "cache", "/var/cache/scidex-vmtest", "cache `dir` for kernels, vmlinux and initramfs")
	fs.StringVar(&o.Mirror, "mirror", "http://deb.debian.org/debian", "Debian mirror `URL` for the backports kernel")
	fs.StringVar(&o.Init, "init", "", "prebuilt static vmtest-init `binary` (default: build it)")
	fs.StringVar(&o.QEMU, "qemu", "qemu-system-x86_64", "QEMU `binary`")
	fs.StringVar(&o.Mem, "mem", "1G", "VM memory (QEMU -m)")
	fs.IntVar(&o.SMP, "smp", 2, "VM CPUs")
	fs.DurationVar(&o.Timeout, "timeout", 20*time.Minute, "kill the VM after this long")
	fs.DurationVar(&o.Boot, "boot-timeout", 90*time.Second, "boot again when the command has not started after this long")
	fs.Var(&env, "env", "set `K=V` inside (repeatable)")
	fs.StringVar(&o.Append, "append", "", "extra kernel command line")
	fs.BoolVar(&o.Prepare, "prepare", false, "fill the caches (download the kernel, build the initramfs); run CMD only if given")
	fs.BoolVar(&o.Keep, "keep", false, "keep the job directory (console log, outputs) and print its path")
	fs.BoolVar(&o.Verbose, "v", false, "log the steps, the timing and the serial console")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.Env, o.Args = env, fs.Args()
	if len(o.Args) == 0 && !o.Prepare {
		fs.Usage()
		return o, errors.New("no command given")
	}
	if o.SMP < 1 || o.Timeout <= 0 || o.Boot <= 0 {
		return o, fmt.Errorf("-smp %d / -timeout %v / -boot-timeout %v: want positive values", o.SMP, o.Timeout, o.Boot)
	}
	return o, nil
}

func main() {
	o, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			os.Exit(0)
		}
		fmt.Fprintf(os.Stderr, "vmtest: %v\n", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	code, err := run(ctx, o)
	if err != nil {
		fmt.Fprintf(os.Stderr, "vmtest: %v\n", err)
	}
	stop()
	os.Exit(code)
}

// maxBoots bounds the boots of one job when the guest kernel crashes or
// hangs before the command starts.
const maxBoots = 5

// run prepares the caches and, given a command, runs it. It returns the
// process exit status.
func run(ctx context.Context, o options) (int, error) {
	start := time.Now()
	logf := func(format string, a ...any) { fmt.Fprintf(os.Stderr, "vmtest: "+format+"\n", a...) }
	vlogf := func(format string, a ...any) {
		if o.Verbose {
			logf(format, a...)
		}
	}
	_, vmlinux, initrd, err := prepare(o, logf)
	if err != nil {
		return exitFailed, err
	}
	vlogf("vmlinux %s, initramfs %s, ready after %v", vmlinux, initrd, time.Since(start).Round(time.Millisecond))
	if len(o.Args) == 0 {
		return 0, nil
	}
	job, err := newJob(o)
	if err != nil {
		return exitFailed, err
	}
	jobDir, err := os.MkdirTemp("", "scidex-vmtest-job-*")
	if err != nil {
		return exitFailed, fmt.Errorf("create job dir: %w", err)
	}
	if o.Keep {
		logf("job directory %s", jobDir)
	} else {
		defer os.RemoveAll(jobDir)
	}
	if err := vmjob.Write(jobDir, job); err != nil {
		return exitFailed, err
	}
	v := vm{QEMU: o.QEMU, Vmlinux: vmlinux, Initramfs: initrd, Append: o.Append, Mem: o.Mem, SMP: o.SMP,
		BootTimeout: o.Boot, JobDir: jobDir, Console: filepath.Join(filepath.Dir(jobDir), filepath.Base(jobDir)+".console")}
	if o.Keep {
		v.Console = filepath.Join(jobDir, "console.log")
	} else {
		defer os.Remove(v.Console)
	}
	boot := time.Now()
	code, err := runBooting(ctx, v, o.Timeout, logf)
	if o.Verbose {
		fmt.Fprint(os.Stderr, v.console()+"\n")
	}
	vlogf("exit %d after %v in the VM, %v in all", code, time.Since(boot).Round(time.Millisecond), time.Since(start).Round(time.Millisecond))
	if errors.Is(err, errTimeout) {
		return exitTimeout, err
	}
	if err != nil {
		return exitFailed, err
	}
	return code, nil
}

// runBooting runs the job in v and boots again, up to maxBoots times in
// all, while the VM failed by itself rather than by the test.
func runBooting(ctx context.Context, v vm, timeout time.Duration, logf func(string, ...any)) (int, error) {
	code, err := v.run(ctx, timeout, os.Stdout, os.Stderr)
	for attempt := 2; attempt <= maxBoots; attempt++ {
		why := v.failedItself(err)
		if why == "" {
			break
		}
		logf("%s, not the test: booting again, attempt %d of %d", why, attempt, maxBoots)
		code, err = v.run(ctx, timeout, os.Stdout, os.Stderr)
	}
	return code, err
}

// prepare finds the kernel and fills the caches under an exclusive lock on
// the cache, so that runners started together (go test -exec runs packages
// in parallel) do not fetch or extract the same thing twice.
func prepare(o options, logf func(string, ...any)) (k Kernel, vmlinux, initrd string, err error) {
	if err := os.MkdirAll(o.Cache, 0o755); err != nil {
		return k, "", "", fmt.Errorf("create cache dir: %w", err)
	}
	lock, err := os.OpenFile(filepath.Join(o.Cache, ".lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return k, "", "", fmt.Errorf("open cache lock: %w", err)
	}
	defer lock.Close() // closing drops the lock
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		return k, "", "", fmt.Errorf("lock cache %s: %w", o.Cache, err)
	}
	k, err = findKernel(o.Kernel, o.Cache, o.Mirror, logf)
	if err != nil {
		return k, "", "", err
	}
	logf("kernel %s %s (%s)", k.Flavour, k.Release, k.Vmlinuz)
	if vmlinux, err = cachedVmlinux(k, o.Cache); err != nil {
		return k, "", "", err
	}
	initBin, err := initBinary(o.Init, o.Cache)
	if err != nil {
		return k, "", "", err
	}
	if initrd, err = cachedInitramfs(k, o.Cache, initBin); err != nil {
		return k, "", "", err
	}
	return k, vmlinux, initrd, nil
}

// newJob describes the command for /init: the environment, the host's
// working directory and the paths under /tmp that must stay visible.
func newJob(o options) (vmjob.Job, error) {
	wd, err := os.Getwd()
	if err != nil {
		return vmjob.Job{}, fmt.Errorf("get working directory: %w", err)
	}
	env := []string{"PATH=" + basePath, "HOME=/root", "LANG=C.UTF-8", "TERM=dumb",
		"SCIDEX_IN_VM=1", "SCIDEX_REQUIRE_CGROUP2=1"}
	env = mergeEnv(env, o.Env)
	keep := []string{wd}
	if filepath.IsAbs(o.Args[0]) {
		keep = append(keep, filepath.Dir(o.Args[0]))
	}
	return vmjob.Job{Args: o.Args, Env: env, Dir: wd, Hostname: "scidex-vmtest", Keep: keep}, nil
}

// mergeEnv returns base with each K=V of extra replacing base's K or added.
func mergeEnv(base, extra []string) []string {
	out := append([]string{}, base...)
	for _, kv := range extra {
		k, _, _ := strings.Cut(kv, "=")
		replaced := false
		for i, old := range out {
			if strings.HasPrefix(old, k+"=") {
				out[i], replaced = kv, true
			}
		}
		if !replaced {
			out = append(out, kv)
		}
	}
	return out
}
