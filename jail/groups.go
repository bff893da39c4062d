package jail

import (
	"github.com/scidex/scidex-jail/jail/promise"
	"github.com/scidex/scidex-jail/jail/report"
	"github.com/scidex/scidex-jail/jail/view"
)

// A rootless run keeps its caller's supplementary groups. An unprivileged
// process may write a user namespace's gid_map only after writing "deny"
// to its setgroups file, and setgroups then stays denied in it for good:
// dropping a group could otherwise gain access that a "deny this group"
// mode (0707) refuses (CVE-2014-8989). So the analysis holds them too,
// shown inside as the overflow gid, and the kernel still grants what they
// grant on host files. bubblewrap keeps them the same way.
//
// What keeps that in bounds is the view: the mount view shows only the
// run's paths and Landlock allows only the listed ones, whatever the
// groups say; a path the view exposes that one of the groups opens but
// others cannot makes the run refuse to start (view.CheckExposure). The init
// checks the forking thread holds exactly the groups planned here.

// whyGroupsKept is the report's reason, in one sentence.
const whyGroupsKept = "an unprivileged user namespace cannot drop supplementary groups (setgroups is denied in it): the analysis keeps the caller's"

// planGroups is what a rootless run keeps of the caller's groups h.Groups,
// each with the gid it shows inside: the run's own for the caller's
// primary gid (mapped to InsideUID), the overflow gid for the others.
// Root runs clear them: nil.
func planGroups(ids IDMap, h view.HostView) []report.HostGroup {
	if ids.Setgroups {
		return nil
	}
	var out []report.HostGroup
	for _, g := range h.Groups {
		g.InsideGID = h.OverflowGID
		if g.GID == ids.HostGID {
			g.InsideGID = InsideUID
		}
		out = append(out, g)
	}
	return out
}

// insideGroups are the groups' ids inside: what the init checks the
// forking thread holds.
func insideGroups(gs []report.HostGroup) []int {
	var out []int
	for _, g := range gs {
		out = append(out, g.InsideGID)
	}
	return out
}

// identityReport is the report's enforced.identity for ids, with held the
// layers that hold the filesystem promises: the caller's primary gid is
// the run's own gid (host_gid), not an extra group, and is left out.
func identityReport(ids IDMap, held []promise.Layer) report.IdentityReport {
	r := report.IdentityReport{HostGroupsKept: []report.HostGroup{}, HostIDs: hostIDsFrom(ids)}
	for _, g := range ids.Groups {
		if g.GID != ids.HostGID {
			r.HostGroupsKept = append(r.HostGroupsKept, g)
		}
	}
	if len(r.HostGroupsKept) > 0 {
		r.Why, r.HeldBy = whyGroupsKept, held
	}
	return r
}
