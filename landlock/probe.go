package landlock

import "strconv"

// kernel is what the probe found.
type kernel struct {
	abi      int // effective ABI: what Restrict relies on
	reported int // ABI the kernel reports
}

// probe finds the running kernel's Landlock ABI. Tests replace it to play
// an older kernel; nothing else does.
var probe = probeKernel

// ProbeABI returns the Landlock ABI of the running kernel, asking it with
// landlock_create_ruleset(NULL, 0, LANDLOCK_CREATE_RULESET_VERSION). When
// Landlock is missing or disabled at boot it returns 0 and an error that
// matches ErrUnsupported.
//
// A kernel reporting ABI 6 or later without the fix for Landlock erratum 2
// (signal scoping, fixed in 6.12 stable kernels) counts as ABI 5, as it
// does for go-landlock: signal scoping is not relied on without the fix.
func ProbeABI() (int, error) {
	k, err := probe()
	return k.abi, err
}

// reason explains a difference between the reported and the effective ABI.
func (k kernel) reason() string {
	if k.reported != k.abi {
		return "the kernel reports ABI " + strconv.Itoa(k.reported) + " but lacks the fix for Landlock erratum 2 (signal scoping), so it counts as ABI " + strconv.Itoa(k.abi) + "; update to a stable kernel with the fix"
	}
	return ""
}
