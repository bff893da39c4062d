package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/scidex/scidex-jail/cmd/vmtest/vmjob"
)

// kernelCmdline is fixed but for -append. cgroup_no_v1=all leaves every
// controller to cgroup2; reboot=t resets through a triple fault, the fastest
// way out; panic=-1 turns a panic into a reset, and oops=panic, softlockup_panic
// and panic_on_rcu_stall turn a guest kernel that is broken but still up
// into a panic, so that QEMU exits at once and the runner boots again
// instead of waiting for -timeout; the i8042 options skip a PS/2 probe that
// costs time under TCG; mitigations are pointless in a throw-away VM.
// Landlock needs no lsm=: Debian's CONFIG_LSM lists it first on both 6.1 and
// 6.12.
const kernelCmdline = "console=ttyS0 panic=-1 reboot=t oops=panic softlockup_panic=1 sysctl.kernel.panic_on_rcu_stall=1 " +
	"cgroup_no_v1=all cryptomgr.notests quiet " +
	"i8042.noaux i8042.nomux i8042.nopnp i8042.dumbkbd mitigations=off rdinit=/init"

// vm is one QEMU invocation.
type vm struct {
	QEMU      string
	Vmlinux   string
	Initramfs string
	Append    string // extra kernel command line
	Mem       string
	SMP       int
	JobDir    string
	Console   string // file receiving the serial console
	// BootTimeout bounds the time from QEMU's start to the init's started
	// file. A boot takes 3 s on an idle host, 10-20 s beside other tests;
	// multi-threaded TCG now and then hangs before the init writes a thing.
	BootTimeout time.Duration
}

// args is QEMU's command line. TCG, not KVM: /dev/kvm on these hosts is PVM,
// slower than emulation for a stock kernel. q35, not microvm: microvm hung in
// 3 of 8 boots. The uncompressed vmlinux boots through its PVH entry,
// skipping the bzImage decompressor (about 4 s under TCG).
func (v vm) args() []string {
	cmdline := kernelCmdline
	if v.Append != "" {
		cmdline += " " + v.Append
	}
	return []string{
		"-nodefaults", "-no-user-config", "-display", "none", "-monitor", "none",
		"-accel", "tcg,thread=multi", "-cpu", "max", "-machine", "q35",
		"-smp", strconv.Itoa(v.SMP), "-m", v.Mem, "-no-reboot",
		"-kernel", v.Vmlinux, "-initrd", v.Initramfs, "-append", cmdline,
		"-serial", "file:" + v.Console,
		"-fsdev", "local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap",
		"-device", "virtio-9p-pci,fsdev=hostroot,mount_tag=" + vmjob.HostRootTag,
		"-fsdev", "local,id=job,path=" + v.JobDir + ",security_model=none",
		"-device", "virtio-9p-pci,fsdev=job,mount_tag=" + vmjob.Tag,
	}
}

// errTimeout is returned by run when -timeout killed QEMU; errBootHang when
// the command had not started after BootTimeout.
var (
	errTimeout  = errors.New("timed out")
	errBootHang = errors.New("the VM did not start the command")
)

// run boots the VM and copies the job's stdout and stderr to the given
// writers while it runs. It returns the command's exit status, or an error
// (with the console log) when the VM ended without one.
func (v vm) run(ctx context.Context, timeout time.Duration, stdout, stderr io.Writer) (int, error) {
	for _, f := range []string{vmjob.StdoutFile, vmjob.StderrFile} {
		if err := os.WriteFile(filepath.Join(v.JobDir, f), nil, 0o666); err != nil {
			return 0, fmt.Errorf("create job output file: %w", err)
		}
	}
	_ = os.Remove(filepath.Join(v.JobDir, vmjob.StartedFile)) // from an earlier boot
	ctx, hung := context.WithCancelCause(ctx)
	defer hung(nil)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var qemuOut bytes.Buffer
	cmd := exec.CommandContext(ctx, v.QEMU, v.args()...)
	cmd.Stdout, cmd.Stderr = &qemuOut, &qemuOut
	// QEMU goes with the runner, also when go test's timeout kills it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s: %w", v.QEMU, err)
	}
	done := make(chan struct{})
	followed := make(chan error, 2)
	go func() { followed <- follow(filepath.Join(v.JobDir, vmjob.StdoutFile), stdout, done) }()
	go func() { followed <- follow(filepath.Join(v.JobDir, vmjob.StderrFile), stderr, done) }()
	go func() {
		if bootHung(filepath.Join(v.JobDir, vmjob.StartedFile), v.BootTimeout, done) {
			hung(errBootHang)
		}
	}()
	waitErr := cmd.Wait()
	close(done)
	for range 2 {
		if err := <-followed; err != nil {
			return 0, err
		}
	}
	if context.Cause(ctx) == errBootHang {
		return 0, fmt.Errorf("%w after %v%s", errBootHang, v.BootTimeout, v.console())
	}
	if ctx.Err() == context.DeadlineExceeded {
		return 0, fmt.Errorf("VM %w after %v%s", errTimeout, timeout, v.console())
	}
	if ctx.Err() != nil {
		return 0, fmt.Errorf("VM stopped: %w", ctx.Err())
	}
	if waitErr != nil {
		return 0, fmt.Errorf("qemu: %w: %s%s", waitErr, bytes.TrimSpace(qemuOut.Bytes()), v.console())
	}
	if b, err := os.ReadFile(filepath.Join(v.JobDir, vmjob.InitErrorFile)); err == nil {
		return 0, fmt.Errorf("vmtest-init failed: %s%s", bytes.TrimSpace(b), v.console())
	}
	b, err := os.ReadFile(filepath.Join(v.JobDir, vmjob.ExitFile))
	if err != nil {
		return 0, fmt.Errorf("VM ended without an exit status (%w)%s", err, v.console())
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0, fmt.Errorf("parse exit status %q: %w", b, err)
	}
	return code, nil
}

// bootHung reports whether timeout passed without path appearing; it
// returns false as soon as path exists or done is closed.
func bootHung(path string, timeout time.Duration, done <-chan struct{}) bool {
	deadline := time.After(timeout)
	for {
		if _, err := os.Stat(path); err == nil {
			return false
		}
		select {
		case <-done:
			return false
		case <-deadline:
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// failedItself says why the VM itself, not the command, failed with err:
// it hung before the command started, or the guest kernel crashed before
// the command finished. It returns "" when the failure may be the command's.
func (v vm) failedItself(err error) string {
	switch {
	case err == nil:
		return ""
	case errors.Is(err, errBootHang):
		return fmt.Sprintf("the VM had not started the command after %v (console: %q; a TCG hang)", v.BootTimeout, v.consoleTail())
	case v.guestCrashed():
		return fmt.Sprintf("the guest kernel crashed before the command finished (%s; a TCG race)", v.crashSite())
	}
	return ""
}

// guestCrashed reports whether the serial console shows a guest kernel
// oops or panic, and no exit status was written: a crash of the VM itself.
func (v vm) guestCrashed() bool {
	if _, err := os.Stat(filepath.Join(v.JobDir, vmjob.ExitFile)); err == nil {
		return false
	}
	b, err := os.ReadFile(v.Console)
	if err != nil {
		return false
	}
	return bytes.Contains(b, []byte("Oops:")) || bytes.Contains(b, []byte("Kernel panic")) || bytes.Contains(b, []byte("BUG:"))
}

// crashSite is the console's first "RIP:" line, where the guest crashed.
func (v vm) crashSite() string {
	b, _ := os.ReadFile(v.Console)
	for _, l := range strings.Split(string(b), "\n") {
		if i := strings.Index(l, "RIP:"); i >= 0 {
			return strings.TrimSpace(l[i:])
		}
	}
	return "no RIP line on the console"
}

// consoleTail is the console's last line, "" when it is empty.
func (v vm) consoleTail() string {
	b, _ := os.ReadFile(v.Console)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return lines[len(lines)-1]
}

// console returns the serial console log for an error message.
func (v vm) console() string {
	b, err := os.ReadFile(v.Console)
	if err != nil {
		return fmt.Sprintf("\n(no console log: %v)", err)
	}
	const max = 64 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return "\n--- serial console ---\n" + string(b) + "--- end of console ---"
}

// follow copies what is appended to path to w until done is closed, then
// copies the rest. The guest writes the file through an uncached 9p mount,
// so the host sees each write when it returns; a 50 ms poll is plenty for
// log output and needs nothing from the host file system.
func follow(path string, w io.Writer, done <-chan struct{}) error {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("follow job output: %w", err)
	}
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		n, err := f.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return fmt.Errorf("copy job output: %w", werr)
			}
			continue
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read job output %s: %w", path, err)
		}
		select {
		case <-done:
			// QEMU has exited: nothing more will be written, read to EOF.
			_, err := io.CopyBuffer(w, f, buf)
			if err != nil {
				return fmt.Errorf("copy job output: %w", err)
			}
			return nil
		case <-time.After(50 * time.Millisecond):
		}
	}
}
