//go:build linux

package landlock

import (
	"errors"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProbeABI asks the real kernel. Landlock is required on the machines
// this runs on (ABI 7 on the development hosts), so an error is a failure,
// not a skip.
func TestProbeABI(t *testing.T) {
	abi, err := ProbeABI()
	if err != nil {
		t.Fatalf("ProbeABI() = %d, %v, want Landlock enabled (kernel config or lsm= boot parameter)", abi, err)
	}
	if abi < 1 {
		t.Fatalf("ProbeABI() = %d, nil, want >= 1", abi)
	}
	reported, _, errno := unix.Syscall(unix.SYS_LANDLOCK_CREATE_RULESET, 0, 0, unix.LANDLOCK_CREATE_RULESET_VERSION)
	if errno != 0 || abi > int(reported) {
		t.Errorf("ProbeABI() = %d, want <= the kernel's own answer %d (errno %v)", abi, reported, errno)
	}
}

func TestUnsupportedError(t *testing.T) {
	tests := []struct {
		name string
		err  *UnsupportedError
		want []string
		is   error
	}{
		{"disabled at boot", &UnsupportedError{Err: unix.EOPNOTSUPP}, []string{"not enabled at boot", "lsm="}, unix.EOPNOTSUPP},
		{"not built", &UnsupportedError{Err: unix.ENOSYS, Needed: 5}, []string{"no Landlock", "CONFIG_SECURITY_LANDLOCK", "Linux >= 6.10"}, unix.ENOSYS},
		{"old kernel", &UnsupportedError{Found: 4, Needed: 6, Lost: []string{"scope.signal (needs ABI 6): x"}}, []string{"ABI 4", "needs ABI 6", "scope.signal", "Linux >= 6.12", "AllowDegraded"}, nil},
		{"erratum", &UnsupportedError{Found: 5, Needed: 6, Reason: kernel{abi: 5, reported: 7}.reason()}, []string{"reports ABI 7", "erratum"}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var err error = tt.err
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("errors.Is(%v, ErrUnsupported) = false, want true", err)
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("errors.Is(%v, %v) = false, want true", err, tt.is)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("%#v.Error() = %q, want it to contain %q", tt.err, err, w)
				}
			}
		})
	}
}
