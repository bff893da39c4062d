package hostcheck

import (
	"errors"

	"github.com/scidex/scidex-jail/cgroupfs"
)

// CgroupInfo is what the host offers for run leaves, as [ProbeCgroup]
// found it.
type CgroupInfo struct {
	Version     int      // 2 or 1: the backend a run would use; 0 when neither is usable
	Parents     []string // directories leaves would go in: one on v2, one per hierarchy on v1
	Controllers []string // controllers leaves could use there
}

// ProbeCgroup reports what the host offers for leaves below parent ("" =
// this process's own cgroup) without creating anything. When no backend is
// usable, or the parent is not writable, the error says why and the info
// holds what was found up to that point.
func ProbeCgroup(parent string) (CgroupInfo, error) {
	info, err := cgroupfs.Probe(parent)
	return CgroupInfo{Version: info.Version, Parents: info.Parents, Controllers: info.Controllers}, err
}

// CgroupNeed is a controller a run's leaf needs (cgroupfs.Need): its name
// on the host's version, the keys of the leaf's limits it reads, and why
// every leaf needs it ("" when only those limits being set do).
type CgroupNeed = cgroupfs.Need

// CgroupNeeds are the controllers a leaf with limits l needs on cgroup
// version version (0: not known, named as on v2), in the order cgroupfs
// lists them: what a run would refuse to go without.
func CgroupNeeds(version int, l cgroupfs.Limits) []CgroupNeed { return cgroupfs.Needs(version, l) }

// MissingControllers is the error a run with limits l would meet for the
// controllers info lacks, with its fix (see [Explain]); nil when all are
// there.
func MissingControllers(info CgroupInfo, l cgroupfs.Limits) error {
	return cgroupfs.Info{Version: info.Version, Parents: info.Parents, Controllers: info.Controllers}.Missing(l)
}

// Explain turns a missing-feature error of the facilities into what was
// found and how to fix it; any other error is its own text, with a fix
// that points at it.
func Explain(err error) (found, fix string) {
	var cg *cgroupfs.UnsupportedError
	if errors.As(err, &cg) {
		fix = cg.Fix
		if fix == "" {
			fix = "see the cgroupfs package documentation"
		}
		return cg.Feature + " not available: " + cg.Found, fix
	}
	return err.Error(), "see the error above; it names what failed"
}

// RootlessV1Fix is how this account gets cgroups on this cgroup v1 host, or
// does without (cgroupfs.RootlessV1Fix); "" without cgroup v1.
func RootlessV1Fix() string { return cgroupfs.RootlessV1Fix() }
