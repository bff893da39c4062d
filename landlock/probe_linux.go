package landlock

import (
	"golang.org/x/sys/unix"

	"github.com/scidex/scidex-jail/internal/wrap"
)

func probeKernel() (kernel, error) {
	v, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 {
		// ENOSYS: built without CONFIG_SECURITY_LANDLOCK (or older than
		// 5.13); EOPNOTSUPP: built in but not in the lsm= list at boot.
		return kernel{}, &UnsupportedError{Err: wrap.Error("landlock_create_ruleset(VERSION)", errno)}
	}
	k := kernel{abi: int(v), reported: int(v)}
	if k.abi >= 6 {
		errata, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_ERRATA)
		// Kernels that predate the errata query answer EINVAL and
		// have none of the fixes.
		if errno != 0 || errata&(1<<1) == 0 {
			k.abi = 5
		}
	}
	return k, nil
}
