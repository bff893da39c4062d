package landlock

import (
	"errors"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrUnsupported is the sentinel every missing-kernel-feature error of this
// package matches with errors.Is. The concrete error is an
// *UnsupportedError, which says what was found and how to get the rest.
var ErrUnsupported = errors.New("landlock: kernel does not support the policy")

// UnsupportedError says that the running kernel cannot enforce a policy in
// full: which ABI it offers, which ABI the policy needs, what would go
// unenforced, and how to get it.
type UnsupportedError struct {
	Found  int      // effective Landlock ABI of the running kernel; 0: no Landlock
	Needed int      // ABI the policy needs to be enforced in full; 0: unknown (probe only)
	Lost   []string // what the kernel would not enforce, one entry per feature
	Reason string   // why the kernel offers less than it reports, when known
	Err    error    // the errno of the probe, when Landlock is missing altogether
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Unwrap exposes the probe's errno (ENOSYS, EOPNOTSUPP) to errors.Is.
func (e *UnsupportedError) Unwrap() error { return e.Err }

func (e *UnsupportedError) Error() string {
	return "landlock: " + e.Finding() + "; to get it: " + e.hint()
}

// Fix says how to get what is missing from the kernel: the tail of Error,
// without the package's own AllowDegraded escape (callers that offer a way
// to run with less name their own).
func (e *UnsupportedError) Fix() string { return e.kernelHint() }

// Finding says what was found, without the fix: the ABI, why it is less
// than reported, what the policy needs and what would be lost.
func (e *UnsupportedError) Finding() string {
	var b strings.Builder
	switch {
	case e.Found == 0 && errors.Is(e.Err, unix.EOPNOTSUPP):
		b.WriteString("Landlock is built into this kernel but not enabled at boot (" + e.Err.Error() + ")")
	case e.Found == 0 && e.Err != nil:
		b.WriteString("this kernel has no Landlock (" + e.Err.Error() + ")")
	case e.Found == 0:
		b.WriteString("this kernel has no Landlock")
	default:
		b.WriteString("kernel offers Landlock ABI " + strconv.Itoa(e.Found))
	}
	if e.Reason != "" {
		b.WriteString(" (" + e.Reason + ")")
	}
	if e.Needed > 0 {
		b.WriteString(", policy needs ABI " + strconv.Itoa(e.Needed))
	}
	if len(e.Lost) > 0 {
		b.WriteString("; would lose: " + strings.Join(e.Lost, "; "))
	}
	return b.String()
}

// hint says how to get the ABI the policy needs.
func (e *UnsupportedError) hint() string {
	if e.Found == 0 {
		return e.kernelHint() + "; or set AllowDegraded to run without Landlock"
	}
	return e.kernelHint() + "; or set AllowDegraded to run with what this kernel enforces"
}

// kernelHint says which kernel, built and booted how, gives the ABI needed.
func (e *UnsupportedError) kernelHint() string {
	need := max(e.Needed, 1)
	kernel := "a newer Linux"
	if v, ok := abiKernel[need]; ok {
		kernel = "Linux >= " + v
	}
	boot := "with landlock in the lsm= boot parameter (or CONFIG_LSM), e.g. lsm=landlock,lockdown,yama,integrity,apparmor"
	switch {
	case e.Found == 0 && errors.Is(e.Err, unix.EOPNOTSUPP):
		return "boot " + boot
	case e.Found == 0:
		return "run " + kernel + " (Landlock ABI " + strconv.Itoa(need) + ") built with CONFIG_SECURITY_LANDLOCK=y and booted " + boot
	default:
		return "run " + kernel + " (Landlock ABI " + strconv.Itoa(need) + ")"
	}
}

// abiKernel is the first mainline release offering each Landlock ABI.
var abiKernel = map[int]string{
	1: "5.13", // filesystem access control
	2: "5.19", // refer: rename and link across directories
	3: "6.2",  // truncate
	4: "6.7",  // TCP bind and connect
	5: "6.10", // ioctl on device files
	6: "6.12", // scoping of signals and abstract unix sockets
	7: "6.15", // audit logging flags
}

// KernelFor names the kernel that brings a Landlock ABI, for messages that
// say how to get it: "Linux >= 6.12 (Landlock ABI 6)".
func KernelFor(abi int) string {
	if v, ok := abiKernel[abi]; ok {
		return "Linux >= " + v + " (Landlock ABI " + strconv.Itoa(abi) + ")"
	}
	return "a Linux with Landlock ABI " + strconv.Itoa(abi)
}
