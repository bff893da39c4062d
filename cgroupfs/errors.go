package cgroupfs

import "errors"

// ErrUnsupported is matched (errors.Is) by every error that means the host
// lacks something this package needs: a cgroup filesystem, a controller, or
// write access to the parent cgroup.
var ErrUnsupported = errors.New("cgroup feature not supported")

// UnsupportedError says which feature is missing, what the probe found and
// how to get the feature. It matches ErrUnsupported.
type UnsupportedError struct {
	Feature string // e.g. "cgroup v2 memory controller"
	Found   string // e.g. "/sys/fs/cgroup/unified has controllers [hugetlb]"
	Fix     string // how to get it
}

func (e *UnsupportedError) Error() string {
	msg := e.Feature + " not available: " + e.Found
	if e.Fix != "" {
		msg += " (" + e.Fix + ")"
	}
	return msg
}

// Is makes errors.Is(err, ErrUnsupported) true.
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }

// Fixes shared by several errors.
const (
	fixDelegateV2 = "run the jail under a delegated cgroup: a systemd unit or scope with Delegate=yes " +
		"(systemd-run --scope -p Delegate=yes ...), or `chown -R USER` of a subtree and pass it as the parent; " + FixOptOut
	// Container runtimes mount the container's cgroup read-only unless told
	// otherwise.
	fixReadOnlyMount = "the cgroup file system is mounted read-only, as container runtimes do: the container must mount " +
		"its cgroup (its cgroup namespace's root) read-write and own it (CRI-O with pod user namespaces: annotation " +
		"io.kubernetes.cri-o.cgroup2-mount-hierarchy-rw; LXC and systemd-nspawn delegate it), or run one analysis per " +
		"container with the container's own limits and --unsafe-disable cgroup"
	// As root (a container's root, most often); an account's is
	// fixAccessV1Rootless.
	fixAccessV1 = "cgroup v1 is not writable here even as root: run where the cgroup mounts are writable, or boot with " +
		"systemd.unified_cgroup_hierarchy=1 for cgroup v2; " + FixOptOut
)
